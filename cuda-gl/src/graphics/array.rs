//! The CUDA arrays of a mapped image: one per array index and mip level, and the mipmapped
//! array over all levels. Each borrows the mapping.

use super::Registration;
use crate::error::{Error, Result};
use crate::result;
use cuda_gl_sys as sys;
use std::marker::PhantomData;

pub(super) fn mapped_array(reg: &Registration, index: u32, level: u32) -> Result<MappedArray<'_>> {
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
    MappedArray::describe(raw)
}

pub(super) fn mapped_mipmapped_array(reg: &Registration) -> Result<MappedMipmappedArray<'_>> {
    reg.ctx.bind()?;
    // SAFETY: the registration is mapped for as long as the caller's borrow.
    let raw = unsafe { result::graphics::mapped_mipmapped_array(reg.raw) }?;
    Ok(MappedMipmappedArray {
        raw,
        _mapping: PhantomData,
    })
}

/// The element format of a CUDA array (`CUarray_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayFormat(pub sys::CUarray_format);

impl ArrayFormat {
    /// 8-bit unsigned channels, as GL's `RGBA8`.
    pub const UNSIGNED_INT8: ArrayFormat =
        ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8);
    /// 32-bit float channels, as GL's `RGBA32F`.
    pub const FLOAT: ArrayFormat = ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_FLOAT);
    /// 16-bit float channels.
    pub const HALF: ArrayFormat = ArrayFormat(sys::CUarray_format::CU_AD_FORMAT_HALF);
}

/// A CUDA array of a mapped image, valid while the mapping lives.
#[derive(Debug, Clone, Copy)]
pub struct MappedArray<'m> {
    pub(super) raw: sys::CUarray,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) depth: usize,
    pub(super) format: ArrayFormat,
    pub(super) channels: u32,
    pub(super) _mapping: PhantomData<&'m ()>,
}

impl MappedArray<'_> {
    pub(super) fn describe<'m>(raw: sys::CUarray) -> Result<MappedArray<'m>> {
        // SAFETY: the array is live while mapped.
        let d = unsafe { result::array::descriptor(raw) }?;
        Ok(MappedArray {
            raw,
            width: d.Width,
            height: d.Height,
            depth: d.Depth,
            format: ArrayFormat(d.Format),
            channels: d.NumChannels,
            _mapping: PhantomData,
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

    /// Depth in elements (0 unless 3-D).
    pub fn depth(&self) -> usize {
        self.depth
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
    _mapping: PhantomData<&'m ()>,
}

impl<'m> MappedMipmappedArray<'m> {
    /// The array of mip `level`.
    ///
    /// # Errors
    /// [`Error::InvalidSubresource`] for a level the image does not have; otherwise the driver's
    /// error from `cuMipmappedArrayGetLevel`.
    #[doc(alias = "cuMipmappedArrayGetLevel")]
    pub fn level(&self, level: u32) -> Result<MappedArray<'m>> {
        // SAFETY: the mipmapped array is live while mapped.
        let raw = unsafe { result::array::mipmap_level(self.raw, level) }.map_err(|e| match e {
            Error::Cuda(c) if c.code == sys::CUresult::CUDA_ERROR_INVALID_VALUE => {
                Error::InvalidSubresource {
                    index: 0,
                    level,
                    source: c,
                }
            }
            other => other,
        })?;
        MappedArray::describe(raw)
    }

    /// The raw `CUmipmappedArray`, valid only while the mapping lives.
    pub fn raw(&self) -> sys::CUmipmappedArray {
        self.raw
    }
}
