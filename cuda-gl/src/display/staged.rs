//! The staged mode: a frame (its pixels, or the CUDA array its surface writes) is copied out
//! of the GPU into pinned host memory in bands (asynchronously, a buffer per band: a small
//! first one, so that GL starts soon, then larger ones), and GL takes each band as soon as its
//! copy has finished, while the next bands are copied: uploaded into the texture straight
//! from that memory, or on NVIDIA's GL written into a pixel buffer of its own and uploaded
//! from it. The texture holds the frame when the present returns (the present waits on the
//! CPU for the frame's kernel and copies), and GL reads a band soon after its bytes land. Any
//! GL.

use super::gl_buffer::GlBuffers;
use super::present::{Canvas, CopyOut, CopyingFrame, Present, Source};
use super::texture::{Object, Rows, Texture};
use crate::context::Context;
use crate::error::{Result, UsageError};
use crate::glapi::{Fence, GlFns, bind_checked};
use crate::memory::PinnedBuffer;
use crate::stream::{AsStream, wait_limit};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// The bands of a frame of `height` rows of `row` bytes uploaded from client memory (a wgpu
/// target's staged mode: `write_texture` copies the bytes on the CPU, as such GL does; the
/// texture's tests, which upload as the staged mode does on such GL).
#[cfg(any(feature = "wgpu", all(test, feature = "egl")))]
pub(crate) fn bands_for_client_upload(row: usize, height: usize) -> Vec<Rows> {
    bands(row, height, CLIENT_UPLOAD)
}

/// Whether staged frames go through pixel buffers in the current context (of `fns`):
/// on NVIDIA's GL the upload from a buffer is the GPU's copy, which runs in GL's order while
/// the CPU goes on, where an upload from client memory costs ten times the copy (1,966 µs for
/// a 1920x1080 RGBA8 frame on the H200); on any other GL (Mesa's llvmpipe, a laptop's
/// integrated GPU, VirtualGL) the frame is uploaded straight from pinned memory, one CPU copy
/// fewer where GL copies on the CPU anyway. NVIDIA's GL wrote bands into one frame-sized
/// buffer at offsets at 1.6x the cost of a buffer per band (1,534 against 947 µs a 1080p frame
/// on the H200: records/history.md).
fn staged_through_buffer(fns: &GlFns) -> bool {
    // GL_VENDOR only: Mesa's drivers over an NVIDIA GPU (zink, WSL2's d3d12) name it in
    // GL_RENDERER, and they are GL that copies on the CPU.
    fns.string(gl::VENDOR)
        .is_some_and(|vendor| vendor.to_ascii_uppercase().starts_with("NVIDIA"))
}

/// One band of a frame: its rows, and the pinned buffer of their bytes (tightly packed). The
/// GL target's staged mode and the wgpu target's cut frames into these.
///
/// Its buffer holds exactly `row * rows.count` bytes: the fields are private, a band is made
/// only by [`allocate`](Self::allocate), which sizes the buffer so, and a pinned buffer's
/// length never changes. The copy in and the uploads rely on it.
#[derive(Debug)]
pub(crate) struct Band {
    rows: Rows,
    /// The bytes of each of its rows.
    row: usize,
    slot: PinnedBuffer<u8>,
}

impl Band {
    /// The bands of `cut`, rows of `row` bytes, each with pinned memory of its bytes in `ctx`.
    ///
    /// # Errors
    /// [`UsageError::TooLarge`] for a band of more bytes than `usize` holds; the driver's
    /// errors from allocating pinned memory.
    pub(crate) fn allocate(ctx: &Arc<Context>, row: usize, cut: Vec<Rows>) -> Result<Vec<Band>> {
        cut.into_iter()
            .map(|rows| {
                let bytes = row
                    .checked_mul(rows.count)
                    .ok_or_else(|| UsageError::TooLarge {
                        what: "the bytes of a staged band",
                        value: row as u128 * rows.count as u128,
                        max: usize::MAX as u128,
                    })?;
                let slot = PinnedBuffer::zeroed(ctx, bytes)?;
                Ok(Band { rows, row, slot })
            })
            .collect()
    }

    /// Its rows of the frame.
    pub(crate) fn rows(&self) -> Rows {
        self.rows
    }

    /// Its bytes, the rows tightly packed (`rows().count` rows of the `row` bytes it was
    /// allocated with), once its copy in has finished, waiting at most `limit`.
    ///
    /// # Errors
    /// As [`PinnedBuffer::as_slice_within`].
    pub(crate) fn bytes_within(&self, limit: Duration) -> Result<&[u8]> {
        self.slot.as_slice_within(limit)
    }

