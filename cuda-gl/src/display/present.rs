//! The interface of a display mode, and what the copying modes share.
//!
//! Each mode is one file that implements [`Present`] for its state (which it owns whole:
//! registrations, pixel buffers, pinned memory, CUDA memory) and [`PresentFrame`] for its
//! frame; `mode.rs` dispatches to them. A new mode is one more such file and one more variant
//! there.
//!
//! The copying modes (staged, stream) draw a frame on a [`Canvas`] in CUDA memory, the pixels
//! a kernel writes and the CUDA array its surface writes (so that a kernel written for
//! [`Frame::surface`](super::Frame::surface) runs unchanged in every mode: in interop mode the
//! surface is the registered texture's), which their present copies out.

use super::texture::Rows;
use crate::context::Context;
use crate::error::Result;
use crate::fresh::fill_fresh;
use crate::graphics::Surface;
use crate::image::{Format, Layout};
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::result;
use crate::stream::{AsStream, wait_limit};
use crate::wait::InDrop;
use cuda_gl_sys as sys;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// A display mode's state, made for one texture (of one size and format): a target of
/// another size makes new state.
pub(crate) trait Present: Sized {
    /// What the mode puts frames on: the target's GL texture, or for wgpu's modes the wgpu
    /// texture with its device and queue.
    type Texture;

    /// A frame of the mode, begun on a stream of type `S`.
    type Frame<'t, S: AsStream + 't>: PresentFrame
    where
        Self: 't;

    /// The mode's state for `texture`, in CUDA context `ctx` and the GL context current (the
    /// texture's).
    ///
    /// # Errors
    /// Why the mode cannot work here, or the errors of making its objects.
    fn new(ctx: &Arc<Context>, texture: &Self::Texture) -> Result<Self>;

    /// Begins a frame on `stream`, which the caller checked is of the target's context.
    ///
    /// # Errors
    /// The mode's errors of ordering the frame after the last one.
    fn begin<'t, S: AsStream>(
        &'t mut self,
        texture: &'t Self::Texture,
        stream: &'t S,
    ) -> Result<Self::Frame<'t, S>>;

    /// Uploads what presents left pending: nothing, but in a mode whose presents lag.
    ///
    /// # Errors
    /// The uploads' errors.
    fn flush(&mut self, _texture: &Self::Texture) -> Result<()> {
        Ok(())
    }

    /// Undoes what an earlier frame left mapped for CUDA (a frame forgotten with
    /// `mem::forget`), before GL reads the texture outside a frame (nothing, but where CUDA
    /// maps the texture).
    ///
    /// # Errors
    /// The unmap's errors.
    fn recover(&mut self) -> Result<()> {
        Ok(())
    }

    /// Releases what CUDA holds of the texture (nothing, but where CUDA registered it),
    /// before the texture is deleted. Called again on a target released already, when it
    /// does nothing more.
    ///
    /// # Errors
    /// The driver's error: CUDA may still hold the texture, which the target then leaks.
    fn release(&mut self) -> Result<()> {
        Ok(())
    }
}

/// One frame of a mode. Dropped unpresented, it shows nothing: what it mapped is unmapped (by
/// the mappings' guards), and nothing is copied or uploaded.
pub(crate) trait PresentFrame {
    /// The surface a kernel draws the frame through.
    ///
    /// # Errors
    /// The mode's errors of making it reachable (a map).
    fn surface(&self) -> Result<Surface<'_>>;

    /// The first pixel of the frame's pixels (the texture's size and format, rows tightly
    /// packed), which become what the frame shows.
    ///
    /// # Errors
    /// The mode's errors of making them reachable (a map).
    fn pixels(&self) -> Result<DevicePtr<'_>>;

    /// Puts the frame on the texture (boxed: the public frame holds any mode's).
    ///
    /// # Errors
    /// The mode's errors of the copy, the unmap and the upload.
    fn present(self: Box<Self>) -> Result<()>;
}

