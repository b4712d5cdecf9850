//! cudarc memory on a display target:
//! [`DisplayTarget::show_cudarc`](crate::display::DisplayTarget::show_cudarc).

use super::memory::{CudarcSource, checked_bytes, finish_if_captured};
use crate::display::{DeviceImage, DisplayTarget, Layout};
use crate::error::Result;
use crate::memory::DevicePtr;
use cudarc::driver::CudaStream;
use std::sync::Arc;

impl DisplayTarget {
    /// [`show`](DisplayTarget::show) for cudarc device memory: a `CudaSlice`, a `CudaView`, or a
    /// mapped view, holding an image of `layout`; the copy is queued in `stream`'s order, after
    /// cudarc's own writes of `src`, and (with cudarc's event tracking on, its default)
    /// cudarc's later writes or frees of `src` wait for it. What is ordered after what: as
    /// [`show`](DisplayTarget::show).
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) when `stream` is
    /// not of the target's context or `src` is not of `stream`'s cudarc context (the same
    /// `Arc<CudaContext>`: two `CudaContext`s of one device track their streams apart);
    /// otherwise as `show`.
    pub fn show_cudarc<T, S: CudarcSource<T>>(
        &mut self,
        src: &S,
        layout: Layout,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        // Checked before cudarc is asked for anything: `device_ptr` queues a wait.
        let checked = self.check_stream(stream)?;
        let given = checked_bytes(src, stream, "the display target")?;
        // `read` records cudarc's read event on `stream` when it drops, after the copy was
        // queued (and `stream` made to wait for it), so cudarc orders its later writes and
        // frees of `src` after the copy.
        let (ptr, read) = src.device_ptr(stream);
        let image = DeviceImage::new(DevicePtr::new(ptr), layout);
        // SAFETY: (1) `src` holds `given` bytes of device memory of the target's context
        // (`CudarcSource`; its context is `stream`'s, checked above), which cudarc neither
        // frees nor writes before the read event `read` records after the copy.
        let shown = unsafe { self.show_given(image, given, checked) };
        drop(read);
        finish_if_captured(self.context(), stream)?;
        shown
    }
}
