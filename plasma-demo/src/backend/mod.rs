//! What computes the frames: the CUDA kernel (through a display target, or the PBO, surface
//! or stream path) or the CPU, behind one enum.

pub mod cpu;
pub mod cuda;
pub mod display;
pub mod stream;

pub use cpu::CpuBackend;
pub use cuda::CudaBackend;
pub use display::DisplayBackend;

use crate::cli::{BackendChoice, PathChoice, Size};
use crate::renderer::{Renderer, Upload};
use crate::timing::Profiler;
use anyhow::{Context as _, Result, bail};
use std::time::Duration;

/// What every backend renders a frame with.
#[derive(Debug)]
pub struct Frame<'a> {
    /// Its GL objects: the frame goes into its texture.
    pub renderer: &'a Renderer,
    /// The animation time, in seconds.
    pub t: f32,
    /// Where the stream path draws the frames it streams (the other paths leave drawing to the
    /// caller).
    pub viewport: Size,
    /// Where the stages' timings go.
    pub profiler: &'a mut Profiler,
}

/// The frame producer of a run.
#[derive(Debug)]
pub enum Backend {
    /// The CUDA kernel writes the GL pixel buffer or texture in place.
    Cuda(Box<CudaBackend>),
    /// The CUDA kernel writes a `cuda_gl::display::DisplayTarget`'s frames (`--path auto`,
    /// `interop`, `staged`); the renderer draws the target's texture.
    Display(Box<DisplayBackend>),
    /// The CPU renders into host memory and uploads with `glBufferSubData`.
    Cpu(CpuBackend),
}

impl Backend {
    /// What the renderer must allocate for this backend.
    pub fn upload(&self) -> Upload {
        match self {
            Backend::Cuda(c) => c.upload(),
            Backend::Display(_) => Upload::External,
            Backend::Cpu(_) => Upload::PixelBuffer,
        }
    }

    /// `cuda` or `cpu`.
    pub fn kind(&self) -> &'static str {
        match self {
            Backend::Cuda(_) | Backend::Display(_) => "cuda",
            Backend::Cpu(_) => "cpu",
        }
    }

    /// The CUDA path, or `None` for the CPU backend. A display target's is the mode it runs in
    /// (`interop` or `staged`) once made, `auto` before.
    pub fn path(&self) -> Option<PathChoice> {
        match self {
            Backend::Cuda(c) => Some(c.path()),
            Backend::Display(d) => Some(d.path()),
            Backend::Cpu(_) => None,
        }
    }

    /// A short label for titles: `CUDA staged`, `CUDA pbo`, `CUDA surface` or `CPU`.
    pub fn short_label(&self) -> String {
        match self {
            Backend::Cuda(c) => format!("CUDA {}", c.path()),
            Backend::Display(d) => format!("CUDA {}", d.path()),
            Backend::Cpu(_) => "CPU".into(),
        }
    }

    /// A longer description: the GPU, or the number of threads.
    pub fn description(&self) -> String {
        match self {
            Backend::Cuda(c) => format!("CUDA {} path on {}", c.path(), c.base.gpu()),
            Backend::Display(d) => format!(
                "CUDA {} path (display target, {}) on {}",
                d.path(),
                d.how_chosen(),
                d.base.gpu()
            ),
            Backend::Cpu(c) => format!(
                "CPU on {} thread(s), uploaded with glBufferSubData + glTexSubImage2D",
                c.threads()
            ),
        }
    }

    /// What the CUDA backends share (context, stream, kernels); `None` for the CPU's.
    fn cuda_base(&mut self) -> Option<&mut cuda::Base> {
        match self {
            Backend::Cuda(c) => Some(&mut c.base),
            Backend::Display(d) => Some(&mut d.base),
            Backend::Cpu(_) => None,
        }
    }

    /// Registers the renderer's GL objects with CUDA (nothing for the CPU); a display backend
    /// makes its target at the renderer's size, or resizes it.
    ///
    /// # Errors
    /// The CUDA registration error, or the display target's.
    pub fn attach(&mut self, renderer: &Renderer) -> Result<()> {
        match self {
            Backend::Cuda(c) => c.attach(renderer),
            Backend::Display(d) => d.attach(renderer),
            Backend::Cpu(_) => Ok(()),
        }
    }

    /// Drops the CUDA registrations (before the renderer replaces its GL objects). A display
    /// backend keeps its target, which owns its texture: [`Backend::attach`] resizes it.
    ///
    /// # Errors
    /// The CUDA unregistration error.
    pub fn detach(&mut self) -> Result<()> {
        match self {
            Backend::Cuda(c) => c.detach(),
            Backend::Display(_) | Backend::Cpu(_) => Ok(()),
        }
    }

    /// The texture the renderer draws when the backend owns it (a display target's, once
    /// attached); `None` when the renderer draws its own.
    pub fn texture(&self) -> Option<u32> {
        match self {
            Backend::Display(d) => d.texture(),
            Backend::Cuda(_) | Backend::Cpu(_) => None,
        }
    }

    /// The display target's one-line report (mode, refusals, fix), once attached; `None` for
    /// the other backends.
    pub fn display_report(&self) -> Option<&cuda_gl::display::Report> {
        match self {
            Backend::Display(d) => d.report(),
            Backend::Cuda(_) | Backend::Cpu(_) => None,
        }
    }

    /// Puts the frame at time `frame.t` into the renderer's texture: `Ok(None)`, the caller
    /// draws it. The stream path draws the frames it streams over `frame.viewport` itself:
    /// `Ok(Some(n))` for `n` frames drawn (0 while its first burst is still being written).
    ///
    /// # Errors
    /// Any CUDA or GL failure of the frame.
    pub fn render(&mut self, frame: Frame<'_>) -> Result<Option<u64>> {
        match self {
            Backend::Cuda(c) => c.render(frame),
            Backend::Display(d) => d.render(frame).map(|()| None),
            Backend::Cpu(c) => c.render(frame).map(|()| None),
        }
    }

    /// The stream path's mean and largest latency in frames (`None` for the other paths).
    pub fn stream_latency(&self) -> Option<(f64, u64)> {
        match self {
            Backend::Cuda(c) => c.stream_latency(),
            Backend::Display(_) | Backend::Cpu(_) => None,
        }
    }

    /// Waits for outstanding work and reports deferred errors; a staged display target
    /// uploads its last frame (`flush`), so that the texture shows the newest frame.
    ///
    /// # Errors
    /// A CUDA error of work queued earlier.
    pub fn finish(&mut self, profiler: &mut Profiler) -> Result<()> {
        match self {
            Backend::Cuda(c) => c.finish(profiler),
            Backend::Display(d) => d.finish(),
            Backend::Cpu(_) => Ok(()),
        }
    }
}

