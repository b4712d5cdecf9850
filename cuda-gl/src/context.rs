//! The CUDA primary context, retained for as long as any handle needs it.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::queue::PrivateQueue;
use crate::result;
use crate::result::CudaError;
use crate::wait::{Abandoned, Late, WAITING, abandoned_grace};
use cuda_gl_sys as sys;
use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak, mpsc};
use std::time::{Duration, Instant};

mod held;
mod unordered;

/// A retained CUDA primary context on one device.
///
/// Created with [`Context::new`] (which retains the device's primary context) and shared as
/// `Arc<Context>`: every stream, module, buffer and registered resource holds one, so the context
/// is released only after all of them are gone. Every call that needs the context binds it to the
/// calling thread first ([`Context::bind`]), `Drop` included, so handles can be used and dropped
/// from any thread.
///
/// `Context` is `Send + Sync`: the primary context is process-wide and the driver's context calls
/// are thread-safe.
#[derive(Debug)]
pub struct Context {
    device: Device,
    raw: sys::CUcontext,
    deferred: Mutex<Vec<CudaError>>,
    has_deferred: AtomicBool,
    /// The private stream that work which must run now is queued on ([`crate::queue`]).
    queue: Mutex<PrivateQueue>,
    /// This `Context` itself, for the list of unordered queues (`unordered::UNORDERED`).
    this: Weak<Context>,
    /// The waits of [`Context::synchronize_within`] that gave up and still wait.
    abandoned: Abandoned,
    /// The owner of a context shared with another library (cudarc's `CudaContext`, say). It
    /// holds the retain of the primary context (or the context itself), so this `Context`
    /// releases nothing; it is dropped after `Drop::drop` has run, once nothing of cuda-gl uses
    /// the context any more.
    owner: Option<Box<dyn Any + Send + Sync>>,
}

// SAFETY: a CUcontext is a process-wide handle that the driver lets any thread use, as are the
// private stream and events of `queue` (driver handles too).
unsafe impl Send for Context {}
// SAFETY: as above; the only interior mutability is behind Mutexes (the drop errors, the private
// queue, whose handles are used only under its lock) and an atomic.
unsafe impl Sync for Context {}

impl Context {
    /// Queues `work` so that it runs now, in `stream`'s order, whatever capture another thread
    /// begins on `stream` meanwhile: on cuda-gl's private stream, joined to `stream` by events
    /// (see [`crate::queue`]). Binds the context first.
    ///
    /// # Safety
    /// 1. `stream` is a live stream of this context, or a special stream handle.
    ///
    /// # Errors
    /// [`Error::StreamCapturing`] naming `call`; the driver's errors; `work`'s error.
    pub(crate) unsafe fn run_now<T>(
        &self,
        stream: sys::CUstream,
        call: &'static str,
        work: impl FnOnce(sys::CUstream) -> Result<T>,
    ) -> Result<T> {
        // SAFETY: (1), in the bound context.
        self.with_queue(|queue| unsafe { queue.run(stream, call, work) })
    }

    /// Queues `work` on cuda-gl's private stream after that stream's earlier work only, joined
    /// to no caller's stream (see [`PrivateQueue::run_alone`]). Binds the context first.
    ///
    /// # Errors
    /// The driver's errors; `work`'s error.
    #[cfg(feature = "wgpu")]
    pub(crate) fn run_alone<T>(&self, work: impl FnOnce(sys::CUstream) -> Result<T>) -> Result<T> {
        self.with_queue(|queue| queue.run_alone(work))
    }

    /// `f` on the private queue, locked, with the context bound; the list of unordered queues
    /// is then made to agree with it ([`relist`](Self::relist)).
    ///
    /// # Errors
    /// The driver's error binding the context; `f`'s.
    fn with_queue<T>(&self, f: impl FnOnce(&mut PrivateQueue) -> Result<T>) -> Result<T> {
        self.bind()?;
        let _held = self.hold_queue()?;
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let out = f(&mut queue);
        self.relist(&mut queue);
        out
    }

    /// This thread's hold of the private queue, taken before its lock: refused when this
    /// thread holds it already (a run inside a run, which would deadlock).
    ///
    /// # Errors
    /// [`Error::Internal`] then.
    fn hold_queue(&self) -> Result<held::Held> {
        held::Held::enter(std::ptr::from_ref(&self.queue) as usize)
    }

