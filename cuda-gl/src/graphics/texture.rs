//! Texture objects over a mapped image, for sampled reads (`tex2D`) with filtering in kernels.

use super::Registration;
use super::array::MappedArray;
use super::retire::Retired;
use crate::error::Result;
use crate::module::KernelParam;
use crate::result;
use cuda_gl_sys as sys;
use std::marker::PhantomData;

/// How a texture object samples (`CUDA_TEXTURE_DESC`, the common fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextureDesc {
    /// Linear filtering instead of nearest (point) sampling.
    pub linear_filter: bool,
    /// Coordinates in 0..1 instead of texels.
    pub normalized_coords: bool,
    /// Integer formats read as floats in 0..1.
    pub read_as_normalized_float: bool,
    /// Wrap instead of clamp at the borders.
    pub wrap: bool,
}

impl TextureDesc {
    pub(super) fn raw(&self) -> sys::CUDA_TEXTURE_DESC {
        let address = if self.wrap {
            sys::CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP
        } else {
            sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP
        };
        let mut flags = if self.read_as_normalized_float {
            0
        } else {
            sys::CU_TRSF_READ_AS_INTEGER
        };
        if self.normalized_coords {
            flags |= sys::CU_TRSF_NORMALIZED_COORDINATES;
        }
        sys::CUDA_TEXTURE_DESC {
            addressMode: [address; 3],
            filterMode: if self.linear_filter {
                sys::CUfilter_mode::CU_TR_FILTER_MODE_LINEAR
            } else {
                sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT
            },
            flags,
            ..Default::default()
        }
    }
}

/// A texture object owned by the caller. The borrow of the mapping forces its drop before the
/// unmap; it is then destroyed once the work queued before the unmap is done.
#[derive(Debug)]
#[must_use = "a texture object does nothing unless its handle is passed to a kernel"]
pub struct TextureObject<'m> {
    pub(super) reg: &'m Registration,
    pub(super) raw: sys::CUtexObject,
}

/// A texture object handle, to pass to a kernel taking `cudaTextureObject_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct TextureHandle<'t> {
    raw: sys::CUtexObject,
    _texture: PhantomData<&'t ()>,
}

// SAFETY: `cudaTextureObject_t` is a 64-bit handle passed by value.
unsafe impl KernelParam for TextureHandle<'_> {}

impl TextureObject<'_> {
    /// The handle to pass to a kernel.
    pub fn handle(&self) -> TextureHandle<'_> {
        TextureHandle {
            raw: self.raw,
            _texture: PhantomData,
        }
    }
}

impl Drop for TextureObject<'_> {
    fn drop(&mut self) {
        // Kernels queued with its handle may still run: destroyed after the unmap's work.
        self.reg.retired.retire(Retired::Texture(self.raw));
    }
}

/// A texture object over `array`, owned by the caller and retired on `reg` when dropped.
pub(super) fn create_texture<'m>(
    reg: &'m Registration,
    array: &MappedArray<'m>,
    desc: &TextureDesc,
) -> Result<TextureObject<'m>> {
    reg.ctx.bind()?;
    let raw_desc = desc.raw();
    // SAFETY: the array is mapped for the borrow `'m`, which the texture object cannot outlive;
    // its drop retires it until the work queued before the unmap is done.
    let raw = unsafe { result::array::texture_create(array.raw, &raw_desc) }?;
    Ok(TextureObject { reg, raw })
}
