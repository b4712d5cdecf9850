//! Work that must run when it is queued: cuda-gl's private stream per context, joined to the
//! caller's stream by events, so that a CUDA graph capture on the caller's stream, begun or ended
//! by any thread at any moment, never captures it.
//!
//! A capture records work instead of running it; the graph may be launched after the memory
//! the work touches is gone. Asking the caller's stream (`cuStreamIsCapturing`) before queueing
//! is not enough: another thread may begin a capture on it right after the answer (cudarc's
//! `begin_capture` is safe and its streams are `Send + Sync`). So the work goes on a stream that
//! only cuda-gl can reach, and cuda-gl makes no call on the caller's stream that is illegal
//! during a capture: calling one (`cuStreamSynchronize`) while another thread ends that capture
//! crashed the process inside the driver (SIGSEGV, driver 580; `docs/repro/capture_race.py`).
//!
//! 1. an event is recorded on the caller's stream (legal during a capture);
//! 2. the event is queried: a record that a capture took answers `CUDA_ERROR_CAPTURED_EVENT`
//!    (`CUDA_ERROR_INVALID_VALUE` once that capture has ended), and the call is refused with
//!    [`Error::StreamCapturing`]. Such a record is only a dependency inside the capture, not a
//!    node of its graph (measured on driver 580: the graph holds no event node, launching it
//!    records nothing, and the event records plainly again afterwards), so the events stay in
//!    use. A plain record is waited for by the private stream, which therefore never joins a
//!    capture;
//! 3. the work is queued on the private stream, after the caller's work so far;
//! 4. a second event makes the caller's stream wait for it, so later work on the caller's stream
//!    comes after it. When that wait cannot be queued, or a capture began and may have taken it,
//!    the work is waited for instead (the private stream never captures, so that wait is legal), at
//!    most the [wait limit](crate::wait_limit): past it the call returns [`Error::Timeout`], and
//!    the queue remembers that work on the private stream may run unordered with its callers'
//!    streams. Until the private stream is seen idle, every call that ends the life of memory
//!    that work may touch (an unmap, on the map's stream) first waits for it, at most the wait
//!    limit, and is refused past it ([`PrivateQueue::settle`]): ordered on the caller's stream
//!    alone, it could run before or during the work. That holds across the `Context`s that
//!    share one CUDA context (`Context::settle_queued` waits for all their unordered queues).
//!    cudarc memory that the work reads or writes is covered by cudarc's own event, which
//!    cuda-gl records on the private stream right after the work, in the same run
//!    ([`then`]; `cudarc_interop::memory`), so cudarc's frees wait for it on any stream.
//!
//! What this guarantees: cuda-gl's copies, memsets and ordering events never become part of a
//! graph; the calls on the caller's stream are records and waits, and the query of cuda-gl's
//! own event. A capture that took the record, or the wait of step 4, is invalidated by the
//! driver (its `end_capture` fails): an error for the capturing thread, never a graph holding
//! cuda-gl's work. What it does not: the driver (580) crashes a call that queues anything on a
//! stream while another thread is inside `cuStreamBeginCapture` on it, and step 1 queues a
//! record (no library can order work after a stream's work without queueing on that stream;
//! cudarc's own calls crash the same way).
//!
//! The steps run under one lock per context: no two threads interleave their joins. Cost: two
//! event records, two waits, two capture queries, one event query and two capture-mode
//! exchanges per call, on the calls that move bytes (copies, memsets) and those that record
//! cuda-gl's ordering events.

use crate::error::{Error, Result};
use crate::result::{self, DriverError};
use crate::wait::{poll_within, wait_limit};
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

/// Whether `e`, from recording or querying an event on a stream that another thread may capture,
/// means a capture took the record: one of the driver's stream-capture codes
/// (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` 900 to `CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD` 908),
/// or `CUDA_ERROR_INVALID_VALUE`, which a query of an event answers once the capture that
/// recorded it has ended.
fn taken_by_capture(e: &DriverError) -> bool {
    matches!(e, DriverError::Cuda(c) if (900..=908).contains(&c.code.0)
        || c.code == sys::CUresult::CUDA_ERROR_INVALID_VALUE)
}