/// Whether `error` means "CUDA interop is not possible here", the cases where `--backend auto`
/// falls back to the CPU on the `surface`, `pbo` and `stream` paths: cuda-gl's
/// [`is_unsupported_setup`](cuda_gl::Error::is_unsupported_setup) (no driver, no device, an
/// OpenGL context that is not NVIDIA's or on another GPU, ...), and, for this demo, no GL
/// context current and any EGL failure of the headless mode. Everything else (a bad PTX, a
/// failed launch) is a real error and is reported. The display paths fall back only when CUDA
/// itself is missing: [`is_unsupported_setup`](cuda_gl::Error::is_unsupported_setup) of an error
/// from the CUDA side (the driver, the device, the context, the PTX), never because of GL.
pub fn is_unavailable(error: &cuda_gl::Error) -> bool {
    error.is_unsupported_setup()
        || matches!(
            error,
            cuda_gl::Error::NoGlContext { .. } | cuda_gl::Error::Egl(_)
        )
}

/// The backend picked for a run, and why `auto` fell back to the CPU if it did.
#[derive(Debug)]
pub struct Selected {
    /// The backend.
    pub backend: Backend,
    /// `Some(reason)` when `auto` wanted CUDA but fell back to the CPU.
    pub fallback: Option<String>,
    /// A line to print about how the run was set up, e.g. why a display path runs headless on
    /// an OpenGL that is not on the CUDA device.
    pub note: Option<String>,
}

impl Selected {
    /// `backend`, chosen as asked (no fallback, no note).
    pub fn plain(backend: Backend) -> Selected {
        Selected {
            backend,
            fallback: None,
            note: None,
        }
    }

    /// The CPU backend, because `auto` could not use CUDA: `error` says why.
    pub fn cpu_fallback(error: cuda_gl::Error) -> Selected {
        Selected {
            backend: Backend::Cpu(CpuBackend::new()),
            fallback: Some(crate::one_line(&anyhow::Error::new(error))),
            note: None,
        }
    }

    /// For `--path stream` on the CUDA backend: checks the current GL context for external
    /// memory and gives it to the backend with `burst` frames per burst. Other paths and the
    /// CPU backend ignore it.
    ///
    /// # Errors
    /// The GL context lacks `GL_EXT_memory_object_fd` or an entry point.
    pub fn with_stream_gl(mut self, path: PathChoice, burst: u64) -> Result<Selected> {
        if let (Backend::Cuda(c), PathChoice::Stream) = (&mut self.backend, path) {
            let gl = cuda_gl::external::ExternalGl::current()
                .context("--path stream needs GL_EXT_memory_object_fd")?;
            c.set_stream_gl(gl, usize::try_from(burst).context("burst too large")?);
        }
        Ok(self)
    }

