//! wgpu calls that cuda-gl makes on the application's device, under error scopes: what wgpu
//! refuses (a texture the application destroyed) or cannot do (out of memory) comes back as a
//! [`WgpuError`], not as a panic of wgpu's default uncaptured-error handler.

use super::WgpuError;
use super::device::ready;
use crate::error::Result;

/// Runs `f`, whose wgpu calls go to `device`, under an out-of-memory, an internal and a
/// validation error scope, and returns its value, or the first error wgpu reported (`call`
/// names the call in it). wgpu's scopes belong to the thread that pushes them, so calls of the
/// application's on other threads are not caught here.
///
/// # Errors
/// [`WgpuError::OutOfMemory`] or [`WgpuError::Refused`], with wgpu's message.
pub(super) fn scoped<R>(
    device: &wgpu::Device,
    call: &'static str,
    f: impl FnOnce() -> R,
) -> Result<R> {
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    // Popped innermost first; each is ready at once on native wgpu (a pending one counts as no
    // error: nothing was reported to it).
    let errors = [validation.pop(), internal.pop(), memory.pop()].map(|p| ready(p).flatten());
    match errors.into_iter().flatten().next() {
        None => Ok(value),
        Some(e @ wgpu::Error::OutOfMemory { .. }) => Err(WgpuError::OutOfMemory {
            call,
            message: e.to_string(),
        }
        .into()),
        Some(e) => Err(WgpuError::Refused {
            call,
            message: e.to_string(),
        }
        .into()),
    }
}
