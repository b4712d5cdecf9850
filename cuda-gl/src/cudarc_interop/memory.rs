//! cudarc device memory that cuda-gl's copies take: [`CudarcSource`] (read) and [`CudarcDest`]
//! (written), and the ordering both follow: cudarc's events around cuda-gl's copy, which runs on
//! cuda-gl's private stream joined to the caller's.

use super::MappedSlice;
use super::ReadWrite;
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::result::DriverError;
use cuda_gl_sys as sys;
use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice,
    SyncOnDrop,
};
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// cudarc device memory that cuda-gl's copies read
/// ([`DisplayTarget::show_cudarc`](crate::display::DisplayTarget::show_cudarc) and
/// [`show_video_cudarc`](crate::display::DisplayTarget::show_video_cudarc),
/// [`VideoPlanes::upload_cudarc`](crate::video::VideoPlanes::upload_cudarc),
/// [`MappedArray::copy_from_cudarc`](crate::MappedArray::copy_from_cudarc)): cudarc's own
/// slices and views, and cuda-gl's mapped views, whose `DevicePtr` and `DeviceSlice`
/// implementations are trusted to give the address and length of live memory (`DevicePtr` is a
/// safe trait that any type can implement, so it is not taken on its own).
///
/// # Safety
/// Implementors guarantee that `device_ptr` returns the address of `len()` values of `T` of
/// device memory of `stream()`'s context, and follow cudarc's event protocol (the stream given
/// to `device_ptr` waits for earlier writes; the returned guard records the read).
pub unsafe trait CudarcSource<T>: DevicePtr<T> + sealed::Sealed {}

/// cudarc device memory that cuda-gl's copies write
/// ([`MappedArray::copy_to_cudarc`](crate::MappedArray::copy_to_cudarc)): cudarc's slices and
/// mutable views, and cuda-gl's writable mapped views.
///
/// # Safety
/// As [`CudarcSource`], for `device_ptr_mut` (the stream waits for earlier reads and writes;
/// the guard records the write).
pub unsafe trait CudarcDest<T>: DevicePtrMut<T> + sealed::Sealed {}

impl<T> sealed::Sealed for CudaSlice<T> {}
impl<T> sealed::Sealed for CudaView<'_, T> {}
impl<T> sealed::Sealed for CudaViewMut<'_, T> {}
impl<T, A> sealed::Sealed for MappedSlice<'_, T, A> {}
// SAFETY: cudarc's allocation of `len` values on its stream's context, with cudarc's events.
unsafe impl<T> CudarcSource<T> for CudaSlice<T> {}
// SAFETY: a sub-range of a `CudaSlice`, as cudarc computes it.
unsafe impl<T> CudarcSource<T> for CudaView<'_, T> {}
// SAFETY: as for `CudaView`.
unsafe impl<T> CudarcSource<T> for CudaViewMut<'_, T> {}
// SAFETY: the mapped buffer's `len` values (checked at the view's making), ordered on the
// mapping's stream (`order_on`).
unsafe impl<T, A> CudarcSource<T> for MappedSlice<'_, T, A> {}
// SAFETY: as for `CudarcSource`, writable: cudarc's own memory.
unsafe impl<T> CudarcDest<T> for CudaSlice<T> {}
// SAFETY: as for `CudaSlice`, a sub-range.
unsafe impl<T> CudarcDest<T> for CudaViewMut<'_, T> {}
// SAFETY: a writable mapping's `len` values (checked at the view's making), ordered on the
// mapping's stream (`order_on`).
unsafe impl<T> CudarcDest<T> for MappedSlice<'_, T, ReadWrite> {}

/// cudarc's guard for memory that a copy of cuda-gl reads or writes (the `SyncOnDrop` that
/// cudarc gave with `stream`), with its event (the memory's read or write event, which cudarc's
/// later writes, reads and frees of the memory wait for, on any stream) taken out to be
/// recorded on cuda-gl's private stream right after the copy, in the copy's own run
/// ([`record`](Self::record), passed as the run's [`AfterWork`](crate::queue::AfterWork)).
/// The private stream never captures and runs its work in order, so every later wait of cudarc
/// for that event follows the copy, whatever captures of `stream` begin meanwhile: recorded on
/// `stream`, a capture begun since could take the record (cudarc's free, on the memory's own
/// stream, would then not wait for the copy), and a copy whose run could not order `stream`
/// after it (`crate::queue`, step 4) would not be covered at all; the pool would hand the
/// memory out again while the copy still writes or reads it. In the same run, under the private
/// queue's lock: recorded after it, the event would also follow the work that other threads
/// queued on the private stream in between, which cudarc's waits would then wait for too.
pub(super) struct CudarcEvent<'a> {
    guard: SyncOnDrop<'a>,
    /// The event and its stream, taken out of `guard` when cudarc tracks the memory.
    taken: Option<(&'a CudaEvent, &'a CudaStream)>,
    /// The record's outcome; `None` until [`record`](Self::record) ran (the work never ran).
    recorded: Option<std::result::Result<(), DriverError>>,
}

