//! The [`egl`](super) module's error types. They are defined with the crate's
//! [`Error`](crate::Error) (so that it can hold an [`EglError`] without depending on this
//! module) and re-exported here; this file converts khronos-egl's error codes into them.

pub use crate::error::egl::{EglDeviceInfo, EglError, EglErrorCode, EglPlatform};

impl EglErrorCode {
    /// Converts khronos-egl's error (kept out of the public API on purpose).
    pub(super) fn from_egl(e: khronos_egl::Error) -> Self {
        Self(e.native())
    }
}
