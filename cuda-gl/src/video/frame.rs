//! A [`VideoFrame`]: a [`VideoLayout`]'s planes in device memory.

use super::layout::VideoLayout;
use crate::error::Result;
use crate::memory::{DeviceBuffer, DeviceCopy, DevicePtr};

/// A decoded frame in device memory: where its luma's first byte is, and its [`VideoLayout`]
/// (the chroma plane is at [`VideoLayout::chroma_offset`] from there). What
/// [`Converter::convert`](super::Converter::convert) reads.
#[derive(Debug, Clone, Copy)]
pub struct VideoFrame<'a> {
    ptr: DevicePtr<'a>,
    layout: VideoLayout,
}

impl<'a> VideoFrame<'a> {
    /// The frame of `layout` whose luma starts at `ptr` (a decoder's output, say). Nothing is
    /// promised about the memory: [`Converter::convert`](super::Converter::convert), which
    /// reads it, is `unsafe`.
    pub fn new(ptr: DevicePtr<'a>, layout: VideoLayout) -> VideoFrame<'a> {
        VideoFrame { ptr, layout }
    }

    /// The frame of `layout` at the start of `buffer`, which must hold it.
    ///
    /// # Errors
    /// [`VideoError::FrameTooSmall`](super::VideoError::FrameTooSmall) when `buffer` holds
    /// fewer bytes than [`VideoLayout::bytes`].
    pub fn in_buffer<T: DeviceCopy>(
        buffer: &'a DeviceBuffer<T>,
        layout: VideoLayout,
    ) -> Result<VideoFrame<'a>> {
        layout.check_fits(
            "VideoFrame::in_buffer",
            "the device buffer",
            buffer.byte_len(),
        )?;
        Ok(VideoFrame::new(buffer.device_ptr(), layout))
    }

    /// The luma plane's first byte (the frame's).
    pub fn ptr(&self) -> DevicePtr<'a> {
        self.ptr
    }

    /// The chroma plane's first byte: [`ptr`](Self::ptr) plus the layout's chroma offset.
    ///
    /// # Errors
    /// [`UsageError::AddressOverflow`](crate::UsageError::AddressOverflow) when the address
    /// would overflow 64 bits.
    pub fn chroma_ptr(&self) -> Result<DevicePtr<'a>> {
        self.ptr.byte_add(self.layout.chroma_offset())
    }

    /// How the planes lie.
    pub fn layout(&self) -> VideoLayout {
        self.layout
    }
}
