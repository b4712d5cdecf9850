//! Conversions into [`Error`] from the driver layer's errors, and the driver error behind an
//! [`Error`].

use super::Error;
use crate::result::{CudaError, DriverError};
use cuda_gl_sys::CUresult;

impl From<CudaError> for Error {
    fn from(e: CudaError) -> Self {
        if is_context_fatal(e.code) {
            Error::ContextUnusable { source: e }
        } else {
            Error::Cuda(e)
        }
    }
}

/// A call of the driver layer that failed: [`Error::Load`] without a driver library, otherwise as
/// `From<CudaError>`.
impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        match e {
            DriverError::Load(e) => Error::Load(e),
            DriverError::Cuda(e) => Error::from(e),
        }
    }
}

/// Whether `code` leaves the context unusable: the sticky kernel faults, and a destroyed context.
fn is_context_fatal(code: CUresult) -> bool {
    use CUresult as R;
    [
        R::CUDA_ERROR_ILLEGAL_ADDRESS,
        R::CUDA_ERROR_LAUNCH_TIMEOUT,
        R::CUDA_ERROR_CONTEXT_IS_DESTROYED,
        R::CUDA_ERROR_HARDWARE_STACK_ERROR,
        R::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        R::CUDA_ERROR_MISALIGNED_ADDRESS,
        R::CUDA_ERROR_INVALID_ADDRESS_SPACE,
        R::CUDA_ERROR_INVALID_PC,
        R::CUDA_ERROR_LAUNCH_FAILED,
    ]
    .contains(&code)
}

impl Error {
    /// The driver error behind this error, if there is one.
    pub fn cuda(&self) -> Option<&CudaError> {
        match self {
            Error::Cuda(e)
            | Error::NoGlContext { source: e }
            | Error::NotAGlObject { source: e, .. }
            | Error::PtxTooNew { source: e, .. }
            | Error::InvalidModule { source: e, .. }
            | Error::InvalidSubresource { source: e, .. }
            | Error::NotNvidiaGl { source: e }
            | Error::UnsupportedImage { source: e, .. }
            | Error::ContextUnusable { source: e }
            | Error::MappingStateLost { source: e, .. } => Some(e),
            _ => None,
        }
    }

    /// The raw driver code behind this error, if there is one.
    pub fn code(&self) -> Option<CUresult> {
        self.cuda().map(|e| e.code)
    }
}
