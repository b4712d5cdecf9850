//! Surface objects over a mapped image, for `surf2Dwrite`/`surf2Dread` in kernels: the handle a
//! kernel gets, the uncached object a caller owns, and the cache that keeps one object per
//! sub-resource across mappings.

use super::array::{MappedArray, mapped_array};
use super::retire::Retired;
use super::surface_cache::SubResource;
use super::{RegisterFlags, Registration};
use crate::error::{Error, Result, UsageError};
use crate::module::KernelParam;
use crate::result;
use cuda_gl_sys as sys;
use std::marker::PhantomData;

/// A refused `cuSurfObjectCreate` on an image registered for surfaces means its format cannot be
/// a surface: say so, and what to do.
pub(super) fn surface_error(reg: &Registration, e: result::DriverError) -> Error {
    match e {
        result::DriverError::Cuda(source)
            if matches!(
                source.code,
                sys::CUresult::CUDA_ERROR_INVALID_VALUE | sys::CUresult::CUDA_ERROR_NOT_SUPPORTED
            ) && reg.flags.contains(RegisterFlags::SURFACE_LOAD_STORE) =>
        {
            Error::UnsupportedImage {
                name: reg.name,
                kind: reg.kind.describe().to_string(),
                flags: reg.flags,
                flags_only: true,
                source,
            }
        }
        other => other.into(),
    }
}

/// The cached surface object over sub-resource (`index`, `level`) of `reg`, mapped on `stream`
/// (see `MappedImage::surface_at`, whose body this is).
pub(super) fn cached_surface(
    reg: &Registration,
    stream: sys::CUstream,
    index: u32,
    level: u32,
) -> Result<Surface<'_>> {
    if !reg.flags.contains(RegisterFlags::SURFACE_LOAD_STORE) {
        return Err(UsageError::NotSurfaceRegistered { name: reg.name }.into());
    }
    let array = mapped_array(reg, stream, index, level)?;
    let raw = reg.surfaces.get_or_create(
        sub_resource(index, level, &array),
        |a| {
            // SAFETY: the array is mapped and registered for surface load/store. The object is
            // handed out only through guards (as `Surface<'_>` borrowing one), and it is
            // destroyed only after an unmap, once the work queued before it is done.
            unsafe { result::array::surface_create(a) }.map_err(|e| surface_error(reg, e))
        },
        // A stale object was last handed out in an earlier mapping, whose kernels may still
        // run: it waits for them.
        |stale| reg.retired.retire(Retired::Surface(stale)),
    )?;
    Ok(Surface::new(raw))
}

/// The cached surfaces of layers `first..first + N` at `level`, for a kernel that takes `N`
/// layers at once.
pub(super) fn layer_surfaces<const N: usize>(
    reg: &Registration,
    stream: sys::CUstream,
    first: u32,
    level: u32,
) -> Result<[Surface<'_>; N]> {
    let mut out = [Surface::new(0); N];
    for (i, slot) in out.iter_mut().enumerate() {
        let layer = u32::try_from(i)
            .ok()
            .and_then(|i| first.checked_add(i))
            .ok_or(UsageError::TooLarge {
                what: "the last array layer",
                value: first as u128 + N as u128 - 1,
                max: u32::MAX as u128,
            })?;
        *slot = cached_surface(reg, stream, layer, level)?;
    }
    Ok(out)
}

/// A surface object over `array`, owned by the caller and retired on `reg` when dropped.
pub(super) fn create_surface<'m>(
    reg: &'m Registration,
    array: &MappedArray<'m>,
) -> Result<SurfaceObject<'m>> {
    array.origin.check_owner(reg, "surface object")?;
    reg.ctx.bind()?;
    // SAFETY: the array is mapped for the borrow `'m`, which the surface object cannot outlive;
    // its drop retires it until the work queued before the unmap is done.
    let raw =
        unsafe { result::array::surface_create(array.raw) }.map_err(|e| surface_error(reg, e))?;
    Ok(SurfaceObject { reg, raw })
}

/// The cache key of the surface object over `array`, sub-resource (`index`, `level`).
pub(super) fn sub_resource(index: u32, level: u32, array: &MappedArray<'_>) -> SubResource {
    SubResource {
        index,
        level,
        array: array.raw,
        shape: (
            array.width,
            array.height,
            array.depth,
            array.format.0,
            array.channels,
        ),
    }
}

/// A surface object handle borrowed from a mapping
/// ([`MappedImage::surface`](super::image::MappedImage::surface)) or a display frame
/// ([`Frame::surface`](crate::display::Frame::surface)): pass it to a kernel taking
/// `cudaSurfaceObject_t`. It cannot outlive the mapping or the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Surface<'m> {
    raw: sys::CUsurfObject,
    _mapping: PhantomData<&'m ()>,
}

impl Surface<'_> {
    pub(crate) fn new(raw: sys::CUsurfObject) -> Self {
        Self {
            raw,
            _mapping: PhantomData,
        }
    }

    /// The raw `CUsurfObject`.
    pub fn raw(&self) -> sys::CUsurfObject {
        self.raw
    }
}

// SAFETY: `cudaSurfaceObject_t` is a 64-bit handle passed by value.
unsafe impl KernelParam for Surface<'_> {}

/// A surface object owned by the caller. The borrow of the mapping forces its drop before the
/// unmap; it is then destroyed once the work queued before the unmap is done.
#[derive(Debug)]
#[must_use = "a surface object does nothing unless its handle is passed to a kernel"]
pub struct SurfaceObject<'m> {
    pub(super) reg: &'m Registration,
    pub(crate) raw: sys::CUsurfObject,
}

impl SurfaceObject<'_> {
    /// The handle to pass to a kernel.
    pub fn handle(&self) -> Surface<'_> {
        Surface::new(self.raw)
    }
}

impl Drop for SurfaceObject<'_> {
    fn drop(&mut self) {
        // Kernels queued with its handle may still run: destroyed after the unmap's work.
        self.reg.retired.retire(Retired::Surface(self.raw));
    }
}
