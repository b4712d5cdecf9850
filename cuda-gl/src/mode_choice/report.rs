//! [`Report`]: why a target is in its mode, in one line that names the fix.

use super::Mode;
use crate::error::{Error, Result};
use std::fmt;

/// What [`DisplayTarget::new`](crate::display::DisplayTarget::new) (or, with feature `wgpu`,
/// `WgpuTarget::new`) found: the mode it chose, each faster mode it refused with its error, and
/// what runs the graphics API and CUDA here. It prints as one line that ends with the fix,
/// where there is one:
///
/// `display: staged (interop refused: not_nvidia_gl); GL: <renderer>, <vendor>; CUDA: <device
/// label>; fix: create the GL context on the CUDA GPU ...`
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// What chose its mode: `display` (a GL or wgpu display target) or `video planes` (GL's
    /// `VideoPlanes` or wgpu's `WgpuVideoPlanes`); the line begins with it.
    pub target: &'static str,
    /// The mode chosen.
    pub mode: Mode,
    /// Each mode tried before it, with why it was refused.
    pub refused: Vec<(Mode, Error)>,
    /// The graphics API the target's texture is of: `GL`, or `wgpu` and its backend (`wgpu
    /// Vulkan`).
    pub api: &'static str,
    /// What draws: `GL_RENDERER` of the target's GL context, or the wgpu adapter's name.
    pub renderer: String,
    /// Whose it is: `GL_VENDOR`, or the wgpu adapter's driver and its version.
    pub vendor: String,
    /// The CUDA device of the target's context, as a label.
    pub cuda_device: String,
}

impl Report {
    /// The fix for the first refusal that has one: how to get GL, or wgpu's device, onto the
    /// CUDA GPU.
    pub fn fix(&self) -> Option<&'static str> {
        self.refused.iter().find_map(|(_, e)| match e {
            Error::NotNvidiaGl { .. } | Error::WrongDevice { .. } => Some(
                "create the GL context on the CUDA GPU: for a window on a PRIME/Optimus laptop, \
                 run with __NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia; \
                 headless, use cuda_gl::egl::HeadlessContext::for_cuda_device",
            ),
            #[cfg(feature = "wgpu")]
            Error::Wgpu(e) if e.fixed_by_open_gl_device() => Some(
                "open the wgpu adapter with cuda_gl::wgpu_interop::open_gl_adapter (feature \
                 wgpu-gl) on a GL context on the CUDA GPU that the program keeps current \
                 (headless: cuda_gl::egl::HeadlessContext::for_cuda_device), then the device \
                 with open_gl_device",
            ),
            #[cfg(feature = "wgpu")]
            Error::Wgpu(e) if e.fixed_by_open_device() => Some(
                "find the wgpu adapter with cuda_gl::wgpu_interop::find_adapter and open the \
                 device with open_device: wgpu's Vulkan backend on the CUDA GPU, with external \
                 memory and semaphores",
            ),
            _ => None,
        })
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.target, self.mode)?;
        if !self.refused.is_empty() {
            let refused: Vec<String> = self
                .refused
                .iter()
                .map(|(mode, e)| format!("{mode} refused: {}", reason(e)))
                .collect();
            write!(f, " ({})", refused.join(", "))?;
        }
        write!(
            f,
            "; {}: {}, {}; CUDA: {}",
            self.api, self.renderer, self.vendor, self.cuda_device
        )?;
        if let Some(fix) = self.fix() {
            write!(f, "; fix: {fix}")?;
        }
        Ok(())
    }
}

/// Makes the value of the first of `modes` that `make` builds, with the [`Report`] that
/// `report` writes of the mode chosen and the refusals before it. A refusal of the input itself,
/// which every mode would refuse alike ([`refused_in_every_mode`]), and the last mode's, are the
/// call's error; the refusals before it are then logged as warnings (`what` names the value:
/// `"display"`, `"wgpu"`, `"video planes"`), since no report carries them.
///
/// # Errors
/// As just said; [`Error::Internal`] for no mode given.
pub(crate) fn first_mode<B>(
    modes: &[Mode],
    what: &str,
    mut make: impl FnMut(Mode) -> Result<B>,
    report: impl FnOnce(Mode, Vec<(Mode, Error)>) -> Report,
) -> Result<(B, Report)> {
    let mut refused = Vec::new();
    for (k, &mode) in modes.iter().enumerate() {
        match make(mode) {
            Ok(made) => return Ok((made, report(mode, refused))),
            Err(e) if refused_in_every_mode(&e) || k + 1 == modes.len() => {
                for (refused, why) in &refused {
                    log::warn!("cuda-gl: {what} mode {refused} refused: {why}");
                }
                return Err(e);
            }
            Err(e) => refused.push((mode, e)),
        }
    }
    Err(Error::Internal {
        what: format!("no {what} mode was tried"),
    })
}

/// Whether `e` refuses the call's input itself (a [`UsageError`](crate::UsageError)), which
/// every mode would refuse alike, rather than what one mode cannot do here (GL not on the CUDA
/// GPU, a wgpu device without external memory, the driver's export limit). No GL context
/// current ([`Error::NoGlContext`]) ends the search too: every mode's GL calls (or, on a wgpu
/// device of wgpu's GL backend over the program's context, every wgpu call) would run without
/// it; nor does a GL object already registered or held ([`Error::AlreadyRegistered`]: every
/// mode claims it alike).
pub(crate) fn refused_in_every_mode(e: &Error) -> bool {
    matches!(
        e,
        Error::Usage(_) | Error::NoGlContext { .. } | Error::AlreadyRegistered { .. }
    )
}

/// A refusal in a word: the setups a mode refuses by name (their fix differs), any other error
/// by its kind.
fn reason(e: &Error) -> &'static str {
    match e {
        Error::NotNvidiaGl { .. } => "not_nvidia_gl",
        Error::WrongDevice { .. } => "wrong_device",
        Error::ExternalMemoryUnsupported { .. } => "external_memory_unsupported",
        Error::MissingGlFunction { .. } => "missing_gl_function",
        #[cfg(feature = "wgpu")]
        Error::Wgpu(e) => e.reason(),
        e => e.kind().as_str(),
    }
}

#[cfg(test)]
mod tests;