/// This thread in the relaxed capture interaction mode while it lives; the previous mode is
/// restored on drop.
pub(crate) struct RelaxedCapture(sys::CUstreamCaptureMode);

impl RelaxedCapture {
    pub(crate) fn enter() -> Result<RelaxedCapture> {
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

/// Waits for the work queued on private stream `private` so far, polling `cuStreamQuery` for at
/// most the [wait limit](crate::wait_limit) (`cuStreamSynchronize` has no limit: a kernel that
/// never ends on the caller's stream, which the private stream waits for, would hang the thread).
/// For work whose memory outlives the wait when it gives up (owned, and leaked then): a work that
/// borrows host memory for the call waits for its own copies with no limit instead (a DMA must not
/// outlive the borrow), so that what this may leave running never touches a borrow.
///
/// # Safety
/// 1. `private` is the live private stream of the bound context (it never captures).
///
/// # Errors
/// [`Error::Timeout`] past the limit; the driver's error from `cuStreamQuery`, such as a
/// kernel's `CUDA_ERROR_ILLEGAL_ADDRESS`.
pub(crate) unsafe fn wait_within(private: sys::CUstream) -> Result<()> {
    poll_within(
        wait_limit(),
        "cuda-gl's private stream (its copies and the work queued before them on your stream)",
        // SAFETY: (1).
        || Ok(unsafe { result::stream::query(private) }?),
    )
}

/// `CU_EVENT_DISABLE_TIMING`: events that only order.
const ORDER_ONLY: u32 = 0x2;

/// What a run's work queues on the private stream right after itself, in the same run (under
/// the private queue's lock), given the private stream: cudarc's event records
/// (`cudarc_interop::memory`). Recorded once the lock is released, such a record would follow
/// whatever another thread's run queued on the private stream meanwhile, and cudarc's waits for
/// the event (its frees, its later uses of the memory, on any stream) would wait for that
/// unrelated work too, maybe a kernel that never ends.
pub(crate) type AfterWork<'a> = Option<&'a mut dyn FnMut(sys::CUstream)>;

/// `work`, then `after` (see [`AfterWork`]) on the same private stream, in the same run;
/// `after` runs whether `work` failed or not (it may have queued some of its work), and on
/// unwind too ([`RunAfter`]).
pub(crate) fn then<T>(
    work: impl FnOnce(sys::CUstream) -> Result<T>,
    after: AfterWork<'_>,
) -> impl FnOnce(sys::CUstream) -> Result<T> {
    move |private| {
        // Dropped once `work` returns, or unwinds: `after` runs either way.
        let _after = RunAfter(after, private);
        work(private)
    }
}

/// Runs its [`AfterWork`] on its private stream when dropped: once [`then`]'s work returned,
/// and also when the work panics after queueing some of its work, so that cudarc's event still
/// follows what was queued (a record when nothing was queued only marks the stream's earlier
/// work, which is harmless). The steps are event records, which do not panic.
struct RunAfter<'a>(AfterWork<'a>, sys::CUstream);

impl Drop for RunAfter<'_> {
    fn drop(&mut self) {
        if let Some(after) = self.0.take() {
            after(self.1);
        }
    }
}

/// What [`run_borrowing`] needs of a CUDA context: the context's own `bind` and `run_now`
/// (implemented by the context's type, so that this file, which the context imports, does not
/// import it back).
pub(crate) trait RunNow {
    /// Makes the context current on this thread.
    ///
    /// # Errors
    /// The driver's error.
    fn bind(&self) -> Result<()>;

    /// Runs `work` on the context's private stream after the work queued on `stream`.
    ///
    /// # Safety
    /// 1. `stream` is a live stream of the context, or a special stream handle.
    ///
    /// # Errors
    /// The refusal or the driver's error that kept `work` from running; `work`'s error.
    unsafe fn run_now<T>(
        &self,
        stream: sys::CUstream,
        call: &'static str,
        work: impl FnOnce(sys::CUstream) -> Result<T>,
    ) -> Result<T>;
}

