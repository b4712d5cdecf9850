//! The staged mode's state: two pinned host buffers used in turn, so that frame n+1 is copied
//! out of the GPU while frame n is uploaded.

use super::array::FrameArray;
use super::gl_side::GlSide;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, PinnedBuffer};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// Where a copied frame's picture is on the GPU.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// The target's pixels (a frame whose [`pixels`](super::Frame::pixels) were asked for).
    Pixels(&'a DeviceBuffer<u8>),
    /// The target's array (a frame drawn through its [`surface`](super::Frame::surface)).
    Array(&'a FrameArray),
}

impl Source<'_> {
    /// A copy of the whole frame, `row` bytes by `height` rows, from this source: the caller
    /// sets the destination.
    pub(super) fn copy_of_frame(self, row: usize, height: usize) -> sys::CUDA_MEMCPY2D {
        let mut copy = sys::CUDA_MEMCPY2D {
            WidthInBytes: row,
            Height: height,
            ..Default::default()
        };
        match self {
            Source::Pixels(pixels) => {
                copy.srcMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
                copy.srcDevice = pixels.device_ptr().as_raw();
                copy.srcPitch = row;
            }
            Source::Array(array) => {
                copy.srcMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_ARRAY;
                copy.srcArray = array.raw();
            }
        }
        copy
    }

    /// Queues the copy of the whole frame into `host` (`row * height` bytes, rows tightly
    /// packed) on stream `p`.
    ///
    /// # Safety
    /// 1. `host` is `row * height` writable bytes of host memory that CUDA can reach (pinned or
    ///    registered), live until the copy has run; the source is `row` bytes by `height`
    ///    rows, live until then too; `p` is a live stream of the current context.
    pub(super) unsafe fn queue_to_host(
        self,
        host: *mut std::ffi::c_void,
        (row, height): (usize, usize),
        p: sys::CUstream,
    ) -> result::Result<()> {
        let mut copy = self.copy_of_frame(row, height);
        copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
        copy.dstHost = host;
        copy.dstPitch = row;
        // SAFETY: (1).
        unsafe { result::array::copy_2d_async(&copy, p) }
    }
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
        let shape = gl.frame_shape();
        if self.slots[slot].len() != shape.0 * shape.1 {
            return Err(Error::Internal {
                what: "a staged buffer of another size than its frames".into(),
            });
        }
        // SAFETY: the buffer is one frame long (checked), pinned; the source is the target's
        // pixels or array of this shape, which outlive the copy (the target drops this state,
        // whose buffers wait for their copies, before them).
        unsafe {
            self.slots[slot].copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                source.queue_to_host(host, shape, p)
            })
        }?;
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
