//! The result layer: one function per driver call, returning [`CudaError`] instead of a raw code.
//!
//! The layer's errors live here too ([`error`]): [`CudaError`], and [`DriverError`] for a call
//! that needs the driver library loaded. They depend on nothing else of the crate; `crate::Error`
//! converts from them.
//!
//! Each function is `unsafe` where the C call has preconditions the types cannot express; they
//! are listed, numbered, under `# Safety`. The safe types in the rest of the crate uphold them.
//!
//! This folder is the only place in the crate that calls the driver (`ci/layering.sh` checks
//! it): one file per group of calls, as `cuda-gl-sys` names them.

use cuda_gl_sys as sys;
use std::ffi::{CStr, c_void};
use std::os::raw::{c_char, c_int, c_uint};

pub use error::CudaError;
pub(crate) use error::DriverError;

/// A `Result` of the result layer, whose error is a [`DriverError`] unless named.
pub(crate) type Result<T, E = DriverError> = std::result::Result<T, E>;

/// Calls `$name` on the loaded driver and turns its code into a `Result`.
macro_rules! drv {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        match cuda_gl_sys::driver() {
            Ok(driver) => $crate::result::check(stringify!($name), driver.$name($($arg),*))
                .map_err($crate::result::DriverError::Cuda),
            Err(e) => Err::<(), $crate::result::DriverError>($crate::result::DriverError::Load(e)),
        }
    };
}

/// Maps a raw code to `Ok(())` or a [`CudaError`] naming `call`.
///
/// The `_v2` suffix the 12.0 headers add is stripped so errors name the documented entry point.
pub(crate) fn check(call: &'static str, rc: sys::CUresult) -> Result<(), CudaError> {
    if rc.is_success() {
        Ok(())
    } else {
        let call = call.strip_suffix("_v2").unwrap_or(call);
        Err(CudaError::new(call, rc))
    }
}

/// `cuInit(0)`, once per process; later calls return the first outcome.
pub(crate) fn init() -> Result<()> {
    static INIT: std::sync::OnceLock<Result<(), CudaError>> = std::sync::OnceLock::new();
    let driver = sys::driver()?;
    INIT.get_or_init(|| {
        // SAFETY: cuInit has no preconditions and may be called from any thread, repeatedly.
        let rc = unsafe { driver.cuInit(0) };
        check("cuInit", rc)
    })
    .clone()
    .map_err(DriverError::Cuda)
}

pub(crate) mod array;
pub(crate) mod ctx;
pub(crate) mod device;
pub(crate) mod error;
#[cfg(feature = "wgpu")]
pub(crate) mod external;
pub(crate) mod graphics;
pub(crate) mod mem;
pub(crate) mod module;
pub(crate) mod stream;
#[cfg(test)]
pub(crate) mod test_ops;
pub(crate) mod vmm;

/// A raw pointer to an argument value, as `cuLaunchKernel` takes them.
pub(crate) type RawArg = *mut c_void;
