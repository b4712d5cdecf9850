//! The CUDA array a staged display target's frames are drawn in through a surface, so that a
//! kernel written for [`Frame::surface`](super::Frame::surface) runs unchanged in every mode:
//! in interop mode the surface is the registered texture's; in staged mode it is this array's,
//! copied out to pinned memory at the present.

use super::Format;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::graphics::Surface;
use crate::memory::PinnedBuffer;
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// A 2-D CUDA array of one frame, made for surface load/store, with its surface object.
#[derive(Debug)]
pub(super) struct FrameArray {
    ctx: Arc<Context>,
    raw: sys::CUarray,
    surface: sys::CUsurfObject,
    width: u32,
    height: u32,
    format: Format,
}

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
    /// The driver's errors from binding the context, `cuArray3DCreate` and
    /// `cuSurfObjectCreate`.
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
        Ok(FrameArray {
            ctx: ctx.clone(),
            raw,
            surface,
            width,
            height,
            format,
        })
    }

    /// The array, for copies out of it that the caller keeps it alive for.
    pub(super) fn raw(&self) -> sys::CUarray {
        self.raw
    }

    /// The surface over the whole array, for a frame's kernel.
    pub(super) fn surface(&self) -> Surface<'_> {
        Surface::new(self.surface)
    }

    /// Queues a copy of the whole array into `dst` (one frame, tightly packed rows) in
    /// `stream`'s order; `dst` tracks it (its reads and its drop wait for the copy).
    ///
    /// # Errors
    /// As [`PinnedBuffer::copy_from_device_async`].
    pub(super) fn copy_to(&self, dst: &mut PinnedBuffer<u8>, stream: &impl AsStream) -> Result<()> {
        let row = self.width as usize * self.format.bytes_per_pixel();
        let (array, height) = (self.raw, self.height as usize);
        if dst.len() != row * height {
            return Err(Error::Internal {
                what: "a display array copied into a buffer of another size".into(),
            });
        }
        // SAFETY: the copy writes `row * height` bytes, the buffer's length (checked), from the
        // array, live until the copy has run (Drop waits for the copies first: the staged
        // backend drops its pinned buffers, which wait for their copies, before it).
        unsafe {
            dst.copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                let copy = sys::CUDA_MEMCPY2D {
                    srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
                    srcArray: array,
                    dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                    dstHost: host,
                    dstPitch: row,
                    WidthInBytes: row,
                    Height: height,
                    ..Default::default()
                };
                result::array::copy_2d_async(&copy, p)
            })
        }
    }
}

impl Drop for FrameArray {
    fn drop(&mut self) {
        // The copies out of the array are waited for by the staged buffers or the frame
        // stream, dropped before this (the target's field order, and `reconfigure`); kernels
        // that wrote the surface were queued before those copies, in the frame's stream order.
        self.ctx
            .release_in_drop("destroy a display array", "cuSurfObjectDestroy", || {
                // SAFETY: made in `new`, destroyed once; no work uses it any more (above).
                unsafe { result::array::surface_destroy(self.surface) }
            });
        self.ctx
            .release_in_drop("destroy a display array", "cuArrayDestroy", || {
                // SAFETY: made in `new`, destroyed once, after its surface object.
                unsafe { result::array::destroy(self.raw) }
            });
    }
}
