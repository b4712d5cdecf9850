//! The display paths (`--path auto`, `interop`, `staged`): frames go on screen through a
//! `cuda_gl::display::DisplayTarget`. Every frame `plasma_surface` draws the frame through its
//! surface on the backend's stream, and `Frame::present` puts it in the target's texture, which
//! the renderer draws:
//!
//! - interop: the texture is registered with CUDA and mapped for the frame; the surface is the
//!   texture's own, so nothing is copied. Needs the GL context on NVIDIA's GPU that runs CUDA.
//! - staged: the surface is a CUDA array of the target's; the present copies it into pinned
//!   host memory in bands and GL uploads each band once its copy has finished, so the texture
//!   holds the frame when the present returns. Any OpenGL.
//!
//! `auto` tries them in that order; the target's one-line `Report` says which mode it chose and
//! why. Unlike the other CUDA paths, the CUDA context does not depend on the GL context: where
//! the GL context runs on no CUDA GPU, CUDA runs on `--device` and the frames are staged.

use super::Frame;
use super::cuda::Base;
use crate::cli::PathChoice;
use crate::renderer::Renderer;
use crate::timing::Stage;
use crate::watchdog;
use anyhow::{Context as _, Result, bail};
use cuda_gl::display::{DisplayTarget, Format, Layout, Mode, Report};
use cuda_gl::{Context, Device, LaunchConfig};
use std::sync::Arc;

/// The display mode `path` forces: `Some` for `interop` and `staged`; `None` (the target picks,
/// as `auto`) for every other path.
pub fn forced_mode(path: PathChoice) -> Option<Mode> {
    match path {
        PathChoice::Interop => Some(Mode::Interop),
        PathChoice::Staged => Some(Mode::Staged),
        PathChoice::Auto | PathChoice::Pbo | PathChoice::Surface | PathChoice::Stream => None,
    }
}

/// The `--path` value of a display mode.
fn path_of(mode: Mode) -> PathChoice {
    match mode {
        Mode::Interop => PathChoice::Interop,
        Mode::Staged => PathChoice::Staged,
        // A mode added to cuda-gl later: the demo did not force it, so auto chose it.
        _ => PathChoice::Auto,
    }
}

/// The CUDA backend of the display paths. Drop it while the GL context that made its target is
/// current (the session does, before the renderer).
#[derive(Debug)]
pub struct DisplayBackend {
    /// The mode asked for (`None`: auto).
    requested: Option<Mode>,
    /// Dropped first: its texture and CUDA objects go while the context and stream live. Made
    /// by the first [`DisplayBackend::attach`], when the frame size is known.
    target: Option<DisplayTarget>,
    /// What the target's creation found.
    report: Option<Report>,
    /// Its kernel: `plasma_surface(cudaSurfaceObject_t s, int width, int height, float t)`.
    pub(super) base: Base,
}

impl DisplayBackend {
    /// Loads the kernels in `ctx` and creates the frames' stream; the target is made by
    /// [`DisplayBackend::attach`], in `mode` (`None`: auto).
    ///
    /// # Errors
    /// The cuda-gl error of creating the stream or loading the PTX (e.g.
    /// [`cuda_gl::Error::PtxTooNew`] with an old driver).
    pub fn new(ctx: Arc<Context>, mode: Option<Mode>) -> Result<DisplayBackend, cuda_gl::Error> {
        Ok(DisplayBackend {
            requested: mode,
            target: None,
            report: None,
            base: Base::new(ctx, "plasma_surface")?,
        })
    }

    /// The backend on CUDA device `device`.
    ///
    /// # Errors
    /// As [`Context::new`] and [`DisplayBackend::new`].
    pub fn on_device(
        device: &Device,
        mode: Option<Mode>,
    ) -> Result<DisplayBackend, cuda_gl::Error> {
        DisplayBackend::new(Context::new(device)?, mode)
    }

    /// The backend for the GL context current on this thread (a window's): CUDA on the GPU that
    /// runs it ([`Context::for_current_gl`]), where interop can work; where that GL runs on no
    /// CUDA GPU (Mesa, another vendor's GPU), on CUDA device `ordinal`, for the staged mode.
    ///
    /// # Errors
    /// The errors of CUDA itself: [`cuda_gl::Error::Load`] without a driver, no device
    /// `ordinal`, or as [`DisplayBackend::new`]. Whether the GL context suits a mode is the
    /// target's to say, in [`DisplayBackend::attach`].
    pub fn for_current_gl(
        mode: Option<Mode>,
        ordinal: usize,
    ) -> Result<DisplayBackend, cuda_gl::Error> {
        let ctx = match Context::for_current_gl() {
            Ok(ctx) => ctx,
            Err(e) if e.is_unsupported_setup() => {
                log::debug!("the GL context is on no CUDA device ({e}); CUDA on device {ordinal}");
                Context::new(&Device::get(ordinal)?)?
            }
            Err(e) => return Err(e),
        };
        DisplayBackend::new(ctx, mode)
    }

    /// The path: the mode the target chose once made, else the one asked for.
    pub fn path(&self) -> PathChoice {
        match (&self.target, self.requested) {
            (Some(target), _) => path_of(target.mode()),
            (None, Some(mode)) => path_of(mode),
            (None, None) => PathChoice::Auto,
        }
    }