/// What [`run_borrowing`] returns: the work's result, and the wait for the copies it queued.
pub(crate) struct Borrowed<T> {
    /// The work's result (or the refusal or error that kept it from running).
    pub(crate) out: Result<T>,
    /// `Ok` once every copy the work queued has finished (or none was queued); the driver's
    /// error when the wait for them failed (only a lost context fails it, and then no DMA
    /// runs; a caller whose own memory the copies write leaks it anyway).
    pub(crate) waited: Result<()>,
}

/// Where the wait of a [`run_borrowing`] stands once the private queue is released.
enum Copies {
    /// The work never ran (refused before it, e.g. a capturing stream).
    NotQueued,
    /// An event recorded on the private stream right after the work covers its copies.
    Covered,
    /// The event could not be recorded: the private stream was synchronized instead, under
    /// the lock (the one way left), with this outcome.
    Waited(Result<()>),
}

/// `Context::run_now` for work that borrows host memory for the call only:
/// `work` queues copies to or from it on the private stream, and this returns once they have
/// finished, waiting with no limit on purpose (a DMA must not outlive the borrow, and a wait
/// that gave up would let it). The wait is for an event recorded right after the work's copies,
/// made once the private queue's lock is released: a copy held up behind a kernel on `stream`
/// (for ever, behind one that never ends) then holds up no other thread's cuda-gl call in the
/// context, whose own waits have limits (a wait under the lock would make every call that
/// queues through the private stream, drops included, wait as long).
///
/// # Safety
/// 1. `stream` is a live stream of `ctx`, or a special stream handle.
pub(crate) unsafe fn run_borrowing<T>(
    ctx: &impl RunNow,
    stream: sys::CUstream,
    call: &'static str,
    work: impl FnOnce(sys::CUstream) -> Result<T>,
) -> Borrowed<T> {
    let not_queued = |e: Error| Borrowed {
        out: Err(e),
        waited: Ok(()),
    };
    if let Err(e) = ctx.bind() {
        return not_queued(e);
    }
    let copied = match result::stream::event_create(ORDER_ONLY) {
        Ok(event) => event,
        Err(e) => return not_queued(e.into()),
    };
    let mut copies = Copies::NotQueued;
    let covered = |p: sys::CUstream| {
        let out = work(p);
        // SAFETY: the event is live, in the bound context; `p` is the private stream, which
        // never captures.
        copies = match unsafe { result::stream::event_record(copied, p) } {
            Ok(()) => Copies::Covered,
            Err(_) => {
                // SAFETY: as above.
                let synced = unsafe { result::stream::synchronize(p) };
                Copies::Waited(synced.map_err(Error::from))
            }
        };
        out
    };
    // SAFETY: (1).
    let out = unsafe { ctx.run_now(stream, call, covered) };
    let waited = match copies {
        Copies::NotQueued => Ok(()),
        Copies::Waited(waited) => waited,
        Copies::Covered => {
            // In the relaxed capture mode, as `PrivateQueue::run`'s waits, so that another
            // thread's global capture does not fail it (waited for even if the mode cannot be
            // set: the borrow needs it).
            let _relaxed = RelaxedCapture::enter().ok();
            // SAFETY: the event is live; its record (outside any capture: on the private
            // stream) covers the copies.
            unsafe { result::stream::event_synchronize(copied) }.map_err(Error::from)
        }
    };
    // SAFETY: made above and not used after this; the driver destroys a recorded event once
    // its work is done.
    let _ = unsafe { result::stream::event_destroy(copied) };
    Borrowed { out, waited }
}

