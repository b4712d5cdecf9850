//! Work that must run when it is queued: cuda-gl's private stream per context, joined to the
//! caller's stream by events, so that a CUDA graph capture on the caller's stream, begun by any
//! thread at any moment, never captures it.
//!
//! A capture records work instead of running it; the graph may be launched after the memory
//! the work touches is gone. Asking the caller's stream (`cuStreamIsCapturing`) before queueing
//! is not enough: another thread may begin a capture on it right after the answer (cudarc's
//! `begin_capture` is safe and its streams are `Send + Sync`). So the work goes on a stream that
//! only cuda-gl can reach:
//!
//! 1. an event is recorded on the caller's stream, and the private stream waits for it: if the
//!    caller's stream was capturing at the record, the wait pulls the private stream into that
//!    capture, and nothing else can (no other code has the private stream);
//! 2. both streams are asked whether they capture (the driver may also refuse the wait: a
//!    captured event waited on by a stream that does not capture). If either does, the
//!    capture is invalidated (`cuStreamSynchronize` of a capturing stream is illegal and ends
//!    its usefulness: the capture's `end_capture` fails and no graph exists), the private
//!    stream and its events are retired (kept until the context goes, as the capture may
//!    reference them), and the call is refused with [`Error::StreamCapturing`];
//! 3. otherwise the work is queued there, runs in order after the caller's earlier work, and a
//!    second event makes the caller's stream wait for it, so later work on the caller's stream
//!    comes after it. When that wait cannot be queued, the work is waited for instead.
//!
//! The steps run under one lock per context: no two threads interleave their joins. Cost: two
//! event records, two waits, four capture queries, one event query and two capture-mode
//! exchanges per call, on the calls that move bytes
//! (copies, memsets) and those that record cuda-gl's ordering events.

use crate::error::{Error, Result};
use crate::result;
use cuda_gl_sys as sys;

/// Refuses `call` on raw stream `s` (of the bound context) while it captures a CUDA graph:
/// captured work runs when the graph is launched, not now, after the memory or mapping it
/// touches may be gone. A stream whose capture status cannot be asked is refused too, with the
/// driver's error (for instance the legacy stream while another stream captures globally).
///
/// # Safety
/// 1. `s` is a live stream of the bound context, or a special stream handle.
///
/// # Errors
/// [`Error::StreamCapturing`] naming `call`; the driver's error from `cuStreamIsCapturing`.
pub(crate) unsafe fn check_not_capturing(s: sys::CUstream, call: &'static str) -> Result<()> {
    // SAFETY: (1).
    if unsafe { result::stream::is_capturing(s) }? {
        Err(Error::StreamCapturing { call })
    } else {
        Ok(())
    }
}

/// Whether `e` is one of the driver's stream-capture codes
/// (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` 900 to `CUDA_ERROR_CAPTURED_EVENT` 907 and
/// `CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD` 908).
fn is_capture_error(e: &Error) -> bool {
    matches!(e, Error::Cuda(c) if (900..=908).contains(&c.code.0))
}

/// This thread in the relaxed capture interaction mode while it lives; the previous mode is
/// restored on drop.
struct RelaxedCapture(sys::CUstreamCaptureMode);

impl RelaxedCapture {
    fn enter() -> Result<RelaxedCapture> {
        let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        result::stream::exchange_capture_mode(&mut mode)?;
        Ok(RelaxedCapture(mode))
    }
}

impl Drop for RelaxedCapture {
    fn drop(&mut self) {
        if let Err(e) = result::stream::exchange_capture_mode(&mut self.0) {
            log::error!("cuda-gl: restoring the thread's stream capture mode failed: {e}");
        }
    }
}

/// `CU_EVENT_DISABLE_TIMING`: events that only order.
const ORDER_ONLY: u32 = 0x2;

/// The private stream of one context and its two events; made at first use.
#[derive(Debug, Default)]
pub(crate) struct PrivateQueue {
    live: Option<Live>,
    /// Streams and events that a capture may reference: destroyed with the context.
    retired: Vec<Live>,
}

#[derive(Debug)]
struct Live {
    stream: sys::CUstream,
    joined: sys::CUevent,
    done: sys::CUevent,
}

impl Live {
    /// A private stream and its two events, in the bound context; what was made before a
    /// failure is destroyed.
    fn create() -> Result<Live> {
        let mut live = Live {
            stream: result::stream::create(sys::CUstream_flags::CU_STREAM_NON_BLOCKING.0)?,
            joined: std::ptr::null_mut(),
            done: std::ptr::null_mut(),
        };
        let events = result::stream::event_create(ORDER_ONLY).and_then(|joined| {
            live.joined = joined;
            result::stream::event_create(ORDER_ONLY).map(|done| live.done = done)
        });
        if let Err(e) = events {
            // SAFETY: made just above and never used.
            unsafe { live.destroy() };
            return Err(e);
        }
        Ok(live)
    }