    /// Applies `--debug-spin-ms` ([`CudaBackend::debug_spin`]), the watchdog's test hook.
    ///
    /// # Errors
    /// A spin asked of the CPU backend, which has no GPU to keep busy.
    pub fn with_debug_spin(mut self, spin: Option<Duration>) -> Result<Selected> {
        match (self.backend.cuda_base(), spin) {
            (_, None) => {}
            (Some(base), Some(duration)) => base.pending_spin = Some(duration),
            (None, Some(_)) => {
                bail!("--debug-spin-ms needs the CUDA backend, and this run uses the CPU")
            }
        }
        Ok(self)
    }
}

/// What `--backend auto` says when it falls back to the CPU on `path`: `CUDA` for the display
/// paths (which need only CUDA), `CUDA interop` for the others.
pub fn fallback_subject(path: PathChoice) -> &'static str {
    if path.is_display() {
        "CUDA"
    } else {
        "CUDA interop"
    }
}

/// Picks the backend for the GL context current on this thread (the window's): CUDA on the
/// device behind it (for a display path, on device `ordinal` where that GL is on no CUDA GPU),
/// the CPU, or (auto) CUDA when available and the CPU otherwise.
///
/// # Errors
/// With `--backend cuda`, why CUDA cannot be used; with `auto`, CUDA errors that do not mean
/// "unavailable" (see [`is_unavailable`]).
pub fn for_current_gl(choice: BackendChoice, path: PathChoice, ordinal: usize) -> Result<Selected> {
    let cuda = || -> Result<Backend, cuda_gl::Error> {
        if path.is_display() {
            let mode = display::forced_mode(path);
            Ok(Backend::Display(Box::new(DisplayBackend::for_current_gl(
                mode, ordinal,
            )?)))
        } else {
            Ok(Backend::Cuda(Box::new(CudaBackend::for_current_gl(path)?)))
        }
    };
    match choice {
        BackendChoice::Cpu => Ok(Selected::plain(Backend::Cpu(CpuBackend::new()))),
        BackendChoice::Cuda => cuda().map(Selected::plain).context(if path.is_display() {
            "the CUDA backend cannot run here"
        } else {
            "the CUDA backend cannot run on this window's OpenGL context"
        }),
        BackendChoice::Auto => match cuda() {
            Ok(backend) => Ok(Selected::plain(backend)),
            Err(e) if falls_back(path, &e) => Ok(Selected::cpu_fallback(e)),
            Err(e) => Err(e).context("starting the CUDA backend"),
        },
    }
}

/// Whether `--backend auto` on `path` runs on the CPU after `error` from setting up CUDA: for
/// the display paths, when CUDA is missing (`is_unsupported_setup`; their set-up makes no GL
/// call that could fail); for the others, when interop is unavailable ([`is_unavailable`]).
pub fn falls_back(path: PathChoice, error: &cuda_gl::Error) -> bool {
    if path.is_display() {
        error.is_unsupported_setup()
    } else {
        is_unavailable(error)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_classification() {
        let load = cuda_gl::Error::Load(cuda_gl::sys::LoadError::NotFound { tried: Vec::new() });
        assert!(is_unavailable(&load));
        assert!(!is_unavailable(&cuda_gl::Error::Usage(
            cuda_gl::UsageError::ZeroGlName { kind: "buffer" }
        )));
        let no_device = cuda_gl::Error::Cuda(cuda_gl::CudaError {
            call: "cuInit",
            code: cuda_gl::sys::CUresult::CUDA_ERROR_NO_DEVICE,
            name: "CUDA_ERROR_NO_DEVICE".into(),
            description: "no CUDA-capable device is detected".into(),
        });
        assert!(is_unavailable(&no_device));
        // No CUDA at all: every path falls back.
        for path in [PathChoice::Auto, PathChoice::Staged, PathChoice::Surface] {
            assert!(falls_back(path, &load), "{path}");
            assert!(falls_back(path, &no_device), "{path}");
        }
    }

    #[test]
    fn display_paths_fall_back_only_without_cuda() {
        let no_gl = cuda_gl::Error::NoGlContext {
            source: cuda_gl::CudaError {
                call: "cuGLGetDevices",
                code: cuda_gl::sys::CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT,
                name: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT".into(),
                description: "invalid OpenGL or DirectX context".into(),
            },
        };
        assert!(falls_back(PathChoice::Pbo, &no_gl));
        for path in [PathChoice::Auto, PathChoice::Interop, PathChoice::Staged] {
            assert!(!falls_back(path, &no_gl), "{path}");
        }
        let usage = cuda_gl::Error::Usage(cuda_gl::UsageError::ZeroGlName { kind: "texture" });
        assert!(!falls_back(PathChoice::Auto, &usage));
        assert_eq!(fallback_subject(PathChoice::Auto), "CUDA");
        assert_eq!(fallback_subject(PathChoice::Surface), "CUDA interop");
    }
}
