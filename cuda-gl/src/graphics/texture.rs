//! CUDA texture objects over a mapped image, for sampled reads (`tex2D`) with filtering in
//! kernels. "Tex" names CUDA's texture objects ([`TexObject`], the handle [`Tex`], [`TexDesc`]);
//! "texture" alone is a GL texture ([`TextureName`](crate::TextureName)).

use super::Registration;
use super::array::MappedArray;
use super::retire::Retired;
use crate::error::Result;
use crate::module::KernelParam;
use crate::result;
use cuda_gl_sys as sys;
use std::marker::PhantomData;

/// How a texture object samples (`CUDA_TEXTURE_DESC`, the common fields).
///
/// **The default reads integer formats as integers** (`CU_TRSF_READ_AS_INTEGER`), with point
/// sampling and texel coordinates: an RGBA8 texture is then read with `tex2D<uchar4>`, and
/// linear filtering is refused by the driver. For the common `tex2D<float4>` read of an RGBA8
/// (or any integer) texture, with values in 0..1 and linear filtering, use
/// [`TexDesc::normalized_float`]. Float formats (RGBA16F, RGBA32F) read as floats either
/// way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TexDesc {
    /// Linear filtering instead of nearest (point) sampling.
    pub linear_filter: bool,
    /// Coordinates in 0..1 instead of texels.
    pub normalized_coords: bool,
    /// Integer formats read as floats in 0..1.
    pub read_as_normalized_float: bool,
    /// Wrap instead of clamp at the borders.
    pub wrap: bool,
}

impl TexDesc {
    /// Integer formats read as floats in 0..1 (`tex2D<float4>` on RGBA8), linearly filtered,
    /// at texel coordinates (`x + 0.5, y + 0.5` is the centre of texel `(x, y)`), clamped at
    /// the borders. Set `normalized_coords` or `wrap` on the result for 0..1 coordinates or
    /// wrapping.
    pub fn normalized_float() -> TexDesc {
        TexDesc {
            linear_filter: true,
            read_as_normalized_float: true,
            ..TexDesc::default()
        }
    }

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
pub struct TexObject<'m> {
    pub(super) reg: &'m Registration,
    pub(crate) raw: sys::CUtexObject,
}

/// A texture object handle, to pass to a kernel taking `cudaTextureObject_t`; it borrows its
/// [`TexObject`]. The pair mirrors [`Surface`](super::Surface) (the handle a kernel gets) and
/// [`SurfaceObject`](super::SurfaceObject) (the object a caller owns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Tex<'t> {
    raw: sys::CUtexObject,
    _texture: PhantomData<&'t ()>,
}

// SAFETY: `cudaTextureObject_t` is a 64-bit handle passed by value.
unsafe impl KernelParam for Tex<'_> {}

impl Tex<'_> {
    /// The raw `CUtexObject`, valid while the [`TexObject`] it was taken from lives.
    pub fn raw(&self) -> sys::CUtexObject {
        self.raw
    }
}

impl TexObject<'_> {
    /// The raw `CUtexObject`, valid while this object lives.
    pub fn raw(&self) -> sys::CUtexObject {
        self.raw
    }

    /// The handle to pass to a kernel.
    pub fn handle(&self) -> Tex<'_> {
        Tex {
            raw: self.raw,
            _texture: PhantomData,
        }
    }
}

impl Drop for TexObject<'_> {
    fn drop(&mut self) {
        // Kernels queued with its handle may still run: destroyed after the unmap's work.
        self.reg.retired.retire(Retired::Tex(self.raw));
    }
}

/// A texture object over `array`, owned by the caller and retired on `reg` when dropped.
pub(super) fn create_tex<'m>(
    reg: &'m Registration,
    array: &MappedArray<'m>,
    desc: &TexDesc,
) -> Result<TexObject<'m>> {
    array.origin.check_owner(reg, "texture object")?;
    reg.ctx.bind()?;
    let raw_desc = desc.raw();
    // SAFETY: the array is mapped for the borrow `'m`, which the texture object cannot outlive;
    // its drop retires it until the work queued before the unmap is done.
    let raw = unsafe { result::array::texture_create(array.raw, &raw_desc) }?;
    Ok(TexObject { reg, raw })
}