    /// Destroys the events (those made) and the stream.
    ///
    /// # Safety
    /// 1. Nothing uses them afterwards, nor does a capture still hold them.
    unsafe fn destroy(self) {
        // SAFETY: (1); null events were never made.
        unsafe {
            for event in [self.joined, self.done] {
                if !event.is_null() {
                    let _ = result::stream::event_destroy(event);
                }
            }
            if let Err(e) = result::stream::destroy(self.stream) {
                log::warn!("cuda-gl: destroying the private stream failed: {e}");
            }
        }
    }
}

impl PrivateQueue {
    /// The live private stream and its events, made at first use.
    fn live(&mut self) -> Result<&Live> {
        let live = match self.live.take() {
            Some(live) => live,
            None => Live::create()?,
        };
        Ok(self.live.insert(live))
    }

    /// Queues `work` on the private stream, ordered after the work queued on `stream` so far
    /// and before the work queued on it later (see the module docs). The context is bound.
    ///
    /// # Safety
    /// 1. `stream` is a live stream of the bound context, or a special stream handle.
    ///
    /// # Errors
    /// [`Error::StreamCapturing`] naming `call` when `stream` is capturing; the driver's errors
    /// of the joins; `work`'s error.
    pub(crate) unsafe fn run<T>(
        &mut self,
        stream: sys::CUstream,
        call: &'static str,
        work: impl FnOnce(sys::CUstream) -> Result<T>,
    ) -> Result<T> {
        // A GLOBAL or THREAD_LOCAL capture anywhere would make this thread's synchronizes and
        // event queries fail, and a wait that fails must not return while the work runs.
        let _relaxed = RelaxedCapture::enter()?;
        // The common refusal, with no event spent: the stream captures already.
        // SAFETY: (1).
        unsafe { check_not_capturing(stream, call) }?;
        let live = self.live()?;
        let (private, joined, done) = (live.stream, live.joined, live.done);
        // SAFETY: (1); the event and the private stream are live, in the bound context.
        let joined_ok = unsafe {
            result::stream::event_record(joined, stream)
                .and_then(|()| result::stream::wait_event(private, joined))
        };
        // The record may have gone into a capture begun since the check: then the wait fails
        // (a captured event, on a stream that does not capture), or pulls the private stream
        // into the capture, and the event stays "captured" after that capture ends
        // (`CUDA_ERROR_CAPTURED_EVENT` from a query). In any of these cases, and whenever the
        // caller's stream captures by now, the call is refused and the capture invalidated.
        // SAFETY: the event is live.
        let query = unsafe { result::stream::event_query(joined) };
        // SAFETY: both streams are live.
        let captured = query.as_ref().err().is_some_and(is_capture_error)
            || joined_ok.as_ref().err().is_some_and(is_capture_error)
            || unsafe {
                result::stream::is_capturing(stream).unwrap_or(true)
                    || result::stream::is_capturing(private).unwrap_or(true)
            };
        if captured {
            // SAFETY: as above; the errors are the point (calls that are illegal during a
            // capture, which they invalidate: its `end_capture` then gives no graph).
            unsafe {
                let _ = result::stream::synchronize(stream);
                let _ = result::stream::synchronize(private);
            }
            // The stream and the events may be referenced by the capture: kept until the
            // context goes, and replaced now.
            if let Some(live) = self.live.take() {
                self.retired.push(live);
            }
            return Err(Error::StreamCapturing { call });
        }
        query?;
        joined_ok?;
        // Whatever the work returns, what it queued is ordered before the caller's later work.
        let out = work(private);
        // SAFETY: the event and both streams are live, in the bound context.
        let ordered = unsafe {
            result::stream::event_record(done, private)
                .and_then(|()| result::stream::wait_event(stream, done))
                .and_then(|()| result::stream::is_capturing(stream))
        };
        if out.is_err() || !matches!(ordered, Ok(false)) {
            // The caller's later work may not wait for this work (its stream began capturing,
            // which may have taken the wait), or the work failed after queueing some of it:
            // it is finished first. In relaxed mode only a
            // context that is lost fails this wait, and then no work runs any more.
            // SAFETY: the private stream is live.
            unsafe { result::stream::synchronize(private) }?;
        }
        out
    }

    /// Destroys the private streams and events. The context is bound, and nothing of it is
    /// used afterwards.
    pub(crate) fn release(&mut self) {
        self.retired.extend(self.live.take());
        for live in self.retired.drain(..) {
            // SAFETY: a live stream; one that a capture still holds is left alone (with its
            // events): the capture may use them until it ends.
            if unsafe { result::stream::is_capturing(live.stream) }.unwrap_or(true) {
                continue;
            }
            // SAFETY: (1): the context goes, and no capture holds the stream (above).
            unsafe { live.destroy() };
        }
    }
}