    /// Waits for the copies, memsets and events cuda-gl has queued on its private stream of this
    /// context so far (see the crate docs' safety model), without synchronizing any stream of
    /// yours: for code that hands memory cuda-gl reads or writes to a library whose ordering
    /// cuda-gl cannot join (the `cudarc` feature's `show_cudarc` uses it when a capture may have
    /// taken its ordering). It waits at most the [wait limit](crate::wait_limit) (10 s by default):
    /// that work comes after your stream's work before it, which a kernel that never ends keeps
    /// from finishing.
    ///
    /// # Errors
    /// [`Error::Timeout`] when the work has not finished within the wait limit (it may still run:
    /// keep what it uses alive); the driver's errors from binding the context and `cuStreamQuery`.
    #[doc(alias = "cuStreamQuery")]
    pub fn finish_queued(&self) -> Result<()> {
        self.with_queue(PrivateQueue::finish)
    }

    /// Retains the primary context of `device`.
    ///
    /// # Errors
    /// [`Error::Load`] without a driver, or the driver's error from `cuDevicePrimaryCtxRetain`.
    #[doc(alias = "cuDevicePrimaryCtxRetain")]
    pub fn new(device: &Device) -> Result<Arc<Context>> {
        let raw = result::ctx::primary_retain(device.raw())?;
        Ok(Context::make(*device, raw, None))
    }

    /// A `Context` of `raw` on `device`, with nothing queued or deferred yet; `owner` holds the
    /// retain of a shared context (none for one cuda-gl retained itself).
    fn make(
        device: Device,
        raw: sys::CUcontext,
        owner: Option<Box<dyn Any + Send + Sync>>,
    ) -> Arc<Context> {
        Arc::new_cyclic(|this| Context {
            device,
            raw,
            deferred: Mutex::new(Vec::new()),
            has_deferred: AtomicBool::new(false),
            queue: Mutex::new(PrivateQueue::default()),
            this: this.clone(),
            abandoned: Abandoned::default(),
            owner,
        })
    }

