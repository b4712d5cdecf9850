//! The CUDA arrays of a mapped image: one per array index and mip level, and the mipmapped
//! array over all levels. Each borrows the mapping.

use super::{ImageTarget, Kind, Registration};
use crate::error::{Error, Result, UsageError};
use crate::result;
use cuda_gl_sys as sys;

/// The mapping an array belongs to: what its copies need to know.
#[derive(Debug, Clone, Copy)]
pub(super) struct Origin<'m> {
    /// The registration it is an array of: objects over it belong to that mapping, copies bind
    /// its context, and its flags say whether CUDA may write it.
    pub(super) reg: &'m Registration,
    /// The stream of the map: copies are queued there.
    pub(super) stream: sys::CUstream,
}

impl<'m> Origin<'m> {
    /// Refuses an array of another mapping than `reg`'s: an object over it would be retired, and
    /// ordered by `launch`'s rule, with the wrong mapping.
    pub(super) fn check_owner(&self, reg: &Registration, what: &'static str) -> Result<()> {
        if std::ptr::eq(self.reg, reg) {
            Ok(())
        } else {
            Err(UsageError::ArrayOfAnotherMapping {
                what,
                array: format!("GL {} {}", self.reg.kind.describe(), self.reg.name),
                mapping: format!("GL {} {}", reg.kind.describe(), reg.name),
            }
            .into())
        }
    }

    pub(super) fn of(reg: &'m Registration, stream: sys::CUstream) -> Origin<'m> {
        Origin { reg, stream }
    }
}

/// The array of sub-resource (`index`, `level`) of `reg`, mapped on `stream`.
pub(super) fn mapped_array(
    reg: &Registration,
    stream: sys::CUstream,
    index: u32,
    level: u32,
) -> Result<MappedArray<'_>> {
    reg.ctx.bind()?;
    // SAFETY: the registration is mapped for as long as the caller's borrow.
    let raw = unsafe { result::graphics::mapped_array(reg.raw, index, level) }.map_err(|e| {
        if e.code == sys::CUresult::CUDA_ERROR_INVALID_VALUE {
            Error::InvalidSubresource {
                index,
                level,
                source: e,
            }
        } else {
            e.into()
        }
    })?;
    // Only layered targets have layers: elsewhere every index names the one storage.
    let layered = matches!(
        reg.kind,
        Kind::Image(ImageTarget::Texture2DArray | ImageTarget::CubeMap)
    );
    let storage = Storage {
        level,
        layers: if layered {
            (index, index.saturating_add(1))
        } else {
            (0, 1)
        },
    };
    MappedArray::describe(raw, Origin::of(reg, stream), storage)
}

/// The mipmapped array of `reg`, mapped on `stream`.
pub(super) fn mapped_mipmapped_array(
    reg: &Registration,
    stream: sys::CUstream,
) -> Result<MappedMipmappedArray<'_>> {
    reg.ctx.bind()?;
    // SAFETY: the registration is mapped for as long as the caller's borrow.
    let raw = unsafe { result::graphics::mapped_mipmapped_array(reg.raw) }?;
    Ok(MappedMipmappedArray {
        raw,
        origin: Origin::of(reg, stream),
    })
}

/// The element format of a CUDA array (`CUarray_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayFormat(pub sys::CUarray_format);

impl ArrayFormat {
    /// 8-bit unsigned channels, as GL's `RGBA8`.
    pub const UNSIGNED_INT8: ArrayFormat =
        ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8);
    /// 16-bit unsigned channels, as GL's `R16` and `RG16`.
    pub const UNSIGNED_INT16: ArrayFormat =
        ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT16);
    /// 32-bit float channels, as GL's `RGBA32F`.
    pub const FLOAT: ArrayFormat = ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_FLOAT);
    /// 16-bit float channels.
    pub const HALF: ArrayFormat = ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_HALF);

    /// The size of one channel in bytes, for the plain (uncompressed, one value per channel)
    /// formats GL images map to; `None` for block-compressed, packed-normalized and video
    /// formats.
    pub fn bytes_per_channel(self) -> Option<usize> {
        use sys::CUarray_format as F;
        match self.0 {
            F::CU_AD_FORMAT_UNSIGNED_INT8 | F::CU_AD_FORMAT_SIGNED_INT8 => Some(1),
            F::CU_AD_FORMAT_UNSIGNED_INT16
            | F::CU_AD_FORMAT_SIGNED_INT16
            | F::CU_AD_FORMAT_HALF => Some(2),
            F::CU_AD_FORMAT_UNSIGNED_INT32
            | F::CU_AD_FORMAT_SIGNED_INT32
            | F::CU_AD_FORMAT_FLOAT => Some(4),
            _ => None,
        }
    }
}