/// What the frames leave to order, beyond the work the mode tracks itself.
#[derive(Debug, Default)]
struct Order {
    /// A present queued a copy of the pixels or the array on cuda-gl's private stream, or a dropped
    /// frame joined that stream to its own: the next frame's stream joins the private stream first,
    /// so that its kernel does not overwrite what the copy still reads, nor race a dropped frame's
    /// kernel; and the canvas's drop waits for the private stream (at most the [wait
    /// limit](crate::wait_limit), 10 s by default), which runs that work in order, before freeing
    /// the pixels and the array.
    copied: bool,
    /// A frame was begun and not presented (yet): its kernel may still write the canvas with
    /// no copy after it that a drop waits for.
    open: bool,
    /// A frame ended unpresented with no join (forgotten, or its join failed), so a kernel may
    /// still write the canvas whatever the later frames did: for good, the drop waits for the
    /// whole context.
    abandoned: bool,
}

/// The pixels (tightly packed) and the array of one frame of a copying mode's texture. The
/// mode drops it after what copies out of it (its buffers wait for those copies).
#[derive(Debug)]
pub(crate) struct Canvas {
    ctx: Arc<Context>,
    /// Both dropped by hand, once the work that may still write them is known done (see
    /// `Drop`): neither `cuArrayDestroy` nor `cuMemFree` waits for it within a limit.
    pixels: ManuallyDrop<DeviceBuffer<u8>>,
    array: ManuallyDrop<FrameArray>,
    order: Order,
}

impl Canvas {
    /// A canvas of `layout`'s size and format (tightly packed) in `ctx`, black.
    ///
    /// # Errors
    /// The driver's errors allocating the pixels and making the array.
    pub(crate) fn new(ctx: &Arc<Context>, layout: Layout) -> Result<Canvas> {
        let (width, height) = layout.size();
        // A plain buffer until the canvas holds it: when the array cannot be made, the pixels
        // are freed (their zeroing was waited for, and no other work knows them).
        let pixels = DeviceBuffer::zeroed(ctx, layout.packed_as(layout.format())?.bytes())?;
        let array = FrameArray::new(ctx, width, height, layout.format())?;
        Ok(Canvas {
            ctx: ctx.clone(),
            pixels: ManuallyDrop::new(pixels),
            array: ManuallyDrop::new(array),
            order: Order::default(),
        })
    }

    /// Begins a frame on `stream` (of the canvas's context): after the last present's copy,
    /// which may still read the canvas.
    ///
    /// # Errors
    /// The errors of joining cuda-gl's private stream.
    pub(crate) fn begin<S: AsStream>(&mut self, stream: &S) -> Result<CanvasFrame<'_>> {
        if self.order.copied {
            // A present's copy may still read the pixels or the array, ordered only before the
            // work of its own stream: this stream waits for it (cuda-gl's private stream runs
            // its work in order, so joining it now orders after that copy). Every time, not
            // only for another stream: a stream handle of a destroyed stream can come back.
            // SAFETY: the stream is live while borrowed, of this context (the target checked
            // it); nothing is queued.
            unsafe {
                self.ctx.run_now(
                    stream.raw_stream(),
                    "DisplayTarget::frame (not begun)",
                    |_| Ok(()),
                )
            }?;
        }
        // Frames borrow the canvas one at a time: the last one has ended.
        self.order.abandoned |= self.order.open;
        self.order.open = true;
        Ok(CanvasFrame {
            ctx: &self.ctx,
            stream: stream.raw_stream(),
            pixels: &self.pixels,
            array: &self.array,
            order: &mut self.order,
            pixels_used: Cell::new(false),
            ended: false,
        })
    }
}

