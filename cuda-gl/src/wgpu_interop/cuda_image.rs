//! CUDA's view of a shared texture: the Vulkan memory imported as external memory, mapped as a
//! one-level mipmapped array, its level 0, and a surface object over it for kernels.

use super::format::SharedFormat;
use crate::context::Context;
use crate::error::Result;
use crate::result;
use cuda_gl_sys as sys;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// The CUDA objects over the image's memory, released on drop in the order the driver asks:
/// the surface object, then the mipmapped array ("must be explicitly freed"), then the external
/// memory. Failures are recorded on the context.
///
/// Invariant: dropped only when no CUDA work uses the surface or the array, and before Vulkan
/// frees the memory (the memory outlives CUDA's mapping of it).
#[derive(Debug)]
pub(super) struct CudaImage {
    ctx: Arc<Context>,
    memory: sys::CUexternalMemory,
    mipmapped: sys::CUmipmappedArray,
    /// Level 0 of `mipmapped`: owned by it, not destroyed on its own.
    pub array: sys::CUarray,
    pub surface: sys::CUsurfObject,
}

impl CudaImage {
    /// Imports `fd`, the `OPAQUE_FD` export of a dedicated allocation of `size` bytes holding a
    /// `width` x `height` optimal-tiling image of `format`, and maps it as an array with a
    /// surface object.
    ///
    /// # Safety
    /// 1. `fd` was exported from the dedicated allocation of such an image (`VkImageMemory`),
    ///    which outlives the returned value.
    ///
    /// # Errors
    /// The driver's error from binding the context, `cuImportExternalMemory`,
    /// `cuExternalMemoryGetMappedMipmappedArray`, `cuMipmappedArrayGetLevel` or
    /// `cuSurfObjectCreate`; what was made is released.
    pub unsafe fn import(
        ctx: &Arc<Context>,
        fd: OwnedFd,
        size: u64,
        format: SharedFormat,
        (width, height): (u32, u32),
    ) -> Result<Self> {
        ctx.bind()?;
        // SAFETY: (1): a dedicated allocation of `size` bytes; the context is current.
        let memory = unsafe { result::external::import_memory_fd(fd, size, true) }?;
        let mut this = Self {
            ctx: ctx.clone(),
            memory,
            mipmapped: std::ptr::null_mut(),
            array: std::ptr::null_mut(),
            surface: 0,
        };
        let (element, channels) = format.cuda();
        let desc = sys::CUDA_ARRAY3D_DESCRIPTOR {
            Width: width as usize,
            Height: height as usize,
            Depth: 0,
            Format: element,
            NumChannels: channels,
            Flags: sys::CUDA_ARRAY3D_SURFACE_LDST,
        };
        // SAFETY: the memory holds exactly this image, one level (1).
        this.mipmapped = unsafe { result::external::mapped_mipmapped_array(memory, desc, 1) }?;
        // SAFETY: the mipmapped array is live.
        this.array = unsafe { result::array::mipmap_level(this.mipmapped, 0) }?;
        // SAFETY: the array is live (it lives as long as the mipmapped array, which `this`
        // destroys after the surface object) and was mapped with surface load/store.
        this.surface = unsafe { result::array::surface_create(this.array) }?;
        Ok(this)
    }
}

impl CudaImage {
    /// The copy of `rows` rows of `row` bytes, `pitch` apart from `src`, into the array (row 0
    /// first): the descriptor that `cuMemcpy2DAsync` takes, not queued. Queueing it needs
    /// `src`'s rows live and the array CUDA's (`result::array::copy_2d_async`'s (1)), and the
    /// array to hold `rows` rows of `row` bytes.
    ///
    /// # Errors
    /// `Error::Internal` for a pitch shorter than the row.
    pub fn copy_in(
        &self,
        src: sys::CUdeviceptr,
        pitch: usize,
        (row, rows): (usize, u32),
    ) -> Result<sys::CUDA_MEMCPY2D> {
        if pitch < row {
            return Err(crate::Error::Internal {
                what: format!("a copy of {pitch}-byte rows into an array of {row}-byte rows"),
            });
        }
        Ok(sys::CUDA_MEMCPY2D {
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcDevice: src,
            srcPitch: pitch,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstArray: self.array,
            WidthInBytes: row,
            Height: rows as usize,
            ..Default::default()
        })
    }
}

impl Drop for CudaImage {
    fn drop(&mut self) {
        if !self.ctx.bind_for_drop("release an imported image") {
            return;
        }
        let record = |call, r: result::Result<()>| {
            if let Err(e) = r {
                self.ctx.record_drop_error(call, e);
            }
        };
        // The type's invariant: no CUDA work uses them any more. Each is destroyed once, in the
        // order the driver asks (the object over the array, the array, the memory); a step that
        // failed in `import` left its handle null or 0, and is skipped.
        if self.surface != 0 {
            // SAFETY: see above; the surface is live.
            let r = unsafe { result::array::surface_destroy(self.surface) };
            record("cuSurfObjectDestroy", r);
        }
        if !self.mipmapped.is_null() {
            // SAFETY: see above; no object over it is left.
            let r = unsafe { result::external::mipmapped_array_destroy(self.mipmapped) };
            record("cuMipmappedArrayDestroy", r);
        }
        // SAFETY: see above; every array mapped from it is destroyed.
        let r = unsafe { result::external::destroy_memory(self.memory) };
        record("cuDestroyExternalMemory", r);
    }
}
