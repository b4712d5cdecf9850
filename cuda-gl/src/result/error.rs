//! The result layer's errors: [`CudaError`], a failed driver call with the driver's name and
//! description of its code, and [`DriverError`], what a call of this layer can fail with (the
//! driver library could not be loaded, or the call failed).
//!
//! The error-description calls here return `Option`, never an error: building a [`CudaError`]
//! calls them, so they must not build one themselves.

use super::*;
use std::fmt;

/// A failed CUDA driver call: the call, the raw code, and the driver's name and description of it.
///
/// The code is kept as the raw [`CUresult`](sys::CUresult) newtype, so a code that a newer driver
/// returns and these bindings do not know is reported by its number, never misread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaError {
    /// The driver entry point that failed, e.g. `cuGraphicsGLRegisterBuffer`.
    pub call: &'static str,
    /// The raw result code.
    pub code: sys::CUresult,
    /// The code's name from `cuGetErrorName`, e.g. `CUDA_ERROR_INVALID_VALUE`.
    pub name: String,
    /// The code's description from `cuGetErrorString`.
    pub description: String,
}

impl CudaError {
    /// Builds the error for `code` returned by `call`, asking the driver for its name and text.
    pub(crate) fn new(call: &'static str, code: sys::CUresult) -> Self {
        let (name, description) = describe(code);
        Self {
            call,
            code,
            name,
            description,
        }
    }

    /// The raw numeric code.
    pub fn raw_code(&self) -> u32 {
        self.code.0
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed with {} ({}): {}",
            self.call, self.name, self.code.0, self.description
        )
    }
}

impl std::error::Error for CudaError {}

/// What a call of the result layer fails with: the driver library could not be loaded, or the
/// driver returned an error code. `crate::Error` converts from it (`Load` and the driver error's
/// own conversion), so callers use `?`.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum DriverError {
    /// The driver library could not be opened or is too old.
    #[error(transparent)]
    Load(#[from] sys::LoadError),
    /// The call returned an error code.
    #[error(transparent)]
    Cuda(#[from] CudaError),
}

/// The driver's name and description for `code`, or a numbered placeholder for codes it does not
/// know.
fn describe(code: sys::CUresult) -> (String, String) {
    if sys::driver().is_err() {
        return (format!("CUresult {}", code.0), "(driver not loaded)".into());
    }
    (
        name(code).unwrap_or_else(|| format!("unknown CUresult {}", code.0)),
        string(code).unwrap_or_else(|| "a code this driver does not describe".to_string()),
    )
}

/// Reads the static string a `cuGetError*` call wrote, if the call succeeded.
fn read_static(rc: sys::CUresult, ptr: *const c_char) -> Option<String> {
    if rc.is_success() && !ptr.is_null() {
        // SAFETY: on success the driver returned a NUL-terminated static string.
        Some(
            unsafe { CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned(),
        )
    } else {
        None
    }
}

/// `cuGetErrorName`: the driver's name for `code` (`CUDA_ERROR_...`); `None` when the driver
/// is not loaded or does not know the code.
pub(crate) fn name(code: sys::CUresult) -> Option<String> {
    let driver = sys::driver().ok()?;
    let mut ptr: *const c_char = std::ptr::null();
    // SAFETY: the call only writes a pointer to a static string into the out-pointer, and
    // accepts any code (returning CUDA_ERROR_INVALID_VALUE for unknown ones).
    let rc = unsafe { driver.cuGetErrorName(code, &mut ptr) };
    read_static(rc, ptr)
}

/// `cuGetErrorString`: the driver's description of `code`; `None` when the driver is not
/// loaded or does not know the code.
pub(crate) fn string(code: sys::CUresult) -> Option<String> {
    let driver = sys::driver().ok()?;
    let mut ptr: *const c_char = std::ptr::null();
    // SAFETY: the call only writes a pointer to a static string into the out-pointer, and
    // accepts any code (returning CUDA_ERROR_INVALID_VALUE for unknown ones).
    let rc = unsafe { driver.cuGetErrorString(code, &mut ptr) };
    read_static(rc, ptr)
}
