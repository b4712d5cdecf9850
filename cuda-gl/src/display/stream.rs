//! The stream mode: a [`FrameStream`] of a few slots of CUDA memory imported into GL. Each
//! present copies the frame into the next slot on the GPU, in the frame's stream order, and
//! GL copies every slot whose frame CUDA has finished into the texture. CUDA and GL are
//! ordered by the stream's events and fences on the CPU, never by a map or an unmap: no
//! handover between the two APIs per frame, at the price of a few frames of latency. Needs
//! NVIDIA's GL on the CUDA GPU with `GL_EXT_memory_object_fd`.

use super::present::{Canvas, CopyOut, CopyingFrame, Present, Source};
use super::texture::Texture;
use crate::context::Context;
use crate::error::Result;
use crate::external::{ExternalGl, FrameRead, FrameStream, FrameWrite};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// Slots of the stream: CUDA may run up to two frames ahead of GL's copy.
const SLOTS: usize = 3;

/// The stream mode's state.
#[derive(Debug)]
pub(super) struct Streamed {
    /// Dropped first: its drop waits for CUDA's work (the copies out of the canvas among it)
    /// before it releases its memory, or leaks it; the canvas waits for those copies too.
    stream: FrameStream,
    canvas: Canvas,
    /// The row bytes and rows of a frame, tightly packed, that `new` made the canvas of and
    /// every slot of `stream` for (`row * height` bytes each: a frame stream's slots are all
    /// of the size it is made with, for good). The copies into the slots rely on it.
    shape: (usize, usize),
    ctx: Arc<Context>,
}

impl Present for Streamed {
    type Texture = Texture;

    type Frame<'t, S: AsStream + 't> = StreamFrame<'t, S>;

    /// The state for frames of `texture`'s size and format, in the GL context current (the
    /// texture's).
    ///
    /// # Errors
    /// As [`ExternalGl::current`] (a GL without `GL_EXT_memory_object_fd`, or not on the CUDA
    /// GPU, among them) and [`FrameStream::new`]; the driver's errors from making the canvas.
    fn new(ctx: &Arc<Context>, texture: &Texture) -> Result<Streamed> {
        let external = ExternalGl::current()?;
        let canvas = Canvas::new(ctx, texture.layout())?;
        // The texture's layout, tightly packed: its frame's bytes (counted, within `usize`,
        // when the layout was made).
        let (row, height) = texture.frame_shape();
        Ok(Streamed {
            stream: FrameStream::new(ctx, &external, row * height, SLOTS, 1)?,
            canvas,
            shape: (row, height),
            ctx: ctx.clone(),
        })
    }

    fn begin<'t, S: AsStream>(
        &'t mut self,
        texture: &'t Texture,
        stream: &'t S,
    ) -> Result<StreamFrame<'t, S>> {
        let slots = Slots {
            frames: &mut self.stream,
            shape: self.shape,
            ctx: &self.ctx,
        };
        CopyingFrame::begin(&mut self.canvas, slots, texture, stream)
    }

    /// Copies every pushed frame into the texture, waiting (at most the stream's timeout per
    /// slot) for CUDA's copies.
    ///
    /// # Errors
    /// As [`FrameStream::flush`].
    fn flush(&mut self, texture: &Texture) -> Result<()> {
        let mut consume = |read: &FrameRead| texture.upload_from_buffer(read.buffer(), false);
        self.stream.flush(&mut consume)
    }
}

/// A stream-mode frame: the canvas it is drawn on, and the frame stream it is pushed into.
pub(super) type StreamFrame<'t, S> = CopyingFrame<'t, S, Slots<'t>>;

/// The frame stream a frame is pushed into, the shape of its frames and its CUDA context.
/// Made only by [`Streamed::begin`], from its own stream and shape.
#[derive(Debug)]
pub(super) struct Slots<'t> {
    frames: &'t mut FrameStream,
    /// [`Streamed`]'s `shape`: that of each slot of `frames`, and of the canvas.
    shape: (usize, usize),
    ctx: &'t Arc<Context>,
}

impl CopyOut for Slots<'_> {
    type Texture = Texture;

    /// Pushes the frame as the next one (copied into the next free slot in the stream's
    /// order, after waiting at most the stream's timeout for GL's last copy out of that slot),
    /// and copies every finished frame into the texture.
    ///
    /// # Errors
    /// As [`FrameStream::push_burst`]; the copies' errors.
    fn copy_out(self, texture: &Texture, source: Source<'_>, stream: &impl AsStream) -> Result<()> {
        let Slots { frames, shape, ctx } = self;
        let (row, height) = shape;
        let mut produce = |write: &FrameWrite<'_>| -> Result<()> {
            let mut copy = source.copy_of_frame(row, height);
            copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
            copy.dstDevice = write.device_ptr().as_raw();
            copy.dstPitch = row;
            // SAFETY: the stream is live while borrowed and of this context (push_burst
            // checked it). In the work: the slot holds `row * height` bytes (a slot of the
            // stream `Streamed::new` made with that size, with the canvas, for `shape`; `begin`
            // hands out only its own stream and shape) and is written only here until its
            // event, recorded on `stream` after this copy, has completed (or the slot is
            // leaked); the source (that state's canvas, `begin` handing out no other: its
            // pixels, `row * height` bytes, or its array of this size) lives until the
            // canvas's drop has waited for the private stream this copy is queued on (or
            // leaks them).
            unsafe {
                ctx.run_now(stream.raw_stream(), "cuMemcpy2DAsync (not called)", |p| {
                    Ok(result::array::copy_2d_async(&copy, p)?)
                })
            }
        };
        let mut consume = |read: &FrameRead| texture.upload_from_buffer(read.buffer(), false);
        frames.push_burst(stream, &mut produce, &mut consume)
    }
}
