//! cudarc memory on a display target:
//! [`DisplayTarget::show_cudarc`](crate::display::DisplayTarget::show_cudarc).

use super::memory::{CudarcSource, checked_bytes, finish_if_captured};
use crate::error::{Result, UsageError};
use cudarc::driver::CudaStream;
use std::sync::Arc;

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
        // Checked before cudarc is asked for anything: `device_ptr` queues a wait.
        if stream.context().cu_ctx().cast::<std::ffi::c_void>() != self.context().raw().cast() {
            return Err(UsageError::WrongCudaContext {
                what: "stream",
                owner: "the display target".into(),
            }
            .into());
        }
        let given = checked_bytes(src, stream, "the display target")?;
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
        finish_if_captured(self.context(), stream)?;
        shown
    }
}