    /// Shares `raw`, a context that another library owns through `owner` (which holds its
    /// retain, and which the returned `Context` keeps alive and drops last), on what that
    /// library calls `device`. cuda-gl adds no retain of its own. The context is bound and
    /// checked: cuda-gl's driver library must see it on `device`, which holds when both opened
    /// the same `libcuda.so.1`. (The `cudarc` feature's `Context::from_cudarc` is this, with a
    /// clone of cudarc's `Arc<CudaContext>` as the owner.)
    ///
    /// # Safety
    /// 1. `raw` is a live context of the driver library cuda-gl loaded (`libcuda.so.1`, the one
    ///    every library in the process gets by that name), and stays live for as long as
    ///    `owner` does.
    /// 2. `raw` is the primary context of `device` (what cudarc's `CudaContext::new` gives):
    ///    cuda-gl checks, before every call, that the primary context is still active (a device
    ///    reset destroys it), and refuses with [`Error::ContextUnusable`] otherwise.
    ///
    /// # Errors
    /// [`Error::Load`] without a driver; [`Error::DriverLibraryMismatch`] when cuda-gl's driver
    /// sees the context on another device; the driver's error from `cuCtxSetCurrent` or
    /// `cuCtxGetDevice`.
    pub unsafe fn from_raw_shared(
        raw: sys::CUcontext,
        device: sys::CUdevice,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Result<Arc<Context>> {
        result::init()?;
        let ctx = Context::make(Device::from_raw(device), raw, Some(owner));
        ctx.bind()?;
        let seen = result::ctx::device()?;
        if seen != device {
            return Err(Error::DriverLibraryMismatch {
                cuda_gl_device: seen,
                owner_device: device,
            });
        }
        Ok(ctx)
    }

    /// The owner given to [`Context::from_raw_shared`] (with feature `cudarc`, cudarc's
    /// `Arc<CudaContext>` for a context from `Context::from_cudarc`), if any.
    pub fn owner(&self) -> Option<&(dyn Any + Send + Sync)> {
        self.owner.as_deref()
    }

    /// Retains the primary context of the first CUDA device behind the GL context that is current
    /// on this thread: the context to register that GL context's objects in.
    ///
    /// # Errors
    /// As [`gl_devices`](crate::gl_devices); [`Error::NotNvidiaGl`] when the GL context is on no
    /// CUDA device.
    pub fn for_current_gl() -> Result<Arc<Context>> {
        let devices = crate::device::gl_devices(crate::device::GlDeviceList::All)?;
        let Some(device) = devices.first() else {
            return Err(Error::NotNvidiaGl {
                source: CudaError::new("cuGLGetDevices", sys::CUresult::CUDA_ERROR_NO_DEVICE),
            });
        };
        Context::new(device)
    }

    /// [`for_current_gl`](Self::for_current_gl) where the current GL context is on a CUDA GPU,
    /// else `device`'s primary context: the set-up of a program whose GL may run elsewhere (a
    /// laptop's integrated GPU, Mesa), where CUDA then works beside GL and a
    /// [`DisplayTarget`](crate::display::DisplayTarget) runs staged.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] when no GL context is current; the errors of
    /// [`for_current_gl`](Self::for_current_gl) other than "this GL is not on a CUDA GPU"
    /// ([`Error::is_unsupported_setup`]); [`Context::new`]'s.
    pub fn for_current_gl_or(device: &Device) -> Result<Arc<Context>> {
        // Asked first: which answer the driver gives with no context current is its own, and
        // must not read as "GL elsewhere".
        crate::glapi::current_gl("Context::for_current_gl_or")?;
        match Context::for_current_gl() {
            Err(e) if e.is_unsupported_setup() => {
                log::info!("cuda-gl: the current GL is on no CUDA device ({e}); using {device:?}");
                Context::new(device)
            }
            found => found,
        }
    }

    /// The device this context is on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw `CUcontext`.
    pub fn raw(&self) -> sys::CUcontext {
        self.raw
    }

    /// Makes this context current on the calling thread, unless it already is.
    ///
    /// It first checks that the primary context is still active: after a
    /// `cuDevicePrimaryCtxReset` (or `cudaDeviceReset`) behind cuda-gl's back, every handle made
    /// in it is dangling, and the driver may crash on them rather than return an error.
    ///
    /// # Errors
    /// [`Error::ContextUnusable`] when the primary context was reset; the driver's error from
    /// `cuDevicePrimaryCtxGetState`, `cuCtxGetCurrent` or `cuCtxSetCurrent`.
    #[doc(alias = "cuCtxSetCurrent")]
    pub fn bind(&self) -> Result<()> {
        if !result::ctx::primary_active(self.device.raw())? {
            return Err(Error::ContextUnusable {
                source: CudaError::new(
                    "cuDevicePrimaryCtxGetState",
                    sys::CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
                ),
            });
        }
        if result::ctx::get_current()? != self.raw {
            // SAFETY: `self.raw` is retained for as long as `self` lives.
            unsafe { result::ctx::set_current(self.raw) }?;
        }
        Ok(())
    }

    /// Waits for all work in this context, then reports any failure recorded by an earlier
    /// `Drop` (see [`Context::take_drop_errors`]).
    ///
    /// # Errors
    /// The driver's error from `cuCtxSynchronize` (for example a kernel's
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`), or [`Error::DeferredDrop`].
    #[doc(alias = "cuCtxSynchronize")]
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        result::ctx::synchronize()?;
        self.check_drop_errors()
    }

    /// Waits for all work in this context, as [`synchronize`](Self::synchronize) but at most
    /// `limit`, for cuda-gl's recoveries of work it cannot name (a leaked guard's kernels, on
    /// a stream that may be gone) and for drops. `cuCtxSynchronize` has no timeout, so it runs
    /// on a thread of its own: after a timeout that thread stays blocked (holding this context)
    /// until the context's work ends, which a kernel that never ends makes never. While such a
    /// thread waits, the context is known busy, and no new wait can end before it does: a new
    /// one waits for it first, within its own limit, and starts no thread of its own meanwhile.
    /// In a `Drop` ([`InDrop`](crate::wait::InDrop)) it gives it only 100 ms and then gives up
    /// too (see [`Abandoned`](crate::wait::Abandoned)), so that the drops of several objects
    /// behind the same stuck kernel take one limit, not one each.
    ///
    /// # Errors
    /// [`Error::Timeout`] past `limit`, or in a drop after 100 ms while an earlier wait that gave
    /// up still waits (or when no thread could be started); the driver's errors from binding
    /// the context and `cuCtxSynchronize`.
    pub(crate) fn synchronize_within(self: &Arc<Self>, limit: Duration) -> Result<()> {
        let what = "every CUDA work of the context (cuCtxSynchronize)";
        let start = Instant::now();
        let grace = abandoned_grace(limit);
        if !self.abandoned.settled_within(grace) {
            return Err(Error::Timeout {
                what: format!("{what}, which an earlier wait gave up on and still waits for"),
                timeout: grace,
            });
        }
        // What the wait for the earlier ones left of the limit.
        let left = limit.saturating_sub(start.elapsed());
        let (send, receive) = mpsc::channel();
        let state = Arc::new(AtomicU8::new(WAITING));
        let (ctx, thread_state) = (self.clone(), state.clone());
        let spawned = std::thread::Builder::new()
            .name("cuda-gl context wait".into())
            .spawn(move || {
                let done = ctx.bind().and_then(|()| Ok(result::ctx::synchronize()?));
                // The receiver is gone after a timeout: nobody is waiting any more.
                let _ = send.send(done);
                ctx.abandoned.ended(&thread_state);
            });
        if let Err(e) = spawned {
            return Err(Error::Timeout {
                what: format!("{what}: no thread could be started to wait with a limit ({e})"),
                timeout: Duration::ZERO,
            });
        }
        let lost = || Error::Internal {
            what: "the thread waiting for the CUDA context ended without an answer".into(),
        };
        match receive.recv_timeout(left) {
            Ok(done) => done,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                match self.abandoned.give_up_unless_answered(&state, &receive) {
                    Late::Answered(done) => done,
                    Late::GaveUp => Err(Error::Timeout {
                        what: what.into(),
                        timeout: limit,
                    }),
                    Late::Lost => Err(lost()),
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(lost()),
        }
    }

    /// Free and total device memory in bytes.
    ///
    /// # Errors
    /// The driver's error from `cuMemGetInfo`.
    #[doc(alias = "cuMemGetInfo")]
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        Ok(result::ctx::mem_info()?)
    }

    /// Takes the errors that `Drop` implementations of handles in this context met (an unmap or
    /// unregister that failed). Each was also logged through `log` when it happened.
    pub fn take_drop_errors(&self) -> Vec<CudaError> {
        if !self.has_deferred.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        match self.deferred.lock() {
            Ok(mut list) => std::mem::take(&mut *list),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Returns [`Error::DeferredDrop`] when a `Drop` failed since the last check.
    ///
    /// # Errors
    /// [`Error::DeferredDrop`] with every recorded failure.
    pub fn check_drop_errors(&self) -> Result<()> {
        let errors = self.take_drop_errors();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::DeferredDrop(errors))
        }
    }

    /// Binds the context for a `Drop` that is about to `what` (e.g. "free device memory"). On
    /// failure (for example a context that was reset) it logs and records the error and returns
    /// `false`: the caller then skips its driver call, whose handle cannot be valid any more.
    #[must_use]
    pub(crate) fn bind_for_drop(&self, what: &str) -> bool {
        match self.bind() {
            Ok(()) => true,
            Err(e) => {
                self.record_drop_error(&format!("binding the context to {what}"), e);
                false
            }
        }
    }

    /// The body of a `Drop` that releases one driver handle: binds the context (see
    /// [`Context::bind_for_drop`], `what` says what is about to happen) and runs `release`,
    /// recording its error under `call`. Nothing is called when the bind fails.
    pub(crate) fn release_in_drop<E: Into<Error>>(
        &self,
        what: &str,
        call: &str,
        release: impl FnOnce() -> std::result::Result<(), E>,
    ) {
        if !self.bind_for_drop(what) {
            return;
        }
        if let Err(e) = release() {
            self.record_drop_error(call, e);
        }
    }

    /// Logs a failure met in `Drop` and records it for [`Context::take_drop_errors`].
    pub(crate) fn record_drop_error(&self, what: &str, error: impl Into<Error>) {
        let error = error.into();
        log::error!("cuda-gl: {what} failed during drop: {error}");
        let cuda = match error {
            Error::Cuda(e) => e,
            other => match other.cuda() {
                Some(e) => e.clone(),
                None => return,
            },
        };
        self.defer(cuda);
    }

    /// [`record_drop_error`](Self::record_drop_error) for a wait of a `Drop` that failed (the
    /// drop then leaks what the work may still use). An [`Error::Timeout`] carries no driver
    /// error, so it is recorded as what the wait last heard from `waited_with` (the call that
    /// waited: `cuEventQuery`, `cuStreamQuery`, `cuCtxSynchronize`): `CUDA_ERROR_NOT_READY`,
    /// the work has not finished. [`Context::check_drop_errors`] then reports the leak too.
    pub(crate) fn record_drop_wait(&self, what: &str, waited_with: &'static str, error: Error) {
        log::error!("cuda-gl: {what} failed during drop: {error}");
        if let Some(cuda) = recorded_for_wait(waited_with, &error) {
            self.defer(cuda);
        }
    }

    /// Records `cuda` for [`Context::take_drop_errors`].
    fn defer(&self, cuda: CudaError) {
        match self.deferred.lock() {
            Ok(mut list) => list.push(cuda),
            Err(poisoned) => poisoned.into_inner().push(cuda),
        }
        self.has_deferred.store(true, Ordering::Release);
    }
}

impl crate::queue::RunNow for Context {
    fn bind(&self) -> Result<()> {
        Context::bind(self)
    }

    unsafe fn run_now<T>(
        &self,
        stream: sys::CUstream,
        call: &'static str,
        work: impl FnOnce(sys::CUstream) -> Result<T>,
    ) -> Result<T> {
        // SAFETY: (1), the same condition.
        unsafe { Context::run_now(self, stream, call, work) }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        for e in self.take_drop_errors() {
            log::warn!("cuda-gl: unreported drop error at context release: {e}");
        }
        if self.bind_for_drop("destroy cuda-gl's private stream") {
            let queue = self.queue.get_mut().unwrap_or_else(|p| p.into_inner());
            // Work that callers' streams are not ordered after: once this `Context` is gone,
            // no unmap can wait for it any more, so it is waited for here (within the limit).
            if queue.is_unordered()
                && let Err(e) = queue.finish()
            {
                log::error!(
                    "cuda-gl: dropping a context whose copies no stream is ordered after: {e}"
                );
            }
            queue.release();
        }
        unordered::forget_dropped();
        if self.owner.is_some() {
            // No retain of our own: the owner, dropped with this struct's fields right after
            // this, releases its own.
            return;
        }
        // SAFETY: this balances the retain in `Context::new`.
        if let Err(e) = unsafe { result::ctx::primary_release(self.device.raw()) } {
            log::error!("cuda-gl: releasing the primary context failed: {e}");
        }
    }
}

/// What [`Context::record_drop_wait`] records for `error`, a failed wait with `waited_with`:
/// the driver's error, or for a timeout (which has none) `waited_with`'s last answer,
/// `CUDA_ERROR_NOT_READY`; nothing for an error with no driver code.
fn recorded_for_wait(waited_with: &'static str, error: &Error) -> Option<CudaError> {
    match error {
        Error::Timeout { .. } => Some(CudaError::new(
            waited_with,
            sys::CUresult::CUDA_ERROR_NOT_READY,
        )),
        other => other.cuda().cloned(),
    }
}

/// The end of a `Drop` whose field `held` GPU work may still use: dropped once `idle` (the
/// wait for that work, made with `waited_with`) succeeded; otherwise leaked, since freeing it
/// under running work would be worse, and the failed wait recorded in `ctx` (as
/// [`Context::record_drop_wait`] records it, naming `what`).
///
/// # Safety
/// 1. `held` is not used after this call (it is dropped here, or never).
#[cfg(feature = "wgpu")]
pub(crate) unsafe fn drop_when_idle<T>(
    ctx: &Context,
    held: &mut std::mem::ManuallyDrop<T>,
    idle: Result<()>,
    what: &str,
    waited_with: &'static str,
) {
    match idle {
        // SAFETY: (1); no work uses it any more (`idle`).
        Ok(()) => unsafe { std::mem::ManuallyDrop::drop(held) },
        Err(e) => ctx.record_drop_wait(
            &format!("waiting for the work on {what} before freeing it (leaked instead)"),
            waited_with,
            e,
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_drops_timeout_is_recorded_as_the_waits_not_ready() {
        let timeout = Error::Timeout {
            what: "the test's work".into(),
            timeout: Duration::from_secs(10),
        };
        let recorded = recorded_for_wait("cuCtxSynchronize", &timeout).unwrap();
        assert_eq!(recorded.call, "cuCtxSynchronize");
        assert_eq!(recorded.code, sys::CUresult::CUDA_ERROR_NOT_READY);
    }

    #[test]
    fn a_drops_driver_error_is_recorded_as_it_is_and_another_error_not_at_all() {
        let fault = CudaError::new("cuEventQuery", sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        let recorded = recorded_for_wait("cuEventQuery", &Error::Cuda(fault.clone()));
        assert_eq!(recorded, Some(fault));
        let internal = Error::Internal {
            what: "no driver code".into(),
        };
        assert_eq!(recorded_for_wait("cuEventQuery", &internal), None);
    }
}