    /// Queues the copy of the band's rows of `source` (rows of the `row` bytes it was
    /// allocated with) into its pinned memory, in `stream`'s order.
    ///
    /// # Safety
    /// 1. `source` has at least `rows().first + rows().count` rows of the band's `row` bytes
    ///    (those given to [`allocate`](Self::allocate)), which stay live until the copy has
    ///    run.
    ///
    /// # Errors
    /// The copy's errors.
    pub(crate) unsafe fn copy_in(
        &mut self,
        source: Source<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let (rows, row) = (self.rows, self.row);
        // SAFETY: the buffer holds `row * rows.count` bytes, pinned (the type's invariant:
        // `allocate` sized it so, and the private fields change no more), which the copy of
        // `rows.count` rows of `row` bytes, tightly packed, fills; (1) for the source.
        unsafe {
            self.slot
                .copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                    source.queue_rows_to_host(host, row, rows, p)
                })
        }
    }
}

/// The bands of a frame and what GL takes them through.
#[derive(Debug)]
pub(super) struct Bands {
    /// Together the frame, in order.
    bands: Vec<Band>,
    /// On NVIDIA's GL a buffer per band, which GL writes the band into whole
    /// (`glBufferSubData`) and uploads it from; none on other GL.
    buffers: GlBuffers,
    /// The fence of the last frame's uploads from the band buffers, if any: the next frame's
    /// bytes are written into them only once it has signalled.
    last_upload: Option<Fence>,
}

/// The staged mode's state.
#[derive(Debug)]
pub(super) struct Staged {
    bands: Bands,
    // Last: the pinned buffers' drop (above) waits for the copies out of the canvas (and the
    // canvas's own drop for cuda-gl's private stream, which they are queued on).
    canvas: Canvas,
}

impl Present for Staged {
    type Texture = Texture;

    type Frame<'t, S: AsStream + 't> = StagedFrame<'t, S>;

    /// The state for frames of `texture`'s size and format, with the texture made black (a
    /// defined picture until the first frame is presented).
    ///
    /// # Errors
    /// The owner check's errors; the driver's errors from allocating pinned and device memory;
    /// the band buffers' and the upload's errors.
    fn new(ctx: &Arc<Context>, texture: &Texture) -> Result<Staged> {
        let fns = texture.owner().check("DisplayTarget::new")?;
        let through = staged_through_buffer(fns);
        let (row, height) = texture.frame_shape();
        let plan = if through { BUFFER_WRITE } else { CLIENT_UPLOAD };
        let cut = bands(row, height, plan);
        let canvas = Canvas::new(ctx, texture.layout())?;
        let buffers = GlBuffers::new(
            texture,
            cut.iter().filter(|_| through).map(|rows| rows.count * row),
            gl::DYNAMIC_DRAW,
            "glBufferData (a display band's buffer)",
        )?;
        let mut bands = Bands {
            bands: Band::allocate(ctx, row, cut)?,
            buffers,
            last_upload: None,
        };
        bands.upload(texture, Instant::now() + wait_limit())?;
        Ok(Staged { bands, canvas })
    }

    fn begin<'t, S: AsStream>(
        &'t mut self,
        texture: &'t Texture,
        stream: &'t S,
    ) -> Result<StagedFrame<'t, S>> {
        CopyingFrame::begin(&mut self.canvas, &mut self.bands, texture, stream)
    }
}

/// A staged frame: the canvas it is drawn on, and the bands it is copied out through.
pub(super) type StagedFrame<'t, S> = CopyingFrame<'t, S, &'t mut Bands>;

impl CopyOut for &mut Bands {
    type Texture = Texture;

    /// Copies the frame out in the stream's order, band by band, and hands each band to GL as
    /// soon as its copy has finished, while the later bands are copied: the texture holds the
    /// frame when this returns.
    ///
    /// # Errors
    /// The copies' errors (nothing is uploaded then); [`Error::Timeout`](crate::Error::Timeout)
    /// when the copies (and, through pixel buffers, the last frame's uploads from them) have not
    /// all finished within the [wait limit](crate::wait_limit) (10 s by default) of the first wait;
    /// the uploads' errors (the texture may then hold part of the frame).
    fn copy_out(self, texture: &Texture, source: Source<'_>, stream: &impl AsStream) -> Result<()> {
        // Every copy is queued before any GL call: a kernel the frame queued is then always
        // followed by work that the buffers' drop waits for.
        for band in &mut self.bands {
            texture.check_rows(&band.rows(), None)?;
            // SAFETY: (1) of `copy_in`: the source is the staged state's canvas (`begin` hands
            // out only its own canvas with these bands), which `new` made of the texture's
            // layout that it cut the bands from, rows of the bands' row bytes: the rows lie
            // within it (and within the texture, checked). It outlives the copy (the staged
            // state drops the bands' buffers, which wait for their copies, before the canvas).
            unsafe { band.copy_in(source, stream) }?;
        }
        // Each band waits for its own copy only; all of them, and the last upload's fence,
        // within one limit.
        self.upload(texture, Instant::now() + wait_limit())
    }
}

