//! The CUDA array a copying mode's frames are drawn in through a surface, so that a kernel
//! written for [`Frame::surface`](super::Frame::surface) runs unchanged in every mode: in
//! interop mode the surface is the registered texture's; in the copying modes it is this
//! array's, copied out at the present.

use super::image::Format;
use crate::context::Context;
use crate::error::Result;
use crate::graphics::Surface;
use crate::result;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// A 2-D CUDA array of one frame, made for surface load/store, with its surface object.
#[derive(Debug)]
pub(super) struct FrameArray {
    ctx: Arc<Context>,
    raw: sys::CUarray,
    surface: sys::CUsurfObject,
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
        // SAFETY: the context is current (bound above); `zeros` holds `row * height` bytes,
        // the array's size, and outlives the copy: from pageable memory the call returns once
        // the bytes are staged, and the legacy stream it ran on is waited for right after (so
        // that no copy out of the array or kernel on a non-blocking stream races the fill).
        unsafe { result::array::copy_2d(&copy) }?;
        // SAFETY: the legacy stream of the current context.
        unsafe { result::stream::synchronize(sys::CU_STREAM_LEGACY) }?;
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
}

impl Drop for FrameArray {
    fn drop(&mut self) {
        // No work uses the array any more: the copies out of it were waited for by the staged
        // buffers or the frame stream, dropped first; kernels that wrote it were queued before
        // those copies, in their frame's stream order; and when a frame was left unpresented,
        // the canvas waited for the whole context first (or leaked the array).
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
