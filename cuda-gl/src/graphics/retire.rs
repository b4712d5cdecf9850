//! Surface and texture objects whose destruction waits for the GPU.
//!
//! A kernel queued on a mapping's stream may still run after the host has dropped the surface or
//! texture object it uses, and even after the unmap has been queued behind it. CUDA requires that
//! no pending work uses an object when it is destroyed, so objects over a mapping are not destroyed
//! on the spot: they are *retired*, and destroyed once an event recorded on the mapping's stream
//! right after the unmap has completed. That event is queried (no wait) before the next map, and
//! waited for, within the [wait limit](crate::wait_limit) (past it the objects are leaked and the
//! failure logged: destroying them under running work would be undefined behaviour), before the
//! registration goes.

use crate::context::Context;
use crate::error::Result;
use crate::result;
use crate::stream::{Event, wait_limit};
use cuda_gl_sys as sys;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// A CUDA object over a mapped array, waiting to be destroyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Retired {
    /// A surface object (`cuSurfObjectCreate`).
    Surface(sys::CUsurfObject),
    /// A texture object (`cuTexObjectCreate`).
    Tex(sys::CUtexObject),
}

impl Retired {
    /// Destroys the object, recording a failure on `ctx`.
    ///
    /// # Safety
    /// 1. The object was created by this crate, is destroyed once, and no pending work uses it.
    unsafe fn destroy(self, ctx: &Context) {
        // SAFETY: (1).
        let (call, outcome) = unsafe {
            match self {
                Retired::Surface(s) => ("cuSurfObjectDestroy", result::array::surface_destroy(s)),
                Retired::Tex(t) => ("cuTexObjectDestroy", result::array::texture_destroy(t)),
            }
        };
        if let Err(e) = outcome {
            ctx.record_drop_error(call, e);
        }
    }
}

/// What is known about GPU work that may use the registration's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Pending {
    /// None: every object may be destroyed now.
    #[default]
    None,
    /// Work queued before the event's last record: destroy once the event has completed.
    UntilEvent,
    /// Mapped, or the event could not be recorded: nothing is known.
    Unknown,
}

/// The retired objects of one registration and the event that says when they are free.
#[derive(Debug, Default)]
pub(super) struct Retirement {
    /// Filled through `&Registration`: objects are retired while a guard borrows it.
    objects: Mutex<Vec<Retired>>,
    /// Recorded on the map's stream right after each unmap while objects may be in use.
    event: Option<Event>,
    pending: Pending,
}

impl Retirement {
    fn objects(&self) -> MutexGuard<'_, Vec<Retired>> {
        // Each change is one push or one drain, so a poisoned lock is still consistent.
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `object` for destruction once the work of this mapping is done.
    pub(super) fn retire(&self, object: Retired) {
        self.objects().push(object);
    }

    /// How many objects wait to be destroyed.
    pub(super) fn len(&self) -> usize {
        self.objects().len()
    }

    /// Called when the resource is mapped: work queued from now on may use its objects.
    pub(super) fn mapped(&mut self) {
        self.pending = Pending::Unknown;
    }

    /// Called right after a successful unmap on `stream`. When objects over the mapping exist
    /// (`cached` surfaces, or retired ones), records the event there, so that their destruction
    /// can wait for exactly the work queued before the unmap.
    ///
    /// # Safety
    /// 1. `stream` is live and belongs to `ctx`, which is bound.
    pub(super) unsafe fn unmapped(
        &mut self,
        ctx: &Arc<Context>,
        stream: sys::CUstream,
        cached: bool,
    ) {
        // SAFETY: (1).
        unsafe { self.unmapped_on(ctx, stream, cached, false) }
    }

    /// [`unmapped`](Self::unmapped) after an unmap queued on cuda-gl's private stream
    /// `private`, inside a run of the private queue (whose lock is held: the record goes
    /// straight onto `private`, where it follows the unmap).
    ///
    /// # Safety
    /// 1. `private` is the live private stream of `ctx`, which is bound, inside a run.
    pub(super) unsafe fn unmapped_on_private(
        &mut self,
        ctx: &Arc<Context>,
        private: sys::CUstream,
        cached: bool,
    ) {
        // SAFETY: (1).
        unsafe { self.unmapped_on(ctx, private, cached, true) }
    }

