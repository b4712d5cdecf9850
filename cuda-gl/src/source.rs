//! [`ShowSource`]: the device memory a target's `show` and `show_video` take, with the
//! compiler's hint towards the call that takes other memory.

use crate::context::Context;
use crate::memory::{DeviceBuffer, DeviceCopy, DevicePtr};
use std::sync::Arc;

mod sealed {
    use super::*;

    /// Where the memory is, how many bytes it holds, and its CUDA context.
    pub trait Memory {
        fn memory(&self) -> (DevicePtr<'_>, usize, &Arc<Context>);
    }
}

/// Device memory that [`DisplayTarget::show`](crate::display::DisplayTarget::show) and
/// [`show_video`](crate::display::DisplayTarget::show_video) take (and
/// [`VideoPlanes::upload`](crate::video::VideoPlanes::upload)): a cuda-gl
/// [`DeviceBuffer`](crate::DeviceBuffer), whose size and context they check. Sealed; cudarc
/// memory goes through `show_cudarc` (`show_video_cudarc`, `upload_cudarc`), memory of any
/// other origin through the `unsafe` `show_raw`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a cuda-gl `DeviceBuffer`, the memory `show` and `show_video` take",
    label = "not a `cuda_gl::DeviceBuffer`",
    note = "cudarc memory (`CudaSlice`, `CudaView`): call `show_cudarc` (`show_video_cudarc`, `upload_cudarc`; feature `cudarc`), which orders the copy after cudarc's writes",
    note = "device memory of any other origin: call the `unsafe` `show_raw(DeviceImage::new(ptr, layout), &stream)` (`show_video_raw` for video)"
)]
pub trait ShowSource: sealed::Memory {}

impl<T: DeviceCopy> sealed::Memory for DeviceBuffer<T> {
    fn memory(&self) -> (DevicePtr<'_>, usize, &Arc<Context>) {
        (self.device_ptr(), self.byte_len(), self.context())
    }
}

impl<T: DeviceCopy> ShowSource for DeviceBuffer<T> {}

/// The memory of `src`: its first byte, its length in bytes, its context.
pub(crate) fn memory_of<S: ShowSource + ?Sized>(src: &S) -> (DevicePtr<'_>, usize, &Arc<Context>) {
    sealed::Memory::memory(src)
}
