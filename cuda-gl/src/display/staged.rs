//! The staged mode's state: a frame is copied out of the GPU into pinned host memory in bands,
//! and GL takes each band as soon as its copy has finished, while the next bands are copied:
//! uploaded into the texture straight away, or on NVIDIA's GL written into a pixel buffer of
//! its own and uploaded from it. The texture holds the frame when the
//! present returns (the present waits on the CPU for the frame's kernel and copies), and GL
//! reads a band soon after its bytes land.

use super::array::FrameArray;
use super::gl_side::GlSide;
use super::unpack::Rows;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::glapi::Fence;
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

/// How a frame is cut into bands: the first of `first` bytes, so that the present waits
/// little for it; each next one `growth` times the last, up to `cap` bytes.
#[derive(Debug, Clone, Copy)]
struct BandPlan {
    first: usize,
    growth: usize,
    cap: usize,
}

/// Bands GL uploads from client memory (any GL but NVIDIA's), which it does several times
/// slower than CUDA copies them in (Mesa's llvmpipe: 11 GB/s against 50): each band's upload
/// outlasts the copy of the next, four times its size, so the bands can grow, and fewer
/// uploads cost less (each call costs llvmpipe about 8 µs).
const CLIENT_UPLOAD: BandPlan = BandPlan {
    first: 256 << 10,
    growth: 4,
    cap: usize::MAX,
};

/// Bands NVIDIA's GL writes each into a pixel buffer of its own: about 1 MiB from the third
/// on, the sizes its figures were measured with. (That write, a CPU copy at 10 to 13 GB/s on
/// the H200, is also slower than CUDA's copy in, so bands that grow as [`CLIENT_UPLOAD`]'s
/// would keep it fed too, with fewer calls.)
const BUFFER_WRITE: BandPlan = BandPlan {
    first: 256 << 10,
    growth: 2,
    cap: 1 << 20,
};

/// At most this many bands a frame (the last then takes the rest).
const MAX_BANDS: usize = 32;

/// The rows of each band of a frame of `height` rows of `row` bytes, as `plan` cuts it:
/// together the whole frame, in order.
fn bands(row: usize, height: usize, plan: BandPlan) -> Vec<Rows> {
    let rows_of = |bytes: usize| (bytes / row.max(1)).max(1);
    let mut out = Vec::new();
    let (mut first, mut bytes) = (0, plan.first);
    while first < height {
        let count = if out.len() + 1 == MAX_BANDS {
            height - first
        } else {
            rows_of(bytes).min(height - first)
        };
        out.push(Rows { first, count });
        first += count;
        bytes = bytes.saturating_mul(plan.growth).min(plan.cap);
    }
    out
}

/// The staged mode's state: a pinned buffer per band of a frame. The target drops it before
/// its array: the pinned buffers' drop waits for the copies out of the array.
#[derive(Debug)]
pub(super) struct Staged {
    bands: Vec<Rows>,
    slots: Vec<PinnedBuffer<u8>>,
    /// The fence of the last frame's uploads from the band buffers, if any: the next frame's
    /// bytes are written into them only once it has signalled.
    last_upload: Option<Fence>,
}

impl Staged {
    /// The state for frames of `gl`'s size and format, with the texture made black (a defined
    /// picture until the first frame is presented).
    ///
    /// # Errors
    /// The driver's errors from allocating pinned memory; the upload's errors.
    pub(super) fn new(ctx: &Arc<Context>, gl: &mut GlSide) -> Result<Staged> {
        let (row, height) = gl.frame_shape();
        let plan = if gl.writes_band_buffers() {
            BUFFER_WRITE
        } else {
            CLIENT_UPLOAD
        };
        let bands = bands(row, height, plan);
        gl.make_band_buffers(&bands)?;
        let slots = bands
            .iter()
            .map(|rows| PinnedBuffer::zeroed(ctx, row * rows.count))
            .collect::<Result<Vec<_>>>()?;
        let mut last_upload = None;
        let deadline = Instant::now() + DEFAULT_WAIT_LIMIT;
        gl.upload_bands(
            &bands,
            |k| slot(&slots, k)?.as_slice(),
            &mut last_upload,
            deadline,
        )?;
        Ok(Staged {
            bands,
            slots,
            last_upload,
        })
    }

    /// Copies `source` out in `stream`'s order, band by band, and hands each band to
    /// [`GlSide::upload_bands`] as soon as its copy has finished, while the later bands are
    /// copied: the texture holds the frame when this returns.
    ///
    /// # Errors
    /// The copies' errors (nothing is uploaded then); [`Error::Timeout`] when the copies (and,
    /// through pixel buffers, the last frame's uploads from them) have not all finished within
    /// 10 s of the first wait; the uploads' errors (the texture may then hold part of the
    /// frame).
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
        // Each band waits for its own copy only; all of them, and the last upload's fence,
        // within one limit.
        let deadline = Instant::now() + DEFAULT_WAIT_LIMIT;
        let slots = &self.slots;
        gl.upload_bands(
            &self.bands,
            |k| slot(slots, k)?.as_slice_within(deadline.saturating_duration_since(Instant::now())),
            &mut self.last_upload,
            deadline,
        )
    }
}

/// Band `k`'s buffer.
fn slot(slots: &[PinnedBuffer<u8>], k: usize) -> Result<&PinnedBuffer<u8>> {
    slots.get(k).ok_or_else(|| Error::Internal {
        what: "a staged band with no buffer".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_frame_in_order() {
        let rows = [1, 4, 7, 3000, 7680, 15360, 65536, 1 << 20];
        for plan in [CLIENT_UPLOAD, BUFFER_WRITE] {
            for (row, height) in rows.iter().flat_map(|&r| (0..=4096).map(move |h| (r, h))) {
                let bands = bands(row, height, plan);
                assert!(Rows::cover(&bands, height), "{row}x{height}: {bands:?}");
                assert!(
                    bands.iter().all(|b| b.count > 0),
                    "{row}x{height}: an empty band"
                );
                assert!(bands.len() <= MAX_BANDS);
                // Each band but the last as the plan says, in whole rows (at least one).
                let mut bytes = plan.first;
                for b in bands.iter().rev().skip(1).rev() {
                    assert_eq!(b.count, (bytes / row).max(1), "{row}x{height}: {bands:?}");
                    bytes = bytes.saturating_mul(plan.growth).min(plan.cap);
                }
            }
        }
        // 1080p and 2160p RGBA8: few bands for client uploads, about 1 MiB ones when written.
        let shape = |row, height, plan| -> Vec<usize> {
            bands(row, height, plan).iter().map(|b| b.count).collect()
        };
        assert_eq!(shape(7680, 1080, CLIENT_UPLOAD), [34, 136, 546, 364]);
        assert_eq!(shape(15360, 2160, CLIENT_UPLOAD), [17, 68, 273, 1092, 710]);
        assert_eq!(bands(7680, 1080, BUFFER_WRITE).len(), 10);
        assert_eq!(bands(15360, 2160, BUFFER_WRITE).len(), MAX_BANDS);
        // The band buffers `display_app_gl`'s deleted-buffer test looks for (1001x333 RGBA8).
        assert_eq!(shape(4004, 333, BUFFER_WRITE), [65, 130, 138]);
    }
}
