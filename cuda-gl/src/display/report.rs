//! [`Report`]: which mode a display target uses, and why the faster ones were refused.

use super::mode::Mode;
use crate::error::{Error, ErrorKind};
use std::fmt;

/// What [`DisplayTarget::new`](super::DisplayTarget::new) found: the mode it chose, each
/// faster mode it refused with its error, and what runs GL and CUDA here. It prints as one
/// line that ends with the fix, where there is one:
///
/// `display: staged (interop refused: not_nvidia_gl); GL: <renderer>, <vendor>; CUDA: <device
/// label>; fix: create the GL context on the CUDA GPU ...`
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// The mode chosen.
    pub mode: Mode,
    /// Each mode tried before it, with why it was refused.
    pub refused: Vec<(Mode, Error)>,
    /// `GL_RENDERER` of the target's GL context.
    pub gl_renderer: String,
    /// `GL_VENDOR` of the target's GL context.
    pub gl_vendor: String,
    /// The CUDA device of the target's context, as a label.
    pub cuda_device: String,
}

impl Report {
    /// The fix for the first refusal that has one: how to get GL onto the CUDA GPU.
    pub fn fix(&self) -> Option<&'static str> {
        self.refused.iter().find_map(|(_, e)| match e.kind() {
            ErrorKind::NotNvidiaGl | ErrorKind::WrongDevice => Some(
                "create the GL context on the CUDA GPU: for a window on a PRIME/Optimus laptop, \
                 run with __NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia; \
                 headless, use cuda_gl::egl::HeadlessContext::for_cuda_device",
            ),
            _ => None,
        })
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "display: {}", self.mode)?;
        if !self.refused.is_empty() {
            let refused: Vec<String> = self
                .refused
                .iter()
                .map(|(mode, e)| format!("{mode} refused: {}", e.kind().as_str()))
                .collect();
            write!(f, " ({})", refused.join(", "))?;
        }
        write!(
            f,
            "; GL: {}, {}; CUDA: {}",
            self.gl_renderer, self.gl_vendor, self.cuda_device
        )?;
        if let Some(fix) = self.fix() {
            write!(f, "; fix: {fix}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::CudaError;
    use cuda_gl_sys::CUresult;

    fn report(refused: Vec<(Mode, Error)>) -> Report {
        Report {
            mode: if refused.is_empty() {
                Mode::Interop
            } else {
                Mode::Staged
            },
            refused,
            gl_renderer: "llvmpipe".into(),
            gl_vendor: "Mesa".into(),
            cuda_device: "device 0 (NVIDIA H200)".into(),
        }
    }

    #[test]
    fn one_line_with_the_refusals_and_the_fix() {
        let not_nvidia = Error::NotNvidiaGl {
            source: CudaError::new(
                "cuGraphicsGLRegisterImage",
                CUresult::CUDA_ERROR_OPERATING_SYSTEM,
            ),
        };
        let line = report(vec![(Mode::Interop, not_nvidia)]).to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("display: staged (interop refused: not_nvidia_gl); GL: llvmpipe"),
            "{line}"
        );
        assert!(line.contains("__NV_PRIME_RENDER_OFFLOAD=1"), "{line}");
        assert!(line.contains("HeadlessContext::for_cuda_device"), "{line}");
        let clean = report(Vec::new()).to_string();
        assert_eq!(
            clean,
            "display: interop; GL: llvmpipe, Mesa; CUDA: device 0 (NVIDIA H200)"
        );
    }
}
