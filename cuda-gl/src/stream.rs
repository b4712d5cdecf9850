//! Streams (owned, special, or borrowed from another library) and events.

use crate::context::Context;
use crate::error::{Result, UsageError};
use crate::result;
use crate::wait::poll_within;
use cuda_gl_sys as sys;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use crate::wait::wait_limit;

/// Refuses `stream` unless it belongs to `ctx`, the context of `owner` (e.g. "the kernel's
/// module"): work queued on a stream of another context cannot use `owner`'s handles.
pub(crate) fn check_same_context(ctx: &Context, stream: &impl AsStream, owner: &str) -> Result<()> {
    if stream.raw_context() == ctx.raw() {
        Ok(())
    } else {
        Err(UsageError::WrongCudaContext {
            what: "stream",
            owner: owner.into(),
        }
        .into())
    }
}

/// [`check_not_capturing`](crate::queue::check_not_capturing) for `stream`, with its context
/// bound first: the quick refusal before calls the driver itself refuses under capture (map,
/// unmap) or that then queue through [`crate::queue`].
///
/// # Errors
/// As `check_not_capturing`, and the driver's error from binding the context.
pub(crate) fn refuse_capturing(
    ctx: &Context,
    stream: &impl AsStream,
    call: &'static str,
) -> Result<()> {
    ctx.bind()?;
    // SAFETY: (1) of `AsStream`: the handle is live while `stream` is borrowed; its context was
    // checked against `ctx` by the callers, and is bound.
    unsafe { crate::queue::check_not_capturing(stream.raw_stream(), call) }
}

/// A stream that work can be queued on: cuda-gl's [`Stream`], or one from another library.
///
/// Mapping and unmapping take any `AsStream`, so the map can run on the caller's own stream.
///
/// With the `cudarc` feature, cudarc's `CudaStream` and `Arc<CudaStream>` implement it too.
///
/// # Safety
/// Implementors guarantee that:
/// 1. [`AsStream::raw_stream`] returns a stream handle that stays valid for as long as `self` is
///    borrowed, and the same handle on every call while it is (cuda-gl checks one call's
///    handle and queues on another's);
/// 2. [`AsStream::raw_context`] is the context that stream belongs to.
pub unsafe trait AsStream {
    /// The raw `CUstream` (null, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` included).
    fn raw_stream(&self) -> sys::CUstream;
    /// The raw `CUcontext` the stream belongs to.
    fn raw_context(&self) -> sys::CUcontext;
    /// The stream object itself as [`Any`](std::any::Any), for cuda-gl's adapters to other
    /// libraries: a guard mapped on a stream that returns itself here keeps it, and the `cudarc`
    /// feature's views find cudarc's `Arc<CudaStream>` through it. `None` by default. Only
    /// cuda-gl can call or override it (its argument's type cannot be named outside the
    /// crate); it carries no promise: what uses it checks the handle again.
    #[doc(hidden)]
    fn as_any(&self, _: adapter::Token) -> Option<&dyn std::any::Any> {
        None
    }
}

/// What seals [`AsStream::as_any`]: a type only this crate can name.
pub(crate) mod adapter {
    /// The argument of [`AsStream::as_any`](super::AsStream::as_any).
    #[derive(Debug, Clone, Copy)]
    pub struct Token;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Owned,
    Borrowed,
    Special,
}

/// How a created stream relates to the legacy default stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StreamFlags {
    /// `CU_STREAM_NON_BLOCKING`: work does not wait for the legacy default stream (the usual
    /// choice).
    #[default]
    NonBlocking,
    /// `CU_STREAM_DEFAULT`: work synchronizes with the legacy default stream.
    Blocking,
}

/// A CUDA stream in a [`Context`].
///
/// `Stream` is `Send + Sync`: the driver's stream calls are thread-safe.
#[derive(Debug)]
pub struct Stream {
    ctx: Arc<Context>,
    raw: sys::CUstream,
    kind: Kind,
}

// SAFETY: CUstream handles may be used from any thread.
unsafe impl Send for Stream {}
// SAFETY: every method takes `&self` and the driver serialises stream calls itself.
unsafe impl Sync for Stream {}

