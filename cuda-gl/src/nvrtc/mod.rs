//! CUDA C++ compiled to PTX at run time with NVRTC, for kernels of your own crate without a
//! build step.
//!
//! NVRTC is opened at run time like the driver: `$CUDA_GL_NVRTC_PATH` when set, otherwise
//! `libnvrtc.so.12`, `libnvrtc.so.13`, then `libnvrtc.so` from the loader's search path. It
//! comes with the CUDA toolkit, or from PyPI (`pip install nvidia-cuda-nvrtc-cu12`, which puts
//! `nvidia/cuda_nvrtc/lib/libnvrtc.so.12` into site-packages). Nothing is opened until the first
//! compilation, and the crate builds without it.
//!
//! ```no_run
//! use cuda_gl::{Context, Device, LaunchConfig, Module, Stream, StreamFlags};
//!
//! # fn main() -> cuda_gl::Result<()> {
//! const SRC: &str = r#"
//! extern "C" __global__ void scale(float* v, unsigned n, float k) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) v[i] *= k;
//! }"#;
//! let ctx = Context::new(&Device::get(0)?)?;
//! let module = Module::from_cuda_source(&ctx, SRC, OPTIONS)?; // the options below
//! # const OPTIONS: &[&str] = &["--gpu-architecture=compute_75", "--std=c++17"];
//! let scale = module.function("scale")?;
//! # let _ = (scale, LaunchConfig::for_elements(1), Stream::new(&ctx, StreamFlags::NonBlocking)?);
//! # Ok(())
//! # }
//! ```
//!
//! Kernels meant for [`Module::function`] are `extern "C"`, so their names are not mangled.
//!
//! # Options
//!
//! The recommended set, what cuda-gl's own kernels are compiled with (`cargo xtask ptx`):
//!
//! ```text
//! &["--gpu-architecture=compute_75", "--std=c++17"]
//! ```
//!
//! `compute_75` (Turing) is the oldest virtual architecture that NVRTC 13 still has, so one set
//! compiles with NVRTC 12 and 13 alike; its PTX every driver of that CUDA major version
//! JIT-compiles for the GPU it runs on, Turing and newer. (Without the option each NVRTC picks
//! its own oldest target: NVRTC 12's `compute_52` is gone from NVRTC 13.) Pass a newer
//! `compute_XY` only for features that need it. `--std=c++17` pins the dialect that NVRTC 12
//! and 13 default to. A PTX newer than the driver is refused when loading, with
//! [`Error::PtxTooNew`].
//!
//! The source sees NVRTC's built-in headers only (no toolkit is needed, and none is searched
//! unless an `--include-path` names it). They declare what a kernel writing cuda-gl's
//! surfaces needs, with no `#include`: the vector types and their `make_*` functions
//! (`uchar4`, `make_uchar4`, `float4`), `cudaSurfaceObject_t`, and the surface functions
//! `surf2Dwrite` and `surf2Dread` (cuda-gl's kernels and examples use them so, compiled with
//! NVRTC 12.0).

mod api;

use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::module::Module;
use api::{Failure, Nvrtc};
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The environment variable naming the NVRTC library to open instead of searching.
pub const NVRTC_PATH_ENV: &str = "CUDA_GL_NVRTC_PATH";

/// The names searched, in order, when [`NVRTC_PATH_ENV`] is not set.
const NAMES: &[&str] = &["libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so"];

/// The program name NVRTC puts in its log.
const PROGRAM_NAME: &CStr = c"cuda_gl_source.cu";

/// NVRTC, opened once per process; the error lists every library tried.
fn nvrtc() -> Result<&'static Nvrtc> {
    static NVRTC: OnceLock<std::result::Result<Nvrtc, Vec<String>>> = OnceLock::new();
    NVRTC
        .get_or_init(open)
        .as_ref()
        .map_err(|tried| Error::NvrtcUnavailable {
            tried: tried.clone(),
        })
}

fn open() -> std::result::Result<Nvrtc, Vec<String>> {
    let candidates: Vec<PathBuf> = match std::env::var_os(NVRTC_PATH_ENV) {
        Some(path) => vec![PathBuf::from(path)],
        None => NAMES.iter().map(PathBuf::from).collect(),
    };
    let mut tried = Vec::new();
    for path in candidates {
        match Nvrtc::open(path.clone()) {
            Ok(nvrtc) => return Ok(nvrtc),
            Err(e) => tried.push(format!("{}: {e}", path.display())),
        }
    }
    Err(tried)
}

