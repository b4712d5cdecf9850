//! The staged mode's state: a frame is copied out of the GPU into pinned host memory in bands
//! of about 1 MiB, and GL takes each band as soon as its copy has finished, while the next
//! bands are copied: uploaded into the texture straight away, or on NVIDIA's GL written into
//! the pixel buffer, which is uploaded once the last band is in. The texture holds the frame
//! when the present returns (the present waits on the CPU for the frame's kernel and copies),
//! and GL reads a band soon after its bytes land.

use super::array::FrameArray;
use super::gl_side::{GlSide, Rows};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, PinnedBuffer};
use crate::result;
use crate::stream::AsStream;
use crate::stream::DEFAULT_WAIT_LIMIT;
use cuda_gl_sys as sys;
use std::sync::Arc;
use std::time::Instant;

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

    /// Queues the copy of `rows` of the frame (each `row` bytes) into `host` (rows tightly
    /// packed) on stream `p`.
    ///
    /// # Safety
    /// 1. `host` is `row * rows.count` writable bytes of host memory that CUDA can reach
    ///    (pinned or registered), live until the copy has run; the source has at least
    ///    `rows.first + rows.count` rows of `row` bytes, live until then too; `p` is a live
    ///    stream of the current context.
    pub(super) unsafe fn queue_rows_to_host(
        self,
        host: *mut std::ffi::c_void,
        row: usize,
        rows: Rows,
        p: sys::CUstream,
    ) -> result::Result<()> {
        let mut copy = self.copy_of_frame(row, rows.count);
        copy.srcY = rows.first;
        copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
        copy.dstHost = host;
        copy.dstPitch = row;
        // SAFETY: (1).
        unsafe { result::array::copy_2d_async(&copy, p) }
    }
}

/// A band's bytes: about this many, so that a band just copied in is still in the CPU's cache
/// when GL reads it, the copy of the next band runs during its upload, and a present waits
/// little for its first band (about 20 µs of copy on an H200).
const BAND_BYTES: usize = 1 << 20;
/// At most this many bands a frame.
const MAX_BANDS: usize = 32;

/// The rows of each band of a frame of `height` rows of `row` bytes: every band but the last
/// of one size, together the whole frame, in order.
fn bands(row: usize, height: usize) -> Vec<Rows> {
    let frame = row * height;
    let count = frame
        .div_ceil(BAND_BYTES)
        .clamp(1, MAX_BANDS)
        .min(height.max(1));
    let per_band = height.div_ceil(count).max(1);
    (0..height)
        .step_by(per_band)
        .map(|first| Rows {
            first,
            count: per_band.min(height - first),
        })
        .collect()
}

/// The staged mode's state: a pinned buffer per band of a frame. The target drops it before
/// its array: the pinned buffers' drop waits for the copies out of the array.
#[derive(Debug)]
pub(super) struct Staged {
    bands: Vec<Rows>,
    slots: Vec<PinnedBuffer<u8>>,
}

impl Staged {
    /// The state for frames of `gl`'s size and format, with the texture made black (a defined
    /// picture until the first frame is presented).
    ///
    /// # Errors
    /// The driver's errors from allocating pinned memory; the upload's errors.
    pub(super) fn new(ctx: &Arc<Context>, gl: &GlSide) -> Result<Staged> {
        let (row, height) = gl.frame_shape();
        let bands = bands(row, height);
        let slots = bands
            .iter()
            .map(|rows| PinnedBuffer::zeroed(ctx, row * rows.count))
            .collect::<Result<Vec<_>>>()?;
        let staged = Staged { bands, slots };
        gl.upload_bands(&staged.bands, |k| staged.slot(k)?.as_slice())?;
        Ok(staged)
    }

    /// Band `k`'s buffer.
    fn slot(&self, k: usize) -> Result<&PinnedBuffer<u8>> {
        self.slots.get(k).ok_or_else(|| Error::Internal {
            what: "a staged band with no buffer".into(),
        })
    }

    /// Copies `source` out in `stream`'s order, band by band, and hands each band to
    /// [`GlSide::upload_bands`] as soon as its copy has finished, while the later bands are
    /// copied: the texture holds the frame when this returns.
    ///
    /// # Errors
    /// The copies' errors (nothing is uploaded then); [`Error::Timeout`] when the copies have
    /// not all finished within 10 s of the first wait; the upload's errors (the texture may
    /// then hold part of the frame).
    pub(super) fn present(
        &mut self,
        gl: &GlSide,
        source: Source<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let (row, height) = gl.frame_shape();
        if !Rows::cover(&self.bands, height) {
            return Err(Error::Internal {
                what: "staged bands that do not cover their frame in order".into(),
            });
        }
        // Every copy is queued before any GL call: a kernel the frame queued is then always
        // followed by work that the buffers' drop waits for.
        for (slot, &rows) in self.slots.iter_mut().zip(&self.bands) {
            if slot.len() != row * rows.count {
                return Err(Error::Internal {
                    what: "a staged buffer of another size than its band".into(),
                });
            }
            // SAFETY: the buffer is the band's length (checked), pinned; the source is the
            // target's pixels or array of this frame's shape (the bands lie within it:
            // checked above), which outlive the copy (the target drops this state, whose
            // buffers wait for their copies, before them).
            unsafe {
                slot.copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                    source.queue_rows_to_host(host, row, rows, p)
                })
            }?;
        }
        // Each band waits for its own copy only; all of them within one limit.
        let deadline = Instant::now() + DEFAULT_WAIT_LIMIT;
        gl.upload_bands(&self.bands, |k| {
            self.slot(k)?
                .as_slice_within(deadline.saturating_duration_since(Instant::now()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_frame_in_order() {
        let rows = [1, 4, 7, 3000, 7680, 15360, 65536, 1 << 20];
        for (row, height) in rows.iter().flat_map(|&r| (0..=4096).map(move |h| (r, h))) {
            let bands = bands(row, height);
            let mut next = 0;
            for b in &bands {
                assert_eq!(b.first, next, "{row}x{height}: {bands:?}");
                assert!(b.count > 0, "{row}x{height}: an empty band");
                next += b.count;
            }
            assert_eq!(next, height, "{row}x{height}");
            assert!(bands.len() <= MAX_BANDS);
            // Every band but the last of one size, at most about 2 bands' bytes unless a single row is
            // bigger or the frame needs more bands than the cap.
            let first = bands.first().map_or(0, |b| b.count);
            assert!(bands.iter().rev().skip(1).all(|b| b.count == first));
            if row * height <= MAX_BANDS * BAND_BYTES && first > 1 {
                assert!(
                    first * row <= 2 * BAND_BYTES,
                    "{row}x{height}: {first} rows a band"
                );
            }
        }
        // About 1 MiB a band: a 1080p RGBA8 frame in 8, a 2160p one in 32.
        assert_eq!(bands(7680, 1080).len(), 8);
        assert_eq!(bands(15360, 2160).len(), 32);
    }
}
