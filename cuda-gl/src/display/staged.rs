//! The staged mode's state: two pinned host buffers used in turn, so that frame n+1 is copied
//! out of the GPU while frame n is uploaded.

use super::array::FrameArray;
use super::gl_side::GlSide;
use crate::context::Context;
use crate::error::Result;
use crate::memory::{DeviceBuffer, PinnedBuffer};
use crate::stream::AsStream;
use std::sync::Arc;

/// Where a staged frame's picture is on the GPU.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// The target's pixels (a frame whose [`pixels`](super::Frame::pixels) were asked for).
    Pixels(&'a DeviceBuffer<u8>),
    /// The target's array (a frame drawn through its [`surface`](super::Frame::surface)).
    Array(&'a FrameArray),
}

/// The target drops it before its array: the pinned buffers' drop waits for the copies out of
/// the array.
#[derive(Debug)]
pub(super) struct Staged {
    slots: [PinnedBuffer<u8>; 2],
    /// The slot the next frame is copied into.
    next: usize,
    /// The slot whose frame is copied out but not uploaded yet.
    pending: Option<usize>,
}

impl Staged {
    /// The state for frames of `gl`'s size and format, with the texture made black (a defined
    /// picture until the first frame is uploaded).
    ///
    /// # Errors
    /// The driver's errors from allocating pinned memory; the upload's errors.
    pub(super) fn new(ctx: &Arc<Context>, gl: &GlSide) -> Result<Staged> {
        let bytes = gl.frame_bytes();
        let slots = [
            PinnedBuffer::zeroed(ctx, bytes)?,
            PinnedBuffer::zeroed(ctx, bytes)?,
        ];
        gl.upload(slots[0].as_slice()?)?;
        Ok(Staged {
            slots,
            next: 0,
            pending: None,
        })
    }

    /// Copies `source` out in `stream`'s order, then uploads the frame before it (whose copy
    /// ran meanwhile) into `gl`'s texture.
    ///
    /// # Errors
    /// The copy's errors (nothing changes then); the upload's errors (the previous frame is
    /// then left pending, for the next present or [`flush`](Self::flush)).
    pub(super) fn present(
        &mut self,
        gl: &GlSide,
        source: Source<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        // `pending` is never `next`: the buffer copied into is not the one waiting.
        let slot = self.next;
        // The copy is queued before any GL call: a kernel the frame queued is then always
        // followed by work that the buffers' drop waits for.
        match source {
            Source::Pixels(pixels) => self.slots[slot].copy_from_device_async(pixels, stream)?,
            Source::Array(array) => array.copy_to(&mut self.slots[slot], stream)?,
        }
        self.next = 1 - slot;
        match self.pending.replace(slot) {
            Some(previous) => {
                let uploaded = gl.upload(self.slots[previous].as_slice()?);
                if uploaded.is_err() {
                    // This frame waits in its buffer; the previous one is lost.
                    self.pending = Some(slot);
                }
                uploaded
            }
            None => Ok(()),
        }
    }

    /// Uploads the frame copied out but not uploaded yet, waiting (at most 10 s) for its copy.
    ///
    /// # Errors
    /// The owner check's errors; [`Error::Timeout`](crate::Error::Timeout); the driver's error
    /// of the copy; GL's of the upload.
    pub(super) fn flush(&mut self, gl: &GlSide) -> Result<()> {
        if let Some(slot) = self.pending {
            // Taken only once uploaded: after an error (another GL context current, say) a
            // later flush uploads it still.
            gl.upload(self.slots[slot].as_slice()?)?;
            self.pending = None;
        }
        Ok(())
    }
}
