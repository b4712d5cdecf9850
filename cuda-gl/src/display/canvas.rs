//! What the copying modes (staged, stream) share: the frame's canvas in CUDA memory, the
//! pixels a kernel writes and the array its surface writes, which the present copies out; and
//! what the frames leave to order about it.

use super::array::FrameArray;
use super::texture::{Rows, Texture};
use crate::context::Context;
use crate::error::Result;
use crate::graphics::Surface;
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// What the frames leave to order, beyond the work the mode tracks itself.
#[derive(Debug, Default)]
struct Order {
    /// A present queued a copy of the pixels or the array on cuda-gl's private stream: the
    /// next frame's stream joins that stream first, so that its kernel does not overwrite what
    /// the copy still reads.
    copied: bool,
    /// A frame was begun and not presented: its kernel may still write the array with no copy
    /// after it that a drop waits for.
    open: bool,
}

/// The pixels (tightly packed) and the array of one frame of a copying mode's texture. The
/// mode drops it after what copies out of it (its buffers wait for those copies).
#[derive(Debug)]
pub(super) struct Canvas {
    ctx: Arc<Context>,
    pixels: DeviceBuffer<u8>,
    /// Dropped by hand, once the work that may still write it is known done (see `Drop`).
    array: ManuallyDrop<FrameArray>,
    order: Order,
}

impl Canvas {
    /// A canvas of `texture`'s size and format in `ctx`, black.
    ///
    /// # Errors
    /// The driver's errors allocating the pixels and making the array.
    pub(super) fn new(ctx: &Arc<Context>, texture: &Texture) -> Result<Canvas> {
        let (width, height) = texture.size();
        Ok(Canvas {
            ctx: ctx.clone(),
            pixels: DeviceBuffer::zeroed(ctx, texture.frame_bytes())?,
            array: ManuallyDrop::new(FrameArray::new(ctx, width, height, texture.format())?),
            order: Order::default(),
        })
    }

    /// Begins a frame on `stream` (of the canvas's context): after the last present's copy,
    /// which may still read the canvas.
    ///
    /// # Errors
    /// The errors of joining cuda-gl's private stream.
    pub(super) fn begin<S: AsStream>(&mut self, stream: &S) -> Result<CanvasFrame<'_>> {
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
        self.order.open = true;
        Ok(CanvasFrame {
            pixels: &self.pixels,
            array: &self.array,
            order: &mut self.order,
            pixels_used: Cell::new(false),
        })
    }
}

impl Drop for Canvas {
    fn drop(&mut self) {
        // A frame was begun and not presented (dropped, or its present failed before its
        // copy): its kernel may still write the array, which neither cuSurfObjectDestroy nor
        // cuArrayDestroy waits for. The whole context is waited for; when that fails the array
        // is leaked instead. (The copies out of it were waited for by the mode's buffers,
        // dropped before.)
        if self.order.open {
            let idle = self
                .ctx
                .bind()
                .and_then(|()| Ok(result::ctx::synchronize()?));
            if let Err(e) = idle {
                log::error!("cuda-gl: display target's CUDA array leaked: {e}");
                return;
            }
        }
        // SAFETY: dropped once, here, and never used after.
        unsafe { ManuallyDrop::drop(&mut self.array) };
    }
}

/// A frame's hold on a [`Canvas`].
#[derive(Debug)]
pub(super) struct CanvasFrame<'t> {
    pixels: &'t DeviceBuffer<u8>,
    array: &'t FrameArray,
    order: &'t mut Order,
    /// The frame's pixels were asked for: they are what it shows.
    pixels_used: Cell<bool>,
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
    pub(super) fn present(self, copy: impl FnOnce(Source<'t>) -> Result<()>) -> Result<()> {
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

/// Where a copied frame's picture is on the GPU.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// The canvas's pixels (a frame whose [`pixels`](super::Frame::pixels) were asked for).
    Pixels(&'a DeviceBuffer<u8>),
    /// The canvas's array (a frame drawn through its [`surface`](super::Frame::surface)).
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
