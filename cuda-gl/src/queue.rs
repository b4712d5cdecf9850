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
//! event records, two waits and three capture queries per call, on the calls that move bytes
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

// SAFETY: the handles are process-wide driver handles, used only under the context's lock.
unsafe impl Send for PrivateQueue {}

impl PrivateQueue {
    fn live(&mut self) -> Result<&Live> {
        if self.live.is_none() {
            let stream = result::stream::create(sys::CUstream_flags::CU_STREAM_NON_BLOCKING.0)?;
            let events = result::stream::event_create(ORDER_ONLY).and_then(|joined| {
                result::stream::event_create(ORDER_ONLY).map(|done| (joined, done))
            });
            match events {
                Ok((joined, done)) => {
                    self.live = Some(Live {
                        stream,
                        joined,
                        done,
                    })
                }
                Err(e) => {
                    // SAFETY: created just above, never used.
                    let _ = unsafe { result::stream::destroy(stream) };
                    return Err(e);
                }
            }
        }
        self.live.as_ref().ok_or(Error::InvalidArgument(
            "cuda-gl's private stream could not be made".into(),
        ))
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
        // into the capture. Either way, and whenever the caller's stream captures by now, the
        // call is refused and the capture invalidated.
        // SAFETY: both streams are live.
        let captured = unsafe {
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
        joined_ok?;
        let out = work(private)?;
        // SAFETY: the event and both streams are live, in the bound context.
        let ordered = unsafe {
            result::stream::event_record(done, private)
                .and_then(|()| result::stream::wait_event(stream, done))
        };
        if ordered.is_err() {
            // The caller's later work cannot be ordered after this work: it is finished first.
            // SAFETY: the private stream is live.
            unsafe { result::stream::synchronize(private) }?;
        }
        Ok(out)
    }

    /// Destroys the private streams and events. The context is bound, and nothing of it is
    /// used afterwards.
    pub(crate) fn release(&mut self) {
        self.retired.extend(self.live.take());
        for live in self.retired.drain(..) {
            // SAFETY: created by `live`, used by nothing after the context goes.
            unsafe {
                let _ = result::stream::event_destroy(live.joined);
                let _ = result::stream::event_destroy(live.done);
                if let Err(e) = result::stream::destroy(live.stream) {
                    log::warn!("cuda-gl: destroying the private stream failed: {e}");
                }
            }
        }
    }
}
