//! The wgpu target's interop mode: the texture is a [`SharedTexture`], a Vulkan image that CUDA
//! imported, handed between wgpu and CUDA on the GPU by a timeline semaphore. A frame drawn
//! through its surface is written in place (no copy); a frame's pixels are device memory of the
//! mode's, copied into the image on the GPU at the present. No CPU wait per frame. Needs
//! wgpu's Vulkan backend on the CUDA GPU with external memory and semaphores
//! ([`open_device`](super::open_device) opens one).

use super::place::WgpuPlace;
use super::texture::{CudaWrite, SharedTexture};
use crate::context::Context;
use crate::display::{Layout, Present, PresentFrame};
use crate::error::Result;
use crate::graphics::Surface;
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::cell::Cell;
use std::sync::Arc;

/// The interop mode's state: the shared texture, and the pixels of frames drawn into memory.
#[derive(Debug)]
pub(super) struct Interop {
    shared: SharedTexture,
    /// A frame's pixels (tightly packed), copied into the image at the present.
    pixels: DeviceBuffer<u8>,
    layout: Layout,
    ctx: Arc<Context>,
}

impl Interop {
    /// The texture wgpu samples.
    pub(super) fn texture(&self) -> &wgpu::Texture {
        self.shared.texture()
    }
}

impl Present for Interop {
    type Texture = WgpuPlace;
    type Frame<'t, S: AsStream + 't> = InteropFrame<'t, S>;

    /// # Errors
    /// As [`SharedTexture::new`] (a device that is not Vulkan, lacks the extensions or is
    /// another GPU among them); the driver's error allocating the pixels.
    fn new(ctx: &Arc<Context>, place: &WgpuPlace) -> Result<Interop> {
        let layout = place.layout;
        let shared = SharedTexture::new(
            ctx,
            &place.device,
            &place.queue,
            layout.size(),
            place.format(),
        )?;
        Ok(Interop {
            shared,
            pixels: DeviceBuffer::zeroed(ctx, layout.bytes())?,
            layout,
            ctx: ctx.clone(),
        })
    }

    /// Hands the image to CUDA on the frame's stream, after wgpu's uses of it so far.
    ///
    /// # Errors
    /// As [`SharedTexture::write`].
    fn begin<'t, S: AsStream>(
        &'t mut self,
        _place: &'t WgpuPlace,
        stream: &'t S,
    ) -> Result<InteropFrame<'t, S>> {
        Ok(InteropFrame {
            write: self.shared.write(stream)?,
            pixels: &self.pixels,
            pixels_used: Cell::new(false),
            layout: self.layout,
            ctx: &self.ctx,
            stream,
        })
    }
}

/// An interop frame: the image is CUDA's from the frame's begin until its present or drop,
/// which hand it back to wgpu (the guard's).
pub(super) struct InteropFrame<'t, S: AsStream> {
    write: CudaWrite<'t, S>,
    pixels: &'t DeviceBuffer<u8>,
    /// The pixels were asked for: they are what the frame shows.
    pixels_used: Cell<bool>,
    layout: Layout,
    ctx: &'t Arc<Context>,
    stream: &'t S,
}

impl<S: AsStream> PresentFrame for InteropFrame<'_, S> {
    fn surface(&self) -> Result<Surface<'_>> {
        Ok(self.write.surface())
    }

    fn pixels(&self) -> Result<DevicePtr<'_>> {
        self.pixels_used.set(true);
        Ok(self.pixels.device_ptr())
    }

    /// Copies the pixels into the image when they were asked for, then hands the image back
    /// to wgpu: the stream signals after the work queued on it, and wgpu's next submits wait
    /// for that signal on the GPU.
    ///
    /// # Errors
    /// The copy's errors (the guard then still hands the image back, with what the kernel
    /// wrote); as [`CudaWrite::finish`].
    fn present(self: Box<Self>) -> Result<()> {
        let InteropFrame {
            write,
            pixels,
            pixels_used,
            layout,
            ctx,
            stream,
        } = *self;
        if pixels_used.get() {
            let row = layout.row_bytes();
            let copy = sys::CUDA_MEMCPY2D {
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcDevice: pixels.device_ptr().as_raw(),
                srcPitch: row,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
                dstArray: write.array(),
                WidthInBytes: row,
                Height: layout.height() as usize,
                ..Default::default()
            };
            // SAFETY: the stream is live while borrowed and of the target's context (the
            // target checked it). In the work: the pixels hold `row * height` bytes (made for
            // this layout) and live until the mode is dropped, whose shared texture's drop
            // orders after CUDA's work (the next write waits for this frame's signal, which
            // follows the copy); the array is the image's level 0, of this size and format,
            // CUDA's until the signal `finish` queues after the copy.
            unsafe {
                ctx.run_now(stream.raw_stream(), "cuMemcpy2DAsync (not called)", |p| {
                    Ok(result::array::copy_2d_async(&copy, p)?)
                })
            }?;
        }
        write.finish()
    }
}
