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
pub(crate) fn scoped<R>(
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

/// Refuses, before any hand-off, a texture that the application destroyed
/// (`wgpu::Texture::destroy` on a clone): wgpu 30 records a copy or pass into it without
/// complaint and refuses it only at the submit that carries it (seen on driver 580.159.04,
/// 2026-12-07), which would come after CUDA's hand-off. A texture destroyed after this check,
/// by another thread, is still refused there, and the hand-back is made again without it.
///
/// # Errors
/// [`WgpuError::Refused`] naming `call` and the texture.
pub(crate) fn check_alive(texture: &wgpu::Texture, call: &'static str) -> Result<()> {
    if is_alive(texture) {
        Ok(())
    } else {
        Err(WgpuError::Refused {
            call,
            message: "a texture that cuda-gl copies from or into was destroyed \
                      (wgpu::Texture::destroy or wgpu::Device::destroy), found before the hand-off"
                .into(),
        }
        .into())
    }
}

/// Whether `texture` (of wgpu's Vulkan backend, or with `wgpu-gl` of its GL backend) is not
/// destroyed: wgpu-core's `texture_as_hal` is `None` once the texture was snatched.
pub(crate) fn is_alive(texture: &wgpu::Texture) -> bool {
    // SAFETY: the guards are only tested and dropped (none is held across another wgpu call).
    let vulkan = unsafe { texture.as_hal::<super::Vulkan>() }.is_some();
    #[cfg(feature = "wgpu-gl")]
    // SAFETY: as above.
    let gl = unsafe { texture.as_hal::<super::gl_device::Gles>() }.is_some();
    #[cfg(not(feature = "wgpu-gl"))]
    let gl = false;
    vulkan || gl
}

/// Waits until wgpu has finished submission `index` on `device`, at most `limit`. wgpu's
/// `Device::poll` panics on errors other than a timeout (a lost device, out of memory): that
/// panic is caught here and returned as an error (with `panic = "abort"` it still aborts).
///
/// A poll that times out before `limit` is asked again for what is left: wgpu-hal 30's GL
/// backend waits at most `i32::MAX` ns (about 2.1 s) per poll (`gles/fence.rs`, the timeout of
/// `glClientWaitSync`), whatever timeout it is given.
///
/// # Errors
/// [`Error::Timeout`](crate::Error::Timeout) past `limit`; [`WgpuError::Refused`] for wgpu's
/// other errors (`call` names the call in it).
pub(super) fn wait_for_submission(
    device: &wgpu::Device,
    index: wgpu::SubmissionIndex,
    limit: std::time::Duration,
    call: &'static str,
) -> Result<()> {
    let deadline = std::time::Instant::now() + limit;
    let refused = |message: String| WgpuError::Refused { call, message }.into();
    loop {
        let asked = std::time::Instant::now();
        let left = deadline.saturating_duration_since(asked);
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            device.poll(wgpu::PollType::Wait {
                submission_index: Some(index.clone()),
                timeout: Some(left),
            })
        }));
        match polled {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(wgpu::PollError::Timeout)) if std::time::Instant::now() < deadline => {
                // A poll that gave up at once is asked again after a pause, not in a spin.
                if asked.elapsed() < std::time::Duration::from_millis(1) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            Ok(Err(wgpu::PollError::Timeout)) => {
                return Err(crate::Error::Timeout {
                    what: format!("wgpu's work for {call}"),
                    timeout: limit,
                });
            }
            Ok(Err(e)) => return Err(refused(e.to_string())),
            Err(_) => {
                return Err(refused(
                    "wgpu panicked while waiting (the device was lost or is out of memory)".into(),
                ));
            }
        }
    }
}
