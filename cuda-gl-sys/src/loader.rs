//! Opening the CUDA driver library once per process.

use crate::bindings::Driver;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable that names the driver library to open instead of the defaults.
pub const DRIVER_PATH_ENV: &str = "CUDA_GL_DRIVER_PATH";

/// The oldest driver API version the bindings support: CUDA 12.0 (driver R525).
pub const MIN_DRIVER_VERSION: i32 = 12000;

/// One library that [`driver()`] or [`load_from()`] tried to open, and why it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The name or path passed to the dynamic loader.
    pub path: PathBuf,
    /// What the dynamic loader said.
    pub reason: String,
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

fn list(attempts: &[Attempt]) -> String {
    attempts
        .iter()
        .map(|a| format!("\n  - {a}"))
        .collect::<String>()
}

/// Why the CUDA driver library could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate library could be opened.
    #[error(
        "the NVIDIA CUDA driver library could not be opened; install the NVIDIA driver \
         (R525 or newer) or set {DRIVER_PATH_ENV} to the full path of libcuda.so.1. Tried:{}",
        list(.tried)
    )]
    NotFound {
        /// Every library tried, in order, with the loader's reason.
        tried: Vec<Attempt>,
    },
    /// The library opened but lacks an entry point that CUDA 12.0 has: it is not a CUDA driver, or
    /// it is older than 12.0.
    #[error(
        "{path} opened, but it is not a CUDA 12.0+ driver library: {reason}. Install the NVIDIA \
         driver R525 or newer, or point {DRIVER_PATH_ENV} at its libcuda.so.1"
    )]
    MissingSymbol {
        /// The library that opened.
        path: PathBuf,
        /// The loader's message, which names the symbol.
        reason: String,
    },
    /// `cuDriverGetVersion` failed.
    #[error("cuDriverGetVersion in {path} failed with CUresult {code}")]
    Version {
        /// The library that opened.
        path: PathBuf,
        /// The raw `CUresult`.
        code: u32,
    },
    /// The driver is older than CUDA 12.0.
    #[error(
        "the CUDA driver in {path} supports CUDA {}.{}, but cuda-gl needs 12.0 or newer; \
         update the NVIDIA driver to R525 or newer",
        .version / 1000, (.version % 1000) / 10
    )]
    TooOld {
        /// The library that opened.
        path: PathBuf,
        /// What `cuDriverGetVersion` returned (e.g. 11080 for 11.8).
        version: i32,
    },
}

/// The library names tried when [`DRIVER_PATH_ENV`] is not set, in order.
pub fn default_library_names() -> &'static [&'static str] {
    if cfg!(windows) {
        &["nvcuda.dll"]
    } else {
        &["libcuda.so.1", "libcuda.so"]
    }
}

struct Loaded {
    driver: Driver,
    version: i32,
}

static DRIVER: OnceLock<Result<Loaded, LoadError>> = OnceLock::new();

/// The process-wide driver: opened on first use from `$CUDA_GL_DRIVER_PATH` when set, otherwise
/// from [`default_library_names()`], and shared by every caller afterwards.
///
/// The first outcome is kept: a failure is reported again, unchanged, on every later call.
///
/// # Errors
/// [`LoadError`] when no library opens, a symbol is missing, or the driver is older than 12.0.
pub fn driver() -> Result<&'static Driver, LoadError> {
    DRIVER
        .get_or_init(|| {
            let candidates: Vec<PathBuf> = match std::env::var_os(DRIVER_PATH_ENV) {
                Some(path) if !path.is_empty() => vec![PathBuf::from(path)],
                _ => default_library_names().iter().map(PathBuf::from).collect(),
            };
            // SAFETY: (1), (2) of `load_from`: the default names are the NVIDIA driver's own
            // library, and $CUDA_GL_DRIVER_PATH is chosen by whoever runs the program, who
            // controls what the dynamic loader opens anyway (LD_LIBRARY_PATH, LD_PRELOAD).
            unsafe { open_first(&candidates) }
        })
        .as_ref()
        .map(|loaded| &loaded.driver)
        .map_err(Clone::clone)
}

/// The driver API version of the process-wide driver (e.g. 13000 for CUDA 13.0).
///
/// # Errors
/// As [`driver()`].
pub fn driver_version() -> Result<i32, LoadError> {
    driver()?;
    match DRIVER.get() {
        Some(Ok(loaded)) => Ok(loaded.version),
        Some(Err(e)) => Err(e.clone()),
        None => Err(LoadError::NotFound { tried: Vec::new() }),
    }
}

/// Opens a driver library from an explicit path, independent of the process-wide one.
///
/// Useful to test a specific driver build. The returned [`Driver`] must outlive every handle
/// created through it.
///
/// # Safety
/// 1. `path` names a genuine CUDA driver library (`libcuda.so`): every symbol it exports under a
///    driver API name has the signature of the CUDA 12.0 driver API, because [`Driver`] calls
///    them through those signatures (`cuDriverGetVersion` already, here).
/// 2. Loading the library runs its initialisers (and those of the libraries it depends on): the
///    caller vouches that running them in this process is sound.
///
/// The process-wide [`driver()`] opens the default names or `$CUDA_GL_DRIVER_PATH`, which the
/// person running the program chose, as the dynamic loader trusts `LD_LIBRARY_PATH`.
///
/// # Errors
/// [`LoadError`] as for [`driver()`].
pub unsafe fn load_from(path: impl AsRef<Path>) -> Result<Driver, LoadError> {
    // SAFETY: (1), (2) are the caller's.
    unsafe { open_first(&[path.as_ref().to_path_buf()]) }.map(|loaded| loaded.driver)
}

/// Opens the first candidate that loads and checks it.
///
/// # Safety
/// Every candidate satisfies (1) and (2) of [`load_from`].
unsafe fn open_first(candidates: &[PathBuf]) -> Result<Loaded, LoadError> {
    let mut tried = Vec::new();
    for path in candidates {
        // SAFETY: (2): running the library's initialisers is sound (the caller's); the library is
        // kept open for as long as the `Driver` that owns it.
        let library = match unsafe { libloading::Library::new(path) } {
            Ok(library) => library,
            Err(e) => {
                tried.push(Attempt {
                    path: path.clone(),
                    reason: e.to_string(),
                });
                continue;
            }
        };
        // SAFETY: (1): every symbol is resolved with the signature bindgen generated from the CUDA
        // 12.0 headers, which is the C ABI a CUDA driver exports under that name.
        let driver =
            unsafe { Driver::from_library(library) }.map_err(|e| LoadError::MissingSymbol {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        let mut version = 0;
        // SAFETY: (1): the symbol is the driver's; `version` is a valid out-pointer, and
        // cuDriverGetVersion needs no cuInit.
        let rc = unsafe { driver.cuDriverGetVersion(&mut version) };
        if !rc.is_success() {
            return Err(LoadError::Version {
                path: path.clone(),
                code: rc.0,
            });
        }
        if version < MIN_DRIVER_VERSION {
            return Err(LoadError::TooOld {
                path: path.clone(),
                version,
            });
        }
        return Ok(Loaded { driver, version });
    }
    Err(LoadError::NotFound { tried })
}