    /// How the path was chosen, for descriptions: `auto` or `forced`.
    pub fn how_chosen(&self) -> &'static str {
        if self.requested.is_some() {
            "forced"
        } else {
            "auto"
        }
    }

    /// The target's report (the mode, the refused ones and the fix), once it is made.
    pub fn report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    /// The target's texture for the renderer to draw, once it is made.
    pub fn texture(&self) -> Option<u32> {
        self.target.as_ref().map(|target| target.texture().0)
    }

    /// Makes the target at the renderer's size with the GL context current (the first call),
    /// or resizes it (the texture's name changes: the session gives the new one to the
    /// renderer).
    ///
    /// # Errors
    /// As `DisplayTarget::new` (a forced interop where the GL context is not on the CUDA GPU:
    /// `NotNvidiaGl` or `WrongDevice`) and `DisplayTarget::resize`.
    pub fn attach(&mut self, renderer: &Renderer) -> Result<()> {
        let size = renderer.size();
        if let Some(target) = self.target.as_mut() {
            return target
                .resize(size.width, size.height)
                .with_context(|| format!("resizing the display target to {size}"));
        }
        let mode = self.requested.map_or("auto", Mode::name);
        let layout = Layout::packed((size.width, size.height), Format::Rgba8)?;
        let made = DisplayTarget::new(&self.base.ctx, layout, self.requested);
        let (target, report) = match made {
            Ok(made) => made,
            Err(e) if self.requested == Some(Mode::Interop) && e.is_unsupported_setup() => {
                return Err(e).with_context(|| {
                    format!(
                        "--path interop cannot run here (--path auto would stage the frames \
                         through host memory); creating the {size} display target"
                    )
                });
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("creating the {size} display target ({mode})"));
            }
        };
        self.target = Some(target);
        self.report = Some(report);
        Ok(())
    }

    /// Renders the frame at time `frame.t`: `plasma_surface` draws the target frame through its
    /// surface on the stream, and the frame is presented (interop: the texture unmapped;
    /// staged: copied out and uploaded, band by band). The caller draws the texture.
    ///
    /// # Errors
    /// When not attached or the sizes disagree; a cuda-gl error of the launch or the present.
    pub fn render(&mut self, frame: Frame<'_>) -> Result<()> {
        let Frame {
            renderer,
            t,
            profiler,
            ..
        } = frame;
        self.base.launch_pending_spin()?;
        let Some(target) = self.target.as_mut() else {
            bail!("the display backend has no target (attach was not called)");
        };
        let size = renderer.size();
        if target.size() != (size.width, size.height) || target.format() != Format::Rgba8 {
            bail!(
                "the display target is {:?} {:?}, the frame {size} RGBA8",
                target.size(),
                target.format()
            );
        }
        let (w, h) = super::cuda::dims(size)?;
        let (kernel, stream) = (&self.base.kernel, &self.base.stream);
        let frame = target.frame(stream).context("beginning a display frame")?;
        let surface = frame.surface().context("the display frame's surface")?;
        watchdog::enter(watchdog::Stage::Kernel);
        let config = LaunchConfig::for_image(size.width, size.height);
        profiler
            .cpu(Stage::Kernel, || {
                // SAFETY: `plasma_surface(cudaSurfaceObject_t s, int w, int h, float t)` writes
                // texel (x, y) for x < w, y < h with surf2Dwrite: the frame's surface is w x h
                // RGBA8 (checked above), and out-of-range writes are dropped
                // (cudaBoundaryModeZero). The surface is the mapped texture's (interop) or the
                // target's array (staged), valid until the present below, queued on the same
                // stream after the kernel.
                unsafe { kernel.launch(config, stream, (surface, w, h, t)) }
            })
            .context("launching plasma_surface on the display frame")?;
        watchdog::enter(watchdog::Stage::Upload);
        profiler
            .gl_and_cpu(Stage::Upload, || frame.present())
            .context("presenting the display frame")
    }

    /// Waits for the stream, makes sure the last presented frame is in the texture (the
    /// target's `flush`, which has nothing left to do in interop and staged mode), and
    /// reports deferred errors (an unmap or a release that failed in a `Drop`).
    ///
    /// # Errors
    /// The driver's error from synchronizing or of the last copy, GL's of the upload, or
    /// [`cuda_gl::Error::DeferredDrop`].
    pub fn finish(&mut self) -> Result<()> {
        watchdog::enter(watchdog::Stage::Finish);
        self.base
            .stream
            .synchronize()
            .context("waiting for the CUDA stream")?;
        if let Some(target) = self.target.as_mut() {
            target
                .flush()
                .context("uploading the last presented frame (flush)")?;
        }
        self.base
            .ctx
            .check_drop_errors()
            .context("an earlier display frame's clean-up failed")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_modes() {
        assert_eq!(forced_mode(PathChoice::Interop), Some(Mode::Interop));
        assert_eq!(forced_mode(PathChoice::Staged), Some(Mode::Staged));
        for path in [
            PathChoice::Auto,
            PathChoice::Surface,
            PathChoice::Pbo,
            PathChoice::Stream,
        ] {
            assert_eq!(forced_mode(path), None, "{path}");
        }
        for mode in Mode::AUTO_ORDER {
            assert_eq!(path_of(mode).to_string(), mode.name());
            assert_eq!(forced_mode(path_of(mode)), Some(mode));
        }
    }
}
