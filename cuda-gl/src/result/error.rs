//! The error-description calls of the result layer. They return `Option`, never an error:
//! building a [`CudaError`] calls them, so they must not build one themselves.

use super::*;

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
