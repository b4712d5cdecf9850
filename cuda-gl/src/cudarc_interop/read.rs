//! cudarc memory as cuda-gl's calls that read it take it (a display target's
//! [`show_cudarc`](crate::display::DisplayTarget::show_cudarc) and
//! [`show_video_cudarc`](crate::display::DisplayTarget::show_video_cudarc), and
//! [`VideoPlanes::upload_cudarc`](crate::video::VideoPlanes::upload_cudarc)): its address and
//! size, with cudarc's read recorded right after the work that reads it, in that work's run.
//! Only the conversion: the show or the upload is the caller's.

use super::memory::{CudarcEvent, CudarcSource, checked_bytes};
use crate::context::Context;
use crate::error::Result;
use crate::memory::DevicePtr;
use cuda_gl_sys as sys;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// cudarc memory read on `stream`: its address and size in bytes, and cudarc's read event,
/// which [`record`](Self::record) records right after the work that reads the memory, in that
/// work's run.
pub(crate) struct CudarcRead<'a> {
    /// The first byte.
    pub(crate) ptr: DevicePtr<'a>,
    /// The memory's bytes.
    pub(crate) bytes: usize,
    event: CudarcEvent<'a>,
    stream: &'a CudaStream,
}

impl<'a> CudarcRead<'a> {
    /// `src` read on `stream`, which must be of `src`'s cudarc context; `owner` names the
    /// reader in errors. `stream` waits for cudarc's earlier writes of `src` (cudarc's event
    /// protocol), so it is asked only once the caller checked `stream` against its own context.
    ///
    /// # Errors
    /// As `checked_bytes`: [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext)
    /// for memory of another cudarc context, [`UsageError::TooLarge`](crate::UsageError::TooLarge).
    pub(crate) fn new<T, S: CudarcSource<T>>(
        src: &'a S,
        stream: &'a Arc<CudaStream>,
        owner: &str,
    ) -> Result<CudarcRead<'a>> {
        let bytes = checked_bytes(src, stream, owner)?;
        let (ptr, guard) = src.device_ptr(stream);
        Ok(CudarcRead {
            ptr: DevicePtr::new(ptr),
            bytes,
            event: CudarcEvent::take(guard),
            stream,
        })
    }

    /// Records cudarc's read event on `private`, cuda-gl's private stream, right after the work
    /// queued on it that reads the memory (a copy, the colour map's or the video conversion's
    /// kernel), in that work's run: the run's [`AfterWork`](crate::queue::AfterWork). cudarc
    /// then orders its later writes and frees after that work. Called once per run when the
    /// memory is read in several (each record covers the private stream's work before it).
    pub(crate) fn record(&mut self, private: sys::CUstream) {
        self.event.record(private);
    }

    /// Once the work's run returned: what is left of cudarc's guard (`CudarcEvent::done`).
    ///
    /// # Errors
    /// As `CudarcEvent::done`: the timeout or driver's error of its fallback wait.
    pub(crate) fn done(self, ctx: &Context) -> Result<()> {
        self.event.done(ctx, self.stream)
    }
}
