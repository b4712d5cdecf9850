//! cudarc memory on a display target: [`CudarcSource`] and
//! [`DisplayTarget::show_cudarc`](crate::display::DisplayTarget::show_cudarc).

use super::MappedSlice;
use crate::error::{Error, Result, UsageError};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr};
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// cudarc device memory that [`DisplayTarget::show_cudarc`](crate::display::DisplayTarget::show_cudarc)
/// accepts: cudarc's own slices and views, and cuda-gl's mapped views, whose `DevicePtr` and
/// `DeviceSlice` implementations are trusted to give the address and length of live memory
/// (`DevicePtr` is a safe trait that any type can implement, so it is not taken on its own).
///
/// # Safety
/// Implementors guarantee that `device_ptr` returns the address of `len()` values of `T` of
/// device memory of `stream()`'s context, and follow cudarc's event protocol (the stream given
/// to `device_ptr` waits for earlier writes; the returned guard records the read).
pub unsafe trait CudarcSource<T>: DevicePtr<T> + sealed::Sealed {}

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

impl crate::display::DisplayTarget {
    /// [`show`](crate::display::DisplayTarget::show) for cudarc device memory: a `CudaSlice`,
    /// a `CudaView`, or a mapped view, holding an image of `width` x `height` pixels of
    /// `format` whose rows start `pitch` bytes apart; the copy is queued in `stream`'s order,
    /// after cudarc's own writes of `src`, and (with cudarc's event tracking on, its default)
    /// cudarc's later writes or frees of `src` wait for it.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] when `stream` is not of the target's context or `src`
    /// is not of `stream`'s cudarc context (the same `Arc<CudaContext>`: two `CudaContext`s of
    /// one device track their streams apart); otherwise as `show`.
    pub fn show_cudarc<T, S: CudarcSource<T>>(
        &mut self,
        src: &S,
        width: u32,
        height: u32,
        pitch: usize,
        format: crate::display::Format,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let wrong = |what| -> Error {
            UsageError::WrongCudaContext {
                what,
                owner: "the display target".into(),
            }
            .into()
        };
        // Checked before cudarc is asked for anything: `device_ptr` queues a wait.
        if stream.context().cu_ctx().cast::<std::ffi::c_void>() != self.context().raw().cast() {
            return Err(wrong("stream"));
        }
        if !Arc::ptr_eq(src.stream().context(), stream.context()) {
            return Err(wrong("cudarc memory"));
        }
        let given = src.len().checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::from(UsageError::TooLarge {
                what: "the cudarc memory's size in bytes",
                value: src.len() as u128 * size_of::<T>() as u128,
                max: usize::MAX as u128,
            })
        })?;
        // `read` records cudarc's read event on `stream` when it drops, after the copy was
        // queued (and `stream` made to wait for it), so cudarc orders its later writes and
        // frees of `src` after the copy.
        let (ptr, read) = src.device_ptr(stream);
        let image = crate::display::Pixels {
            ptr: crate::memory::DevicePtr::new(ptr),
            pitch,
            width,
            height,
            format,
        };
        // SAFETY: (1) `src` holds `given` bytes of device memory of the target's context
        // (`CudarcSource`; its context checked above), which cudarc neither frees nor writes
        // before the read event `read` records after the copy.
        let shown = unsafe { self.show_sized(image, given, stream) };
        drop(read);
        // A capture begun on `stream` since the copy was ordered may have taken that record:
        // then cudarc's later frees would not wait for the copy, so it is finished first.
        // SAFETY: a live stream of the target's context (checked), which `show_sized` bound.
        if unsafe { crate::result::stream::is_capturing(stream.cu_stream().cast()) }.unwrap_or(true)
        {
            self.context().finish_queued()?;
        }
        shown
    }
}