impl Drop for Canvas {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        // A frame forgotten, or dropped with no join: its kernel may still write the pixels or the
        // array, so the whole context is waited for. Otherwise the presents' copies out of them,
        // and the kernels of frames dropped unpresented (whose streams the private stream joined),
        // come before the private stream's work so far: that is waited for (neither cuArrayDestroy
        // nor cuMemFree waits within a limit; the mode's buffers, dropped before, may have given up
        // on the copies). At most the wait limit either way: after that (a kernel that does not
        // end) both are leaked instead.
        let (idle, waited_with) = if self.order.open || self.order.abandoned {
            let idle = self.ctx.synchronize_within(wait_limit());
            (idle, "cuCtxSynchronize")
        } else if self.order.copied {
            (self.ctx.finish_queued(), "cuStreamQuery")
        } else {
            (Ok(()), "")
        };
        match idle {
            // SAFETY: dropped once, here, and never used after; no work uses them any more
            // (`idle`).
            Ok(()) => unsafe {
                ManuallyDrop::drop(&mut self.array);
                ManuallyDrop::drop(&mut self.pixels);
            },
            Err(e) => self.ctx.record_drop_wait(
                "waiting for a display target's frames (its CUDA array and pixels are leaked)",
                waited_with,
                e,
            ),
        }
    }
}

/// A frame's hold on a [`Canvas`].
#[derive(Debug)]
pub(crate) struct CanvasFrame<'t> {
    ctx: &'t Arc<Context>,
    /// The frame's stream, borrowed by the frame (so live) for as long as this.
    stream: sys::CUstream,
    pixels: &'t DeviceBuffer<u8>,
    array: &'t FrameArray,
    order: &'t mut Order,
    /// The frame's pixels were asked for: they are what it shows.
    pixels_used: Cell<bool>,
    /// Presented (or its present tried): the drop has nothing to order.
    ended: bool,
}

impl<'t> CanvasFrame<'t> {
    /// The array's surface.
    pub(super) fn surface(&self) -> Surface<'_> {
        self.array.surface()
    }

    /// The pixels, which become what the frame shows.
    pub(super) fn pixels(&self) -> DevicePtr<'_> {
        self.pixels_used.set(true);
        self.pixels.device_ptr()
    }

    /// Presents the frame through `copy`, which queues the copy out of the source (the
    /// pixels if they were asked for, else the array) and hands it to GL.
    ///
    /// # Errors
    /// `copy`'s.
    pub(super) fn present(mut self, copy: impl FnOnce(Source<'t>) -> Result<()>) -> Result<()> {
        self.ended = true;
        let source = if self.pixels_used.get() {
            Source::Pixels(self.pixels)
        } else {
            Source::Array(self.array)
        };
        // Set before the copy is tried: a copy that fails after queueing part of its work is
        // joined too.
        self.order.copied = true;
        let presented = copy(source);
        if presented.is_ok() {
            self.order.open = false;
        }
        presented
    }
}

/// What a copying mode (staged, stream) does with a presented frame's picture; the rest of
/// such a mode's frame is the same in every one of them ([`CopyingFrame`]).
pub(crate) trait CopyOut {
    /// What the frame is copied onto (as [`Present::Texture`]).
    type Texture;

    /// Queues the copy of `source` (the canvas's) in `stream`'s order and hands the frame to
    /// the graphics API for `texture`.
    ///
    /// # Errors
    /// The mode's errors of the copies and the uploads.
    fn copy_out(
        self,
        texture: &Self::Texture,
        source: Source<'_>,
        stream: &impl AsStream,
    ) -> Result<()>;
}

/// A frame of a copying mode: the canvas it is drawn on, and `M`, what the mode copies it out
/// through.
#[derive(Debug)]
pub(crate) struct CopyingFrame<'t, S, M: CopyOut> {
    canvas: CanvasFrame<'t>,
    out: M,
    texture: &'t M::Texture,
    stream: &'t S,
}

impl<'t, S: AsStream, M: CopyOut> CopyingFrame<'t, S, M> {
    /// Begins a frame on `stream`, drawn on `canvas` and copied out through `out` into
    /// `texture`.
    ///
    /// # Errors
    /// As [`Canvas::begin`].
    pub(crate) fn begin(
        canvas: &'t mut Canvas,
        out: M,
        texture: &'t M::Texture,
        stream: &'t S,
    ) -> Result<Self> {
        Ok(CopyingFrame {
            canvas: canvas.begin(stream)?,
            out,
            texture,
            stream,
        })
    }
}

