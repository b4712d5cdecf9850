//! The stream mode's state: a [`FrameStream`] of a few slots of CUDA memory imported into GL.
//! Each present copies the frame into the next slot on the GPU, in the frame's stream order,
//! and GL copies every slot whose frame CUDA has finished into the texture. CUDA and GL are
//! ordered by the stream's events and fences on the CPU, never by a map or an unmap: no
//! handover between the two APIs per frame, at the price of a few frames of latency.

use super::gl_side::GlSide;
use super::staged::Source;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::external::{ExternalGl, FrameRead, FrameStream, FrameWrite};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// Slots of the stream: CUDA may run up to two frames ahead of GL's copy.
const SLOTS: usize = 3;

/// The target drops it before its array: the frame stream's drop waits for CUDA's work (the
/// copies out of the array among it) before it releases its memory.
#[derive(Debug)]
pub(super) struct Streamed {
    stream: FrameStream,
    ctx: Arc<Context>,
}

impl Streamed {
    /// The state for frames of `gl`'s size and format, in the GL context current (`gl`'s).
    ///
    /// # Errors
    /// As [`ExternalGl::current`] (a GL without `GL_EXT_memory_object_fd`, or not on the CUDA
    /// GPU, among them) and [`FrameStream::new`]; the driver's errors from making the array.
    pub(super) fn new(ctx: &Arc<Context>, gl: &GlSide) -> Result<Streamed> {
        let external = ExternalGl::current()?;
        Ok(Streamed {
            stream: FrameStream::new(ctx, &external, gl.frame_bytes(), SLOTS, 1)?,
            ctx: ctx.clone(),
        })
    }

    /// Pushes `source` as the next frame (copied into the next free slot in `stream`'s
    /// order, after waiting at most the stream's timeout for GL's last copy out of that slot),
    /// and copies every finished frame into `gl`'s texture.
    ///
    /// # Errors
    /// As [`FrameStream::push_burst`]; the copies' errors.
    pub(super) fn present(
        &mut self,
        gl: &GlSide,
        source: Source<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let ctx = &self.ctx;
        let (row, height) = gl.frame_shape();
        let mut produce = |write: &FrameWrite<'_>| -> Result<()> {
            if write.len() != row * height {
                return Err(Error::Internal {
                    what: "a display stream slot of another size than its frames".into(),
                });
            }
            let mut copy = source.copy_of_frame(row, height);
            copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
            copy.dstDevice = write.device_ptr().as_raw();
            copy.dstPitch = row;
            // SAFETY: the stream is live while borrowed and of this context (push_burst
            // checked it). In the work: the slot holds `row * height` bytes (checked) and is
            // written only here until its event, recorded on `stream` after this copy, has
            // completed; the source (the target's pixels, `row * height` bytes, or its array
            // of this size) lives until the target is dropped or reconfigured, which drops
            // this frame stream first, and that waits for CUDA's work.
            unsafe {
                ctx.run_now(stream.raw_stream(), "cuMemcpy2DAsync (not called)", |p| {
                    Ok(result::array::copy_2d_async(&copy, p)?)
                })
            }
        };
        let mut consume = |read: &FrameRead| gl.upload_from_buffer(read.buffer());
        self.stream.push_burst(stream, &mut produce, &mut consume)
    }

    /// Copies every pushed frame into `gl`'s texture, waiting (at most the stream's timeout per
    /// slot) for CUDA's copies.
    ///
    /// # Errors
    /// As [`FrameStream::flush`].
    pub(super) fn flush(&mut self, gl: &GlSide) -> Result<()> {
        let mut consume = |read: &FrameRead| gl.upload_from_buffer(read.buffer());
        self.stream.flush(&mut consume)
    }
}
