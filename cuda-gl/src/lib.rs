//! Zero-copy CUDA <-> OpenGL interop.
//!
//! Register a GL buffer or image with CUDA, map it on a stream, let a kernel read or write it in
//! place, and let ownership unmap and unregister it in the right order:
//!
//! ```text
//! MappedBuffer / MappedImage / MappedBatch   (borrow the resource and the stream)
//!   -> unmap on the stream of the map
//! RegisteredBuffer / RegisteredImage         (hold Arc<Context>)
//!   -> unregister
//! Context                                    (retained primary context)
//!   -> release
//! driver                                     (libcuda, opened once per process)
//! ```
//!
//! # Thread rules
//! - The GL context that owns an object must be current on the thread that registers, maps,
//!   unmaps, unregisters or drops it, and on the thread that calls [`gl_devices`]. (The NVIDIA
//!   driver answers `CUDA_ERROR_INVALID_GRAPHICS_CONTEXT` otherwise, which cuda-gl reports as
//!   [`Error::NoGlContext`].) To use a resource on another thread, move its GL context there
//!   too: release it, move both, make it current.
//! - The CUDA context is bound by the crate itself before every call, `Drop` included.
//! - [`Context`], [`Stream`], [`Event`], [`Module`], [`Function`], [`RegisteredBuffer`] and
//!   [`RegisteredImage`] are `Send + Sync`. Mapping guards borrow their resource and stream and
//!   are neither.
//!
//! # Failures in `Drop`
//! `Drop` never panics. A failed unmap or unregister is logged through the `log` crate and
//! recorded on the context: [`Context::synchronize`] and [`Context::check_drop_errors`] report
//! it as [`Error::DeferredDrop`]. Call `unmap()` or `unregister()` to get the error directly.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod context;
mod device;
mod error;
mod glcurrent;
pub mod graphics;
mod memory;
mod module;
mod result;
mod stream;

#[cfg(feature = "egl")]
#[cfg_attr(docsrs, doc(cfg(feature = "egl")))]
pub mod egl;

pub use context::Context;
pub use device::{Device, GlDeviceList, gl_devices};
pub use error::{CudaError, DeviceLabel, Error, Result};
pub use graphics::{
    ImageTarget, MapFlags, MappedBatch, MappedBuffer, MappedImage, RegisterFlags, RegisteredBuffer,
    RegisteredImage, Resource, map_all,
};
pub use memory::{DeviceBuffer, DeviceCopy, DevicePtr, PinnedBuffer};
pub use module::{Function, KernelArgs, KernelParam, LaunchConfig, Module};
pub use stream::{AsStream, Event, Stream, StreamFlags};

/// The raw bindings, re-exported for calls this crate does not wrap.
pub use cuda_gl_sys as sys;

/// The driver API version of the loaded driver (e.g. 13000 for CUDA 13.0).
///
/// # Errors
/// [`Error::Load`] when the driver cannot be opened or is older than 12.0.
#[doc(alias = "cuDriverGetVersion")]
pub fn driver_version() -> Result<i32> {
    Ok(cuda_gl_sys::driver_version()?)
}