impl Bands {
    /// Uploads the bands into `texture` in order, each once its buffer's copies have finished
    /// (so that a band's bytes may still be arriving while the bands before it are handled).
    /// Straight from each band's bytes without band buffers (`glTexSubImage2D` of the band's
    /// rows reads client memory before it returns); with them (NVIDIA's GL), each band is
    /// written whole into its own buffer (`glBufferSubData` copies the bytes before it
    /// returns) and its rows uploaded from it, in GL's order, after waiting for the fence of
    /// the frame before's uploads (which read the buffers) until `deadline`, so that GL neither
    /// stalls nor copies aside a buffer still being read; the fence is then this frame's.
    ///
    /// # Errors
    /// The waits' errors ([`Error::Timeout`](crate::Error::Timeout) past `deadline`; the bands
    /// before are uploaded); as [`Texture::upload`]; [`Error::GlCall`](crate::Error::GlCall)
    /// when GL refuses an upload or a buffer's binding (the bands before it are uploaded);
    /// [`DisplayError::ObjectReplaced`](crate::display::DisplayError::ObjectReplaced) when
    /// the application deleted or relabelled the texture or a band's buffer (asked before the
    /// first band: nothing is uploaded).
    fn upload(&mut self, texture: &Texture, deadline: Instant) -> Result<()> {
        let Bands {
            bands,
            buffers,
            last_upload,
        } = self;
        let buffers = buffers.names();
        if let Some(fence) = last_upload.as_ref() {
            let limit = deadline.saturating_duration_since(Instant::now());
            match fence.client_wait(limit, || "the last staged upload's GL fence".into()) {
                Ok(()) => {}
                // A fence GL cannot wait on (GL_WAIT_FAILED) is dropped: GL's own ordering
                // still keeps the next write after the upload (by stalling), so the next
                // present goes on.
                Err(e @ crate::Error::GlCall { .. }) => {
                    *last_upload = None;
                    return Err(e);
                }
                // Kept (a timeout, another context current): the next present waits again.
                Err(e) => return Err(e),
            }
        }
        *last_upload = None;
        let queued = std::cell::Cell::new(false);
        let through = !buffers.is_empty();
        let uploaded = texture.upload("glTexSubImage2D (a staged frame)", through, |fns| {
            if !through {
                texture.bind_for_upload(fns, 0)?;
            }
            // All before the first band, so that a frame refused for a replaced buffer
            // uploads nothing.
            for &buffer in buffers {
                texture.label().check_own(fns, Object::Buffer, buffer)?;
            }
            for (k, band) in bands.iter().enumerate() {
                let limit = deadline.saturating_duration_since(Instant::now());
                let pixels = band.bytes_within(limit)?;
                texture.check_rows(&band.rows(), Some(pixels.len()))?;
                let Some(&buffer) = buffers.get(k) else {
                    // SAFETY: the texture is bound (read back, before the loop); the rows lie
                    // within it (checked); no pixel buffer is bound (read back), so `pixels`,
                    // the band's rows tightly packed (checked), are read before the call
                    // returns.
                    unsafe { texture.tex_sub_image(fns, &band.rows(), pixels.as_ptr().cast()) };
                    continue;
                };
                // Written with the buffer bound as a copy target, bound as the pixel
                // unpack buffer only for the upload: the GL calls of the benchmark's
                // plain-call version (`raw bands ... each written whole`), so that the two
                // differ only in cuda-gl's own work.
                bind_checked(
                    fns,
                    gl::COPY_WRITE_BUFFER,
                    buffer,
                    "glBindBuffer (a display buffer)",
                )?;
                // SAFETY: a context is current; the band's buffer is bound as the copy
                // target (read back); GL refuses a range past its end with an error,
                // writing nothing (it holds the band, unless the application gave its name
                // other storage); `pixels` is read before the call returns.
                unsafe {
                    (fns.buffer_sub_data)(
                        gl::COPY_WRITE_BUFFER,
                        0,
                        pixels.len() as isize,
                        pixels.as_ptr().cast(),
                    );
                }
                texture.bind_for_upload(fns, buffer)?;
                // SAFETY: the texture and the band's buffer are bound (read back); the
                // rows lie within the texture (checked); the null pointer is offset 0 in
                // the buffer, and GL refuses a read past its end with an error rather than
                // reading it.
                unsafe { texture.tex_sub_image(fns, &band.rows(), std::ptr::null()) };
                queued.set(true);
            }
            Ok(())
        });
        if queued.get() {
            // Whatever the uploads' final error check said, they may read the buffers now: the
            // next frame's writes wait for this fence. Without one, GL keeps them
            // after the upload by stalling (with no time limit), so a fence that cannot be
            // placed is logged, not an error of a frame that was uploaded.
            match Fence::place(texture.owner()) {
                Ok(fence) => *last_upload = Some(fence),
                Err(e) => log::warn!("cuda-gl: no GL fence after a staged upload: {e}"),
            }
        }
        uploaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Rows {
        /// Whether `bands` cover `height` rows in order: each starting where the last ended,
        /// together every row once.
        fn cover(bands: &[Rows], height: usize) -> bool {
            let mut next = 0;
            for b in bands {
                if b.first != next {
                    return false;
                }
                next += b.count;
            }
            next == height
        }
    }

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