/// The private stream of one context and its two events; made at first use.
#[derive(Debug, Default)]
pub(crate) struct PrivateQueue {
    live: Option<Live>,
    /// Set when [`run`](Self::run) returned with work queued on the private stream that its
    /// caller's stream is not ordered after (step 4 could not order it, and the wait for it gave
    /// up); cleared once the private stream is seen idle. While set, [`settle`](Self::settle)
    /// waits for the private stream.
    unordered: bool,
    /// Whether the context's list of unordered queues holds this one (kept equal to
    /// `unordered` by the context, under this queue's lock: see [`relist`](Self::relist)).
    listed: bool,
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
            return Err(e.into());
        }
        Ok(live)
    }

    /// Destroys the events (those made) and the stream.
    ///
    /// # Safety
    /// 1. Nothing uses them afterwards.
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
    /// [`Error::StreamCapturing`] naming `call` when `stream` is capturing; the driver's errors of
    /// the joins; `work`'s error; [`Error::Timeout`] when the work had to be waited for (see step
    /// 4) and did not finish within the [wait limit](crate::wait_limit) (it may still run then: a
    /// kernel before it on `stream` that never ends).
    pub(crate) unsafe fn run<T>(
        &mut self,
        stream: sys::CUstream,
        call: &'static str,
        work: impl FnOnce(sys::CUstream) -> Result<T>,
    ) -> Result<T> {
        // A GLOBAL or THREAD_LOCAL capture anywhere would make this thread's event queries and
        // synchronizes fail, and a wait that fails must not return while the work runs.
        let _relaxed = RelaxedCapture::enter()?;
        // The common refusal, with no event spent: the stream captures already.
        // SAFETY: (1).
        unsafe { check_not_capturing(stream, call) }?;
        let live = self.live()?;
        let (private, joined, done) = (live.stream, live.joined, live.done);
        // Step 1: `joined` marks the caller's work so far. Recording is legal on a capturing
        // stream, so another thread may begin or end a capture of `stream` around it; the only
        // calls made on `stream` are records and waits.
        // SAFETY: (1); the event is live, in the bound context.
        let recorded = unsafe { result::stream::event_record(joined, stream) };
        // Step 2: the event itself says whether the record was a plain one: a captured record
        // answers CUDA_ERROR_CAPTURED_EVENT, and CUDA_ERROR_INVALID_VALUE once that capture has
        // ended (seen on driver 580). Only a plain record is waited for, so the private stream
        // never joins a capture: nothing else can reach it.
        // SAFETY: the event is live.
        let plain = recorded.and_then(|()| unsafe { result::stream::event_query(joined) });
        match plain {
            Ok(_) => {}
            Err(e) if taken_by_capture(&e) => return Err(Error::StreamCapturing { call }),
            Err(e) => return Err(e.into()),
        }
        // SAFETY: both live, in the bound context; `joined` was last recorded outside any
        // capture (above) and only this queue records it.
        unsafe { result::stream::wait_event(private, joined) }?;
        // Step 3: the work, on the private stream, after the caller's work so far.
        let out = work(private);
        #[cfg(test)]
        tests::after_work(private, call);
        // Step 4: the caller's later work waits for it. A wait queued into a capture of
        // `stream` (begun meanwhile) fails (an event recorded outside the capture), or orders
        // only the graph: then, and when the work failed after queueing some of it, the work is
        // finished before returning. The private stream never captures, so waiting for it is
        // always legal.
        // Not seen here: a capture begun before the wait and ended before the capture query,
        // when the driver took the wait into it (the "orders only the graph" case) instead of
        // failing it. No call on `stream` tells a capture that came and went: recording an
        // event after the wait and querying it, as step 2 does, tells the stream's state at
        // that record, no more than this query tells it at the query.
        // SAFETY: the event and both streams are live, in the bound context.
        let ordered = unsafe {
            result::stream::event_record(done, private)
                .and_then(|()| result::stream::wait_event(stream, done))
                .and_then(|()| result::stream::is_capturing(stream))
        };
        let ordered = matches!(ordered, Ok(false));
        if out.is_err() || !ordered {
            // SAFETY: the private stream is live, and never captures.
            let waited = unsafe { wait_within(private) };
            // Given up on, and nothing orders the caller's later work (an unmap) after it: it is
            // remembered until the private stream is seen idle (see `settle`).
            self.unordered = match waited {
                Ok(()) => false,
                Err(_) => self.unordered || !ordered,
            };
            waited?;
        }
        out
    }

    /// Queues `work` on the private stream after its earlier work only, joined to no caller's
    /// stream (not even the legacy one, which waits for every blocking stream): for work that
    /// follows none (a semaphore wait and signal ordering two other APIs). Context bound.
    ///
    /// # Errors
    /// The driver's errors (the private stream, the capture mode); `work`'s error.
    #[cfg(feature = "wgpu")]
    pub(crate) fn run_alone<T>(
        &mut self,
        work: impl FnOnce(sys::CUstream) -> Result<T>,
    ) -> Result<T> {
        // As `run`: a capture elsewhere must not make this thread's calls fail.
        let _relaxed = RelaxedCapture::enter()?;
        let private = self.live()?.stream;
        work(private)
    }

    /// Whether work on the private stream may still run unordered with its callers' streams
    /// (see [`settle`](Self::settle)).
    pub(crate) fn is_unordered(&self) -> bool {
        self.unordered
    }

    /// Before a call that ends the life of memory the private stream's work may touch (an
    /// unmap): waits for the private stream, at most the [wait limit](crate::wait_limit), when
    /// a [`run`](Self::run) gave up on work that its caller's stream is not ordered after (that
    /// call, ordered on the caller's stream alone, could run before or during the work);
    /// nothing otherwise. The context is bound.
    ///
    /// # Errors
    /// As [`finish`](Self::finish): the caller must then not end the memory's life (refuse, or
    /// leak it).
    pub(crate) fn settle(&mut self) -> Result<()> {
        if self.unordered {
            self.finish()
        } else {
            Ok(())
        }
    }

    /// When [`is_unordered`](Self::is_unordered) changed since the last call: its new value,
    /// which the caller then makes its list of unordered queues agree with (under this queue's
    /// lock, so that the list and the flag never disagree for long).
    pub(crate) fn relist(&mut self) -> Option<bool> {
        (self.listed != self.unordered).then(|| {
            self.listed = self.unordered;
            self.listed
        })
    }

    /// As [`finish`](Self::finish), for work whose ordering with a caller's stream was lost
    /// after its run returned (a capture of that stream may have taken the record that ordered
    /// it): when the wait fails, the queue is marked unordered as a [`run`](Self::run) that
    /// gave up marks it, so that unmaps wait for the work ([`settle`](Self::settle)) instead of
    /// running under it.
    ///
    /// # Errors
    /// As [`finish`](Self::finish).
    #[cfg(feature = "cudarc")]
    pub(crate) fn finish_marking(&mut self) -> Result<()> {
        let finished = self.finish();
        if finished.is_err() && self.live.is_some() {
            self.unordered = true;
        }
        finished
    }

    /// Waits for the work queued on the private stream so far (nothing when none was made), at
    /// most the [wait limit](crate::wait_limit). The context is bound.
    ///
    /// # Errors
    /// [`Error::Timeout`] past the limit (the work may still run: what it uses must not be
    /// freed); the driver's errors from `cuStreamQuery` (the private stream never captures) and
    /// from setting this thread's capture mode.
    pub(crate) fn finish(&mut self) -> Result<()> {
        match &self.live {
            Some(live) => {
                // As in `run`: another thread's global capture must not fail the queries.
                let _relaxed = RelaxedCapture::enter()?;
                // SAFETY: the live private stream of the bound context.
                unsafe { wait_within(live.stream) }?;
                // Idle: nothing on it runs unordered any more.
                self.unordered = false;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Destroys the private stream and its events. The context is bound, and nothing of it is
    /// used afterwards.
    pub(crate) fn release(&mut self) {
        if let Some(live) = self.live.take() {
            // SAFETY: (1): the context goes; the private stream never captures, and a capture
            // that took a record of an event holds no reference to it.
            unsafe { live.destroy() };
        }
    }
}

/// What crate tests provoke inside a run.
#[cfg(test)]
pub(crate) mod tests;