impl<S: AsStream, M: CopyOut> PresentFrame for CopyingFrame<'_, S, M> {
    fn surface(&self) -> Result<Surface<'_>> {
        Ok(self.canvas.surface())
    }

    fn pixels(&self) -> Result<DevicePtr<'_>> {
        Ok(self.canvas.pixels())
    }

    /// Copies the frame out through the mode's [`CopyOut`].
    ///
    /// # Errors
    /// As the mode's [`CopyOut::copy_out`].
    fn present(self: Box<Self>) -> Result<()> {
        let CopyingFrame {
            canvas,
            out,
            texture,
            stream,
        } = *self;
        canvas.present(|source| out.copy_out(texture, source, stream))
    }
}

impl Drop for CanvasFrame<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // Dropped unpresented: the frame's kernel, queued on its stream, may still write the
        // canvas, and no copy after it orders the next frame (on any stream) or the canvas's
        // drop after it. The private stream is joined to the frame's stream: the next frame's
        // stream joins the private stream (`copied`), and the canvas's drop waits for it.
        // Without the join (a capturing stream refuses it) the frame is abandoned, and the drop
        // waits for the whole context.
        // SAFETY: the frame's stream is live while the frame borrows it, of the canvas's
        // context (the target checked it); nothing is queued.
        let joined = unsafe {
            self.ctx
                .run_now(self.stream, "dropping a display frame (a join)", |_| Ok(()))
        };
        match joined {
            Ok(()) => {
                self.order.copied = true;
                self.order.open = false;
            }
            Err(e) => log::warn!(
                "cuda-gl: a display frame dropped unpresented could not be ordered ({e}); the \
                 target's drop waits for the whole context"
            ),
        }
    }
}