    /// The two above: the event recorded after the unmap on `stream`, through a run of the
    /// private queue, or on `stream` itself when it is the private stream (`private`).
    ///
    /// # Safety
    /// 1. As [`unmapped`](Self::unmapped)'s, or [`unmapped_on_private`](Self::unmapped_on_private)'s
    ///    when `private`.
    unsafe fn unmapped_on(
        &mut self,
        ctx: &Arc<Context>,
        stream: sys::CUstream,
        cached: bool,
        private: bool,
    ) {
        if !cached && self.objects().is_empty() {
            self.pending = Pending::None;
            return;
        }
        let recorded = match &self.event {
            Some(event) => Ok(event),
            None => Event::new(ctx, false).map(|e| &*self.event.insert(e)),
        }
        .and_then(|event| {
            let raw = event.raw();
            // Objects retired under an earlier mapping may still be used by work on that
            // mapping's stream, which the event's previous record covers: the new record first
            // waits for it, so it covers both (no cost on the GPU when the old one is
            // complete). Recorded on cuda-gl's private stream joined to `stream`, so that a
            // capture begun on `stream` meanwhile cannot turn the record into a graph node.
            let record = |p| {
                // SAFETY: `p` is the live private stream; the event is live and in `ctx`.
                unsafe { result::stream::wait_event(p, raw) }?;
                // SAFETY: as above.
                Ok(unsafe { result::stream::event_record(raw, p) }?)
            };
            if private {
                record(stream)
            } else {
                // SAFETY: (1) for the stream.
                unsafe { ctx.run_now(stream, "cuEventRecord (not called)", record) }
            }
        });
        self.pending = match recorded {
            Ok(()) => Pending::UntilEvent,
            Err(e) => {
                log::warn!(
                    "cuda-gl: recording the event that frees surface and texture objects failed \
                     ({e}); they are destroyed only after the context is synchronized"
                );
                Pending::Unknown
            }
        };
    }

    /// Called after `cuCtxSynchronize`: no work is pending any more.
    pub(super) fn synchronized(&mut self) {
        self.pending = Pending::None;
    }

    /// Destroys the retired objects if the work that may use them is known to be done, without
    /// waiting. Call only while unmapped.
    pub(super) fn collect(&mut self, ctx: &Context) {
        if self.objects().is_empty() || !self.free_now(None).unwrap_or(false) {
            return;
        }
        self.destroy_all(ctx, Vec::new());
    }

    /// Destroys the retired objects and `more` (the drained surface cache) once the work that may
    /// use them is done: waits for the event, or, when no event covers the work (a leaked guard, a
    /// failed record), for the whole context, at most the [wait limit](crate::wait_limit) either
    /// way. Call with the context bound, when no guard of the registration is left.
    ///
    /// # Errors
    /// [`Error::Timeout`], or the driver's error from the event or from `cuCtxSynchronize`; the
    /// objects are then leaked, never destroyed under running work.
    pub(super) fn release_all(&mut self, ctx: &Arc<Context>, more: Vec<Retired>) -> Result<()> {
        if more.is_empty() && self.objects().is_empty() {
            return Ok(());
        }
        let limit = wait_limit();
        let done = match self.free_now(Some(limit)) {
            Ok(true) => Ok(()),
            Ok(false) => ctx.synchronize_within(limit),
            Err(e) => Err(e),
        };
        match done {
            Ok(()) => {
                self.destroy_all(ctx, more);
                Ok(())
            }
            Err(e) => {
                let leaked = more.len() + std::mem::take(&mut *self.objects()).len();
                log::error!(
                    "cuda-gl: leaking {leaked} surface/texture objects, because the GPU work \
                     that may still use them is not known to be done: {e}"
                );
                Err(e)
            }
        }
    }

    /// Whether the pending work is done: queried (`limit` `None`) or waited for.
    fn free_now(&self, limit: Option<Duration>) -> Result<bool> {
        match (self.pending, &self.event) {
            (Pending::None, _) => Ok(true),
            (Pending::UntilEvent, Some(event)) => match limit {
                None => event.query(),
                Some(limit) => event.wait_for(limit).map(|()| true),
            },
            _ => Ok(false),
        }
    }

    fn destroy_all(&mut self, ctx: &Context, more: Vec<Retired>) {
        let objects = std::mem::take(&mut *self.objects());
        for object in objects.into_iter().chain(more) {
            // SAFETY: every object was created by this crate and retired (or drained from the
            // cache) exactly once, and `free_now` found the work that may use it done.
            unsafe { object.destroy(ctx) };
        }
        self.pending = Pending::None;
    }
}