/// The error of a failed NVRTC call, with NVRTC's name for the code.
fn error(nvrtc: &Nvrtc, failure: Failure) -> Error {
    match failure {
        Failure::TooManyOptions(count) => UsageError::TooLarge {
            what: "the number of NVRTC options",
            value: count as u128,
            max: std::os::raw::c_int::MAX as u128,
        }
        .into(),
        Failure::Call { call, code, log } => Error::Compile {
            call,
            code,
            message: nvrtc
                .error_string(code)
                .unwrap_or_else(|| format!("nvrtcResult {code}")),
            log,
        },
    }
}

/// Compiles CUDA C++ source `src` to PTX with NVRTC `options` (the recommended set and what
/// the source may include: the [module docs](self#options)). Load the result with
/// [`Module::from_ptx`], or use [`Module::from_cuda_source`] for both steps. NVRTC's warnings
/// are logged with `log::info!`.
///
/// # Errors
/// [`Error::NvrtcUnavailable`] when NVRTC cannot be opened (each library tried, and why);
/// [`Error::Compile`] with NVRTC's log when the source does not compile (or another NVRTC
/// call fails); [`UsageError::NulByte`] for a NUL byte in the source or an option.
#[doc(alias = "nvrtcCompileProgram")]
#[doc(alias = "nvrtcGetPTX")]
pub fn compile_ptx(src: &str, options: &[&str]) -> Result<String> {
    let nul = |what: &'static str| Error::from(UsageError::NulByte { what });
    let source = CString::new(src).map_err(|_| nul("the CUDA source"))?;
    let options = options
        .iter()
        .map(|o| CString::new(*o).map_err(|_| nul("an NVRTC option")))
        .collect::<Result<Vec<_>>>()?;
    let nvrtc = nvrtc()?;
    // Older NVRTC releases are not documented as thread-safe: one compilation at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let (compiled, destroy) = nvrtc.compile(&source, PROGRAM_NAME, &options);
    if let Some(failure) = destroy {
        log::warn!(
            "cuda-gl: nvrtcDestroyProgram failed: {}",
            error(nvrtc, failure)
        );
    }
    let compiled = compiled.map_err(|failure| error(nvrtc, failure))?;
    if !compiled.log.trim().is_empty() {
        log::info!("cuda-gl: NVRTC warnings:\n{}", compiled.log);
    }
    Ok(String::from_utf8_lossy(&compiled.ptx).into_owned())
}

/// The version of the NVRTC library that [`compile_ptx`] uses, as `(major, minor)`, and its
/// path.
///
/// # Errors
/// [`Error::NvrtcUnavailable`] when NVRTC cannot be opened; [`Error::Compile`] when
/// `nvrtcVersion` fails.
#[doc(alias = "nvrtcVersion")]
pub fn version() -> Result<((i32, i32), PathBuf)> {
    let nvrtc = nvrtc()?;
    let version = nvrtc.version().map_err(|failure| error(nvrtc, failure))?;
    Ok((version, nvrtc.path.clone()))
}

impl Module {
    /// Compiles CUDA C++ `src` with NVRTC ([`compile_ptx`]) and loads the PTX in `ctx`
    /// ([`Module::from_ptx`], which reads the kernels' parameter lists for the launch checks).
    ///
    /// # Errors
    /// As [`compile_ptx`], then as [`Module::from_ptx`] (e.g. [`Error::PtxTooNew`] when NVRTC
    /// is newer than the driver: pass an older `--gpu-architecture`, or use an older NVRTC).
    #[doc(alias = "nvrtcCompileProgram")]
    #[doc(alias = "cuModuleLoadDataEx")]
    pub fn from_cuda_source(ctx: &Arc<Context>, src: &str, options: &[&str]) -> Result<Module> {
        let ptx = compile_ptx(src, options)?;
        Module::from_ptx(ctx, &ptx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_are_refused_before_nvrtc_is_opened() {
        let cases: [(&str, &[&str], &str); 2] = [
            ("a\0b", &[], "the CUDA source"),
            ("", &["--std=c++17\0"], "an NVRTC option"),
        ];
        for (src, options, what) in cases {
            let err = compile_ptx(src, options).err();
            assert!(
                matches!(&err, Some(Error::Usage(UsageError::NulByte { what: w })) if *w == what),
                "{err:?}"
            );
        }
    }
}