impl Stream {
    /// Creates a stream.
    ///
    /// # Errors
    /// The driver's error from `cuStreamCreate`.
    #[doc(alias = "cuStreamCreate")]
    pub fn new(ctx: &Arc<Context>, flags: StreamFlags) -> Result<Stream> {
        ctx.bind()?;
        let raw_flags = match flags {
            StreamFlags::NonBlocking => sys::CUstream_flags::CU_STREAM_NON_BLOCKING.0,
            StreamFlags::Blocking => sys::CUstream_flags::CU_STREAM_DEFAULT.0,
        };
        Ok(Stream {
            ctx: ctx.clone(),
            raw: result::stream::create(raw_flags)?,
            kind: Kind::Owned,
        })
    }

    /// The legacy default stream (`CU_STREAM_LEGACY`) of `ctx`.
    pub fn legacy(ctx: &Arc<Context>) -> Stream {
        Stream {
            ctx: ctx.clone(),
            raw: sys::CU_STREAM_LEGACY,
            kind: Kind::Special,
        }
    }

    /// The per-thread default stream (`CU_STREAM_PER_THREAD`) of `ctx`.
    pub fn per_thread(ctx: &Arc<Context>) -> Stream {
        Stream {
            ctx: ctx.clone(),
            raw: sys::CU_STREAM_PER_THREAD,
            kind: Kind::Special,
        }
    }

    /// Borrows a stream created by another library. It is not destroyed on drop.
    ///
    /// # Safety
    /// 1. `raw` is a live stream of `ctx` (or a special stream handle).
    /// 2. It stays live for as long as the returned `Stream` and everything mapped on it.
    pub unsafe fn from_raw(ctx: &Arc<Context>, raw: sys::CUstream) -> Stream {
        Stream {
            ctx: ctx.clone(),
            raw,
            kind: Kind::Borrowed,
        }
    }

