//! cuda-gl (work in progress)
#[cfg(feature = "egl")]
pub mod egl;