impl<'a> CudarcEvent<'a> {
    /// `guard`'s event taken out, unless cudarc does not track the memory (a mapped view's
    /// guard, which synchronizes `stream`; cudarc's event tracking off, when the guard records
    /// nothing): such a guard drops as cudarc made it, in [`done`](Self::done).
    pub(super) fn take(mut guard: SyncOnDrop<'a>) -> CudarcEvent<'a> {
        let taken = match &mut guard {
            // As the guard's own drop: no record while cudarc does not track this memory.
            SyncOnDrop::Record(target)
                if target
                    .as_ref()
                    .is_some_and(|(_, on)| on.context().is_managing_stream_synchronization()) =>
            {
                target.take()
            }
            _ => None,
        };
        CudarcEvent {
            guard,
            taken,
            recorded: None,
        }
    }

    /// Records the event on `private`, cuda-gl's private stream, right after the copy queued
    /// on it, inside the copy's run. The event is of `stream`'s context, which the callers
    /// checked is the copy's.
    pub(super) fn record(&mut self, private: sys::CUstream) {
        if let Some((event, _)) = self.taken {
            #[cfg(test)]
            crate::result::test_ops::note(crate::result::test_ops::Op::CudarcRecord {
                stream: private,
                event: event.cu_event().cast(),
            });
            // SAFETY: cudarc's live event, of the bound context (the copy's, checked against
            // `stream`'s by the callers); `private` is the live private stream of that context,
            // which never captures.
            let recorded =
                unsafe { crate::result::stream::event_record(event.cu_event().cast(), private) };
            self.recorded = Some(recorded);
        }
    }

    /// Once the copy's run returned, `stream` being the stream cudarc gave the guard with:
    /// recorded in the run, nothing is left to do; the work never ran, nothing was queued
    /// that touches the memory, and the event is left as it was (it covers cudarc's uses
    /// before). A record that failed: the guard drops as cudarc made it (the event put back,
    /// cudarc's record on `stream`), and the copy is finished first (within the wait limit;
    /// marked unordered past it). A guard whose event was not taken: it drops as cudarc made
    /// it, and a capture of `stream` begun since may have taken the ordering, so the copy is
    /// finished first then ([`finish_if_captured`]).
    ///
    /// # Errors
    /// As [`finish_if_captured`].
    pub(super) fn done(mut self, ctx: &Context, stream: &CudaStream) -> Result<()> {
        if self.taken.is_some() {
            match self.recorded.take() {
                Some(Ok(())) | None => return Ok(()),
                Some(Err(e)) => {
                    log::warn!("cuda-gl: recording cudarc's event after a copy failed: {e}");
                    if let SyncOnDrop::Record(target) = &mut self.guard {
                        *target = self.taken.take();
                    }
                    // cudarc's record on `stream` follows the copy only if the run ordered
                    // `stream` after it, which a capture begun meanwhile may have prevented
                    // (and it may have ended since): the copy is finished first, whatever
                    // `stream` does now (rare: a record on a live private stream failed).
                    drop(self.guard);
                    return ctx.finish_queued_marking();
                }
            }
        }
        drop(self.guard);
        finish_if_captured(ctx, stream)
    }
}

/// After cuda-gl queued a copy of cudarc memory in `stream`'s order and cudarc's guard ran: a
/// capture begun on `stream` since may have taken the ordering, and then cudarc's later frees
/// and writes would not wait for the copy, so it is finished first. When that wait fails, the
/// queue is marked unordered (as a run that gave up marks it), so that unmaps wait for the
/// copy too.
///
/// # Errors
/// The driver's error from waiting for cuda-gl's private stream, or
/// [`Error::Timeout`](crate::Error::Timeout) when that wait passes the [wait
/// limit](crate::wait_limit) (10 s by default).
pub(crate) fn finish_if_captured(ctx: &Context, stream: &CudaStream) -> Result<()> {
    // SAFETY: a live stream of `ctx`, which the copy bound.
    if unsafe { crate::result::stream::is_capturing(stream.cu_stream().cast()) }.unwrap_or(true) {
        ctx.finish_queued_marking()?;
    }
    Ok(())
}

/// The byte length of cudarc memory `memory` used with `stream`, after checking that it is of
/// `stream`'s cudarc context (the same `Arc<CudaContext>`: two `CudaContext`s of one device
/// track their streams apart), `owner` naming what refuses it. Called before cudarc is asked
/// for the memory's address, which queues a wait on `stream`.
///
/// # Errors
/// [`UsageError::WrongCudaContext`]; [`UsageError::TooLarge`] for a length in bytes over
/// `usize::MAX`.
pub(super) fn checked_bytes<T>(
    memory: &impl DeviceSlice<T>,
    stream: &CudaStream,
    owner: &str,
) -> Result<usize> {
    if !Arc::ptr_eq(memory.stream().context(), stream.context()) {
        return Err(UsageError::WrongCudaContext {
            what: "cudarc memory",
            owner: owner.into(),
        }
        .into());
    }
    let len = memory.len();
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        Error::from(UsageError::TooLarge {
            what: "the cudarc memory's size in bytes",
            value: len as u128 * size_of::<T>() as u128,
            max: usize::MAX as u128,
        })
    })
}