/// A CUDA array of a mapped image, valid while the mapping lives.
///
/// It remembers the stream of the map: its copies (`copy_to_host`, `copy_from_device`, ...) are
/// queued there, in order with the kernels of the mapping and before its unmap.
///
/// A layer of a `GL_TEXTURE_2D_ARRAY` (or a cube map face), asked for with
/// [`MappedImage::array`](crate::MappedImage::array)`(layer, level)`, is a 2-D array
/// ([`depth`](Self::depth) 0). Level 0 of the *mipmapped* array of the same texture
/// ([`MappedImage::mipmapped_array`](crate::MappedImage::mipmapped_array)) is instead one
/// layered array over all layers: [`is_layered`](Self::is_layered) is true and
/// [`depth`](Self::depth) is the layer count (CUDA's `CUDA_ARRAY3D_LAYERED` convention).
#[derive(Debug, Clone, Copy)]
pub struct MappedArray<'m> {
    pub(super) raw: sys::CUarray,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) depth: usize,
    pub(super) format: ArrayFormat,
    pub(super) channels: u32,
    pub(super) flags: u32,
    pub(super) origin: Origin<'m>,
    pub(super) storage: Storage,
}

/// Which part of its registration's storage an array handle is: the driver hands out several
/// handles for one storage (`array(0, 0)` and level 0 of the mipmapped array of a 2-D texture
/// differ), so overlap is judged by this, never by handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Storage {
    /// The mip level.
    pub(super) level: u32,
    /// The layers (or cube faces) it covers, `first..end`; `0..1` for a texture without
    /// layers.
    pub(super) layers: (u32, u32),
}

impl MappedArray<'_> {
    /// Whether `self` and `other` share storage: arrays of one registration, at one mip level,
    /// whose layers overlap.
    pub(super) fn overlaps(&self, other: &MappedArray<'_>) -> bool {
        std::ptr::eq(self.origin.reg, other.origin.reg)
            && self.storage.level == other.storage.level
            && self.storage.layers.0 < other.storage.layers.1
            && other.storage.layers.0 < self.storage.layers.1
    }
}

impl<'m> MappedArray<'m> {
    pub(super) fn describe(
        raw: sys::CUarray,
        origin: Origin<'m>,
        storage: Storage,
    ) -> Result<MappedArray<'m>> {
        // SAFETY: the array is live while mapped.
        let d = unsafe { result::array::descriptor(raw) }?;
        Ok(MappedArray {
            raw,
            width: d.Width,
            height: d.Height,
            depth: d.Depth,
            format: ArrayFormat(d.Format),
            channels: d.NumChannels,
            flags: d.Flags,
            origin,
            storage,
        })
    }

    /// The raw `CUarray`, valid only while the mapping lives.
    pub fn raw(&self) -> sys::CUarray {
        self.raw
    }

    /// Width in elements.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in elements (0 for 1-D).
    pub fn height(&self) -> usize {
        self.height
    }

    /// Depth in elements (0 unless 3-D), or the number of layers of a layered array.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Whether it is a layered array (`CUDA_ARRAY3D_LAYERED`): [`depth`](Self::depth) counts
    /// layers, not a third dimension. True for level 0 of the mipmapped array of a
    /// `GL_TEXTURE_2D_ARRAY`, false for the per-layer arrays of
    /// [`MappedImage::array`](crate::MappedImage::array).
    pub fn is_layered(&self) -> bool {
        self.flags & sys::CUDA_ARRAY3D_LAYERED != 0
    }

    /// The raw `CUDA_ARRAY3D_*` flags of the array.
    pub fn raw_flags(&self) -> u32 {
        self.flags
    }

    /// The stream of the map, on which its copies are queued.
    pub fn raw_stream(&self) -> sys::CUstream {
        self.origin.stream
    }

    /// The channel format.
    pub fn format(&self) -> ArrayFormat {
        self.format
    }

    /// Channels per element (1, 2 or 4).
    pub fn channels(&self) -> u32 {
        self.channels
    }
}

/// The mipmapped array of a mapped image, valid while the mapping lives.
#[derive(Debug, Clone, Copy)]
pub struct MappedMipmappedArray<'m> {
    raw: sys::CUmipmappedArray,
    origin: Origin<'m>,
}

impl<'m> MappedMipmappedArray<'m> {
    /// The array of mip `level`. For a `GL_TEXTURE_2D_ARRAY` it is one layered array over all
    /// layers (see [`MappedArray::is_layered`]).
    ///
    /// # Errors
    /// [`Error::InvalidSubresource`] for a level the image does not have; otherwise the driver's
    /// error from `cuMipmappedArrayGetLevel`.
    #[doc(alias = "cuMipmappedArrayGetLevel")]
    pub fn level(&self, level: u32) -> Result<MappedArray<'m>> {
        // SAFETY: the mipmapped array is live while mapped.
        let raw = unsafe { result::array::mipmap_level(self.raw, level) }.map_err(|e| match e {
            result::DriverError::Cuda(c) if c.code == sys::CUresult::CUDA_ERROR_INVALID_VALUE => {
                Error::InvalidSubresource {
                    index: 0,
                    level,
                    source: c,
                }
            }
            other => other.into(),
        })?;
        // SAFETY: the array is live while mapped.
        let d = unsafe { result::array::descriptor(raw) }?;
        let layered = d.Flags & (sys::CUDA_ARRAY3D_LAYERED | sys::CUDA_ARRAY3D_CUBEMAP) != 0;
        let layers = if layered && d.Depth > 0 {
            (0, u32::try_from(d.Depth).unwrap_or(u32::MAX))
        } else {
            (0, 1)
        };
        MappedArray::describe(raw, self.origin, Storage { level, layers })
    }

    /// The raw `CUmipmappedArray`, valid only while the mapping lives.
    pub fn raw(&self) -> sys::CUmipmappedArray {
        self.raw
    }
}
