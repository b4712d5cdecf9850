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
    /// reader in errors. `check` is given the memory's length in bytes first, and refuses what
    /// the reader cannot take (a frame that does not fit, of another size) before cudarc is
    /// asked for the address: that makes `stream` wait for cudarc's earlier writes of `src`
    /// (cudarc's event protocol), a wait left queued when the call is refused. So it is asked
    /// only once the caller checked `stream` against its own context, and `check` passed.
    ///
    /// # Errors
    /// As `checked_bytes`: [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext)
    /// for memory of another cudarc context, [`UsageError::TooLarge`](crate::UsageError::TooLarge);
    /// `check`'s.
    pub(crate) fn new<T, S: CudarcSource<T>>(
        src: &'a S,
        stream: &'a Arc<CudaStream>,
        owner: &str,
        check: impl FnOnce(usize) -> Result<()>,
    ) -> Result<CudarcRead<'a>> {
        let bytes = checked_bytes(src, stream, owner)?;
        check(bytes)?;
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

    /// Once the work's run returned with `out`: what is left of cudarc's guard
    /// (`CudarcEvent::done`), then `out`. When both failed, the work's error is returned and
    /// the guard's logged.
    ///
    /// # Errors
    /// `out`'s; then as `CudarcEvent::done`: the timeout or driver's error of its fallback wait
    /// (the work ran: what it wrote, a texture or a frame, holds the memory's bytes).
    pub(crate) fn done<R>(self, ctx: &Context, out: Result<R>) -> Result<R> {
        work_first(out, self.event.done(ctx, self.stream))
    }
}

/// `out` when it failed (`done`'s error, when there is one too, logged), else `done`'s error,
/// else `out`.
fn work_first<R>(out: Result<R>, done: Result<()>) -> Result<R> {
    match (out, done) {
        (Err(e), Err(also)) => {
            log::error!("cuda-gl: after a failed read of cudarc memory ({e}): {also}");
            Err(e)
        }
        (out, done) => done.and(out),
    }
}

#[cfg(test)]
mod tests {
    use super::work_first;
    use crate::error::{Error, UsageError};

    /// The work's error comes first; the fallback wait's is returned only when the work
    /// succeeded (before, `done(..)?` returned the wait's and dropped the work's).
    #[test]
    fn the_works_error_comes_before_the_fallback_waits() {
        let work = || Error::from(UsageError::PinnedBufferUntracked);
        let wait = || Error::Timeout {
            what: "the fallback wait".into(),
            timeout: std::time::Duration::ZERO,
        };
        let both = work_first::<()>(Err(work()), Err(wait()));
        assert!(matches!(both, Err(Error::Usage(_))), "{both:?}");
        let waited = work_first(Ok(1), Err(wait()));
        assert!(matches!(waited, Err(Error::Timeout { .. })), "{waited:?}");
        let worked = work_first::<()>(Err(work()), Ok(()));
        assert!(matches!(worked, Err(Error::Usage(_))), "{worked:?}");
        assert_eq!(work_first(Ok(1), Ok(())).ok(), Some(1));
    }
}