    /// The context this stream belongs to.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The raw `CUstream`.
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Waits until all work queued on the stream has finished.
    ///
    /// # Errors
    /// The driver's error from `cuStreamSynchronize`, such as a kernel's
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`.
    #[doc(alias = "cuStreamSynchronize")]
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the stream is live for as long as `self` (constructors' contracts).
        Ok(unsafe { result::stream::synchronize(self.raw) }?)
    }

    /// Makes future work on this stream wait for `event`.
    ///
    /// # Errors
    /// The driver's error from `cuStreamWaitEvent`.
    #[doc(alias = "cuStreamWaitEvent")]
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: both handles are live while borrowed.
        Ok(unsafe { result::stream::wait_event(self.raw, event.raw) }?)
    }
}

// SAFETY: the handle is live while `self` is (owned streams are destroyed only in Drop; borrowed
// ones by their constructor's contract) and belongs to `self.ctx`.
unsafe impl AsStream for Stream {
    fn raw_stream(&self) -> sys::CUstream {
        self.raw
    }
    fn raw_context(&self) -> sys::CUcontext {
        self.ctx.raw()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.kind != Kind::Owned {
            return;
        }
        self.ctx
            .release_in_drop("destroy a stream", "cuStreamDestroy", || {
                // SAFETY: the stream was created by `Stream::new` and is not used after this.
                unsafe { result::stream::destroy(self.raw) }
            });
    }
}

/// A CUDA event, for timing and ordering.
#[derive(Debug)]
pub struct Event {
    ctx: Arc<Context>,
    raw: sys::CUevent,
    timing: bool,
}

// SAFETY: CUevent handles may be used from any thread.
unsafe impl Send for Event {}
// SAFETY: the driver serialises event calls itself.
unsafe impl Sync for Event {}

impl Event {
    /// Creates an event; with `timing` it can measure elapsed time.
    ///
    /// # Errors
    /// The driver's error from `cuEventCreate`.
    #[doc(alias = "cuEventCreate")]
    pub fn new(ctx: &Arc<Context>, timing: bool) -> Result<Event> {
        ctx.bind()?;
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT.0
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING.0
        };
        Ok(Event {
            ctx: ctx.clone(),
            raw: result::stream::event_create(flags)?,
            timing,
        })
    }

    /// Records the event on `stream`.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context; the driver's error
    /// from `cuEventRecord`.
    #[doc(alias = "cuEventRecord")]
    pub fn record(&self, stream: &impl AsStream) -> Result<()> {
        check_same_context(&self.ctx, stream, "the event")?;
        self.ctx.bind()?;
        // SAFETY: both handles are live while borrowed and share a context (checked above).
        Ok(unsafe { result::stream::event_record(self.raw, stream.raw_stream()) }?)
    }

    /// [`record`](Self::record) for cuda-gl's own ordering, which needs the record to happen
    /// now: made on cuda-gl's private stream joined to `stream` (`crate::queue`), refused when
    /// `stream` captures a graph (`call` names the refused call).
    pub(crate) fn record_ordered(&self, stream: &impl AsStream, call: &'static str) -> Result<()> {
        check_same_context(&self.ctx, stream, "the event")?;
        let raw = self.raw;
        // SAFETY: both handles are live while borrowed and share a context (checked above).
        unsafe {
            self.ctx.run_now(stream.raw_stream(), call, |p| {
                Ok(result::stream::event_record(raw, p)?)
            })
        }
    }

    /// Waits until the work before the recorded point has finished.
    ///
    /// # Errors
    /// The driver's error from `cuEventSynchronize`.
    #[doc(alias = "cuEventSynchronize")]
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the event is live.
        Ok(unsafe { result::stream::event_synchronize(self.raw) }?)
    }

    /// Whether the work before the recorded point has finished, without waiting (an event never
    /// recorded counts as finished).
    ///
    /// # Errors
    /// The driver's error from `cuEventQuery`, other than `CUDA_ERROR_NOT_READY`.
    #[doc(alias = "cuEventQuery")]
    pub fn query(&self) -> Result<bool> {
        self.ctx.bind()?;
        // SAFETY: the event is live.
        Ok(unsafe { result::stream::event_query(self.raw) }?)
    }

    /// Waits until the work before the recorded point has finished, polling `cuEventQuery` for
    /// at most `limit` (an event never recorded counts as finished).
    ///
    /// Unlike [`Event::synchronize`], it gives up: a kernel that never ends yields an error
    /// instead of a hung thread. It polls without pausing for the first 100 µs (short waits,
    /// such as a staged display band's copy, end within microseconds of the work), then sleeps
    /// between polls, so a long wait costs a little latency (a sleep lasts at least the
    /// system's timer slack, 50 µs by default on Linux) rather than a busy core.
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) when the work has not finished within `limit`;
    /// the driver's error from `cuEventQuery`, such as a kernel's `CUDA_ERROR_ILLEGAL_ADDRESS`.
    #[doc(alias = "cuEventQuery")]
    pub fn wait_for(&self, limit: Duration) -> Result<()> {
        poll_within(
            limit,
            "a CUDA event (the work queued before it was recorded)",
            || self.query(),
        )
    }

    /// The context the event was made in (for a drop that records its failed wait there).
    #[cfg(feature = "wgpu")]
    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Milliseconds between `start` and `self`, both recorded and complete.
    ///
    /// # Errors
    /// [`UsageError::EventWithoutTiming`] when either event was created without timing; the
    /// driver's error from `cuEventElapsedTime` (e.g. `CUDA_ERROR_NOT_READY`).
    #[doc(alias = "cuEventElapsedTime")]
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        if !(self.timing && start.timing) {
            return Err(UsageError::EventWithoutTiming.into());
        }
        self.ctx.bind()?;
        // SAFETY: both events are live and were created with timing.
        Ok(unsafe { result::stream::event_elapsed(start.raw, self.raw) }?)
    }

    /// The raw `CUevent`.
    pub fn raw(&self) -> sys::CUevent {
        self.raw
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        self.ctx
            .release_in_drop("destroy an event", "cuEventDestroy", || {
                // SAFETY: the event was created by `Event::new` and is not used after this.
                unsafe { result::stream::event_destroy(self.raw) }
            });
    }
}
