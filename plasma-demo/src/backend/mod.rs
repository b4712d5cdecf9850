//! What computes the frames: the CUDA kernel (PBO or surface path) or the CPU, behind one enum.

pub mod cpu;
pub mod cuda;
pub mod stream;

pub use cpu::CpuBackend;
pub use cuda::CudaBackend;

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
    /// The CPU renders into host memory and uploads with `glBufferSubData`.
    Cpu(CpuBackend),
}

impl Backend {
    /// What the renderer must allocate for this backend.
    pub fn upload(&self) -> Upload {
        match self {
            Backend::Cuda(c) => c.upload(),
            Backend::Cpu(_) => Upload::PixelBuffer,
        }
    }

    /// `cuda` or `cpu`.
    pub fn kind(&self) -> &'static str {
        match self {
            Backend::Cuda(_) => "cuda",
            Backend::Cpu(_) => "cpu",
        }
    }

    /// The CUDA path, or `None` for the CPU backend.
    pub fn path(&self) -> Option<PathChoice> {
        match self {
            Backend::Cuda(c) => Some(c.path()),
            Backend::Cpu(_) => None,
        }
    }

    /// A short label for titles: `CUDA pbo`, `CUDA surface` or `CPU`.
    pub fn short_label(&self) -> String {
        match self {
            Backend::Cuda(c) => format!("CUDA {}", c.path()),
            Backend::Cpu(_) => "CPU".into(),
        }
    }

    /// A longer description: the GPU, or the number of threads.
    pub fn description(&self) -> String {
        match self {
            Backend::Cuda(c) => format!(
                "CUDA {} path on {} (device {})",
                c.path(),
                c.device_name(),
                c.context().device().ordinal()
            ),
            Backend::Cpu(c) => format!(
                "CPU on {} thread(s), uploaded with glBufferSubData + glTexSubImage2D",
                c.threads()
            ),
        }
    }

    /// Registers the renderer's GL objects with CUDA (nothing for the CPU).
    ///
    /// # Errors
    /// The CUDA registration error.
    pub fn attach(&mut self, renderer: &Renderer) -> Result<()> {
        match self {
            Backend::Cuda(c) => c.attach(renderer),
            Backend::Cpu(_) => Ok(()),
        }
    }

    /// Drops the CUDA registrations (before the renderer replaces its GL objects).
    ///
    /// # Errors
    /// The CUDA unregistration error.
    pub fn detach(&mut self) -> Result<()> {
        match self {
            Backend::Cuda(c) => c.detach(),
            Backend::Cpu(_) => Ok(()),
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
            Backend::Cpu(c) => c.render(frame).map(|()| None),
        }
    }

    /// The stream path's mean and largest latency in frames (`None` for the other paths).
    pub fn stream_latency(&self) -> Option<(f64, u64)> {
        match self {
            Backend::Cuda(c) => c.stream_latency(),
            Backend::Cpu(_) => None,
        }
    }

    /// Waits for outstanding work and reports deferred errors.
    ///
    /// # Errors
    /// A CUDA error of work queued earlier.
    pub fn finish(&mut self, profiler: &mut Profiler) -> Result<()> {
        match self {
            Backend::Cuda(c) => c.finish(profiler),
            Backend::Cpu(_) => Ok(()),
        }
    }
}

/// Whether `error` means "CUDA interop is not possible here", the cases where `--backend auto`
/// falls back to the CPU: cuda-gl's [`is_unsupported_setup`](cuda_gl::Error::is_unsupported_setup)
/// (no driver, no device, an OpenGL context that is not NVIDIA's or on another GPU, ...), and,
/// for this demo, no GL context current and any EGL failure of the headless mode. Everything
/// else (a bad PTX, a failed launch) is a real error and is reported.
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
}

impl Selected {
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
        match (&mut self.backend, spin) {
            (_, None) => {}
            (Backend::Cuda(c), Some(duration)) => c.debug_spin(duration),
            (Backend::Cpu(_), Some(_)) => {
                bail!("--debug-spin-ms needs the CUDA backend, and this run uses the CPU")
            }
        }
        Ok(self)
    }
}

/// Picks the backend for the GL context current on this thread (the window's): CUDA on the
/// device behind it, the CPU, or (auto) CUDA when available and the CPU otherwise.
///
/// # Errors
/// With `--backend cuda`, why CUDA cannot be used; with `auto`, CUDA errors that do not mean
/// "unavailable" (see [`is_unavailable`]).
pub fn for_current_gl(choice: BackendChoice, path: PathChoice) -> Result<Selected> {
    let cpu = || Backend::Cpu(CpuBackend::new());
    match choice {
        BackendChoice::Cpu => Ok(Selected {
            backend: cpu(),
            fallback: None,
        }),
        BackendChoice::Cuda => {
            let cuda = CudaBackend::for_current_gl(path)
                .context("the CUDA backend cannot run on this window's OpenGL context")?;
            Ok(Selected {
                backend: Backend::Cuda(Box::new(cuda)),
                fallback: None,
            })
        }
        BackendChoice::Auto => match CudaBackend::for_current_gl(path) {
            Ok(cuda) => Ok(Selected {
                backend: Backend::Cuda(Box::new(cuda)),
                fallback: None,
            }),
            Err(e) if is_unavailable(&e) => Ok(Selected {
                backend: cpu(),
                fallback: Some(crate::one_line(&anyhow::Error::new(e))),
            }),
            Err(e) => Err(e).context("starting the CUDA backend"),
        },
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
    }
}
