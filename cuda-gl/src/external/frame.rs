//! What a [`FrameStream`](super::FrameStream)'s producer and consumer are given: a frame's
//! device address ([`FrameWrite`]) and its GL buffer ([`FrameRead`]).

use super::exportable::ExportableMemory;
use crate::memory::DevicePtr;

/// CUDA's view of the frame being produced: where to write it.
#[derive(Debug)]
pub struct FrameWrite<'a> {
    pub(super) index: u64,
    pub(super) slot: usize,
    pub(super) memory: &'a ExportableMemory,
}

impl FrameWrite<'_> {
    /// The frame's index: 0 for the first frame pushed, then 1, 2, ...
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The slot the frame goes into.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// The slot's device address, for kernel arguments.
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        self.memory.device_ptr_unchecked()
    }

    /// The frame's size in bytes (as asked for).
    pub fn len(&self) -> usize {
        self.memory.requested_size()
    }

    /// Whether the frame has no bytes (never true).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// GL's view of a frame that CUDA has finished writing: the GL buffer that holds it.
#[derive(Debug, Clone, Copy)]
pub struct FrameRead {
    pub(super) index: u64,
    pub(super) slot: usize,
    pub(super) buffer: u32,
    pub(super) bytes: usize,
    pub(super) behind: u64,
}

impl FrameRead {
    /// The frame's index, as in [`FrameWrite::index`].
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The slot the frame is in.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// The GL buffer name that holds the frame (e.g. the storage of a `GL_TEXTURE_BUFFER`, a
    /// vertex buffer, or a pixel unpack buffer). Read it only in this call of the consumer: the
    /// fence placed after the burst covers the GL commands issued by then.
    pub fn buffer(&self) -> u32 {
        self.buffer
    }

    /// The frame's size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the frame has no bytes (never true).
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// How many frames were pushed after this one when GL was given it: the stream's latency in
    /// frames.
    pub fn frames_behind(&self) -> u64 {
        self.behind
    }
}