/// Where a copied frame's picture is on the GPU.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source<'a> {
    /// The canvas's pixels (a frame whose [`pixels`](super::Frame::pixels) were asked for).
    Pixels(&'a DeviceBuffer<u8>),
    /// The canvas's array (a frame drawn through its [`surface`](super::Frame::surface)).
    Array(&'a FrameArray),
}

impl Source<'_> {
    /// A copy of the whole frame, `row` bytes by `height` rows, from this source: the caller
    /// sets the destination.
    pub(crate) fn copy_of_frame(self, row: usize, height: usize) -> sys::CUDA_MEMCPY2D {
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
    pub(crate) unsafe fn queue_rows_to_host(
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

/// A 2-D CUDA array of one frame, made for surface load/store, with its surface object.
#[derive(Debug)]
pub(crate) struct FrameArray {
    ctx: Arc<Context>,
    raw: sys::CUarray,
    surface: sys::CUsurfObject,
}

// SAFETY: CUDA handles of `ctx`, which belong to the context, not to a thread: the calls that
// use them run with `ctx` bound on the calling thread (`new` and the drop's `release_in_drop`
// bind it; the copies out of the array are queued by the target's present, on a stream of
// `ctx`, as the pinned and device buffers' are, which are `Send + Sync`), and a shared
// reference only reads the handles (a kernel's argument). No GL call is made. The GL display
// target that holds one stays on its thread for its own reasons (its GL calls).
unsafe impl Send for FrameArray {}
// SAFETY: as above.
unsafe impl Sync for FrameArray {}

/// The array format and channel count of `format`.
fn array_format(format: Format) -> (sys::CUarray_format, u32) {
    use sys::CUarray_format as F;
    match format {
        Format::Rgba8 => (F::CU_AD_FORMAT_UNSIGNED_INT8, 4),
        Format::Rgba32F => (F::CU_AD_FORMAT_FLOAT, 4),
        Format::R8 => (F::CU_AD_FORMAT_UNSIGNED_INT8, 1),
        Format::R32F => (F::CU_AD_FORMAT_FLOAT, 1),
    }
}

impl FrameArray {
    /// An array of `width` x `height` pixels of `format` in `ctx`.
    ///
    /// # Errors
    /// The driver's errors from binding the context, `cuArray3DCreate`, `cuSurfObjectCreate`,
    /// `cuStreamCreate`, the fill's copy and `cuStreamQuery`;
    /// [`Error::Timeout`](crate::Error::Timeout) when the fill (on a non-blocking stream of its
    /// own, which waits for no other work) has not finished within the wait limit (the array is
    /// then leaked).
    pub(super) fn new(ctx: &Arc<Context>, width: u32, height: u32, format: Format) -> Result<Self> {
        ctx.bind()?;
        let (array_format, channels) = array_format(format);
        let desc = sys::CUDA_ARRAY3D_DESCRIPTOR {
            Width: width as usize,
            Height: height as usize,
            Depth: 0,
            Format: array_format,
            NumChannels: channels,
            Flags: sys::CUDA_ARRAY3D_SURFACE_LDST,
        };
        // SAFETY: the context is current (bound above).
        let raw = unsafe { result::array::create(&desc) }?;
        // SAFETY: `raw` is live, made for surface load/store; the surface object is destroyed
        // before it (Drop).
        let surface = match unsafe { result::array::surface_create(raw) } {
            Ok(surface) => surface,
            Err(e) => {
                // SAFETY: made above, no object over it, nothing queued on it.
                if let Err(destroy) = unsafe { result::array::destroy(raw) } {
                    ctx.record_drop_error("destroying a display array", destroy);
                }
                return Err(e.into());
            }
        };
        let array = FrameArray {
            ctx: ctx.clone(),
            raw,
            surface,
        };
        // Zeroed (black, or 0.0), so that a frame that draws nothing shows a defined picture
        // and no memory of an earlier allocation.
        let row = width as usize * format.bytes_per_pixel();
        let zeros = vec![0u8; row * height as usize];
        let copy = sys::CUDA_MEMCPY2D {
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: zeros.as_ptr().cast(),
            srcPitch: row,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstArray: raw,
            WidthInBytes: row,
            Height: height as usize,
            ..Default::default()
        };
        // On a stream of its own: the array is known to no other work yet, so a kernel
        // elsewhere (on a blocking stream too) does not hold the fill up.
        let filled = fill_fresh(ctx, "the zeroing of a new display array", |s| {
            // SAFETY: (1) `zeros` holds `row * height` bytes, the array's size, and both live
            // until the copy has run (leaked otherwise, below); (2) `s` is a live stream of the
            // bound context.
            Ok(unsafe { result::array::copy_2d_async(&copy, s) }?)
        });
        if let Err(e) = filled {
            // The fill may still run: neither the array nor the bytes it reads are freed
            // under it.
            return Err(e.leaking(|| {
                array.leak();
                std::mem::forget(zeros);
            }));
        }
        Ok(array)
    }

    /// The array, for copies out of it that the caller keeps it alive for.
    pub(super) fn raw(&self) -> sys::CUarray {
        self.raw
    }

    /// The surface over the whole array, for a frame's kernel.
    pub(super) fn surface(&self) -> Surface<'_> {
        Surface::new(self.surface)
    }

    /// Gives the array up: nothing is destroyed, for work that may still use it.
    fn leak(mut self) {
        self.raw = std::ptr::null_mut();
    }
}

impl Drop for FrameArray {
    fn drop(&mut self) {
        if self.raw.is_null() {
            // Given up on (`leak`).
            return;
        }
        // No work uses the array any more: the canvas that holds it waited for the copies out
        // of it and the kernels of frames dropped unpresented (cuda-gl's private stream), or
        // for the whole context after a frame it could not join, before dropping it (or leaked
        // it instead).
        self.ctx
            .release_in_drop("destroy a display array", "cuSurfObjectDestroy", || {
                // SAFETY: made in `new`, destroyed once; no work uses it (above).
                unsafe { result::array::surface_destroy(self.surface) }
            });
        self.ctx
            .release_in_drop("destroy a display array", "cuArrayDestroy", || {
                // SAFETY: made in `new`, destroyed once, after its surface object; idle.
                unsafe { result::array::destroy(self.raw) }
            });
    }
}
