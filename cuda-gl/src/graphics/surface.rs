//! Surface objects over a mapped image, for `surf2Dwrite`/`surf2Dread` in kernels: the handle a
//! kernel gets, the uncached object a caller owns, and the cache that keeps one object per
//! sub-resource across mappings.

use super::array::{ArrayFormat, MappedArray, mapped_array};
use super::retire::Retired;
use super::{RegisterFlags, Registration};
use crate::error::{Error, Result};
use crate::module::KernelParam;
use crate::result;
use cuda_gl_sys as sys;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A refused `cuSurfObjectCreate` on an image registered for surfaces means its format cannot be
/// a surface: say so, and what to do.
pub(super) fn surface_error(reg: &Registration, e: Error) -> Error {
    match e {
        Error::Cuda(source)
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
        other => other,
    }
}

/// The cached surface object over sub-resource (`index`, `level`) of `reg`, mapped on `stream`
/// (see `MappedImage::surface_at`, whose body this is, shared with `MappedBatch`).
pub(super) fn cached_surface(
    reg: &Registration,
    stream: sys::CUstream,
    index: u32,
    level: u32,
) -> Result<Surface<'_>> {
    if !reg.flags.contains(RegisterFlags::SURFACE_LOAD_STORE) {
        return Err(Error::InvalidArgument(format!(
            "GL image {} was not registered with SURFACE_LOAD_STORE, so CUDA cannot write it \
             through a surface; register it with RegisterFlags::SURFACE_LOAD_STORE",
            reg.name
        )));
    }
    let array = mapped_array(reg, stream, index, level)?;
    let raw = reg.surfaces.get_or_create(
        SubResource::of(index, level, &array),
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
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "layers {first}..{first}+{N} run past the largest array index (u32::MAX)"
                ))
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

/// What a cached surface object was created over: the sub-resource, and the array the driver
/// returned for it with that array's shape (a new array at a reused handle is noticed too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SubResource {
    index: u32,
    level: u32,
    array: sys::CUarray,
    shape: (usize, usize, usize, ArrayFormat, u32),
}

impl SubResource {
    pub(super) fn of(index: u32, level: u32, array: &MappedArray<'_>) -> SubResource {
        SubResource {
            index,
            level,
            array: array.raw,
            shape: (
                array.width,
                array.height,
                array.depth,
                array.format,
                array.channels,
            ),
        }
    }
}

/// The surface objects of one registration, one per (index, level), kept across mappings.
///
/// Behind a mutex so that `&MappedImage` can fill it while earlier handles of the same mapping
/// are alive; the lock is never contended (guards are neither `Send` nor `Sync`).
#[derive(Debug, Default)]
pub(super) struct SurfaceCache(Mutex<Vec<(SubResource, sys::CUsurfObject)>>);

impl SurfaceCache {
    fn entries(&self) -> MutexGuard<'_, Vec<(SubResource, sys::CUsurfObject)>> {
        // A panic while holding the lock cannot leave the Vec half-updated (each change is one
        // push or one assignment), so a poisoned lock is still consistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached object of `key`'s (index, level) when it was created over the same array;
    /// otherwise hands the stale one to `retire`, creates one (with `create`) and caches it.
    pub(super) fn get_or_create(
        &self,
        key: SubResource,
        create: impl FnOnce(sys::CUarray) -> Result<sys::CUsurfObject>,
        retire: impl FnOnce(sys::CUsurfObject),
    ) -> Result<sys::CUsurfObject> {
        let mut entries = self.entries();
        let slot = entries
            .iter()
            .position(|(k, _)| (k.index, k.level) == (key.index, key.level));
        match slot {
            Some(i) if entries[i].0 == key => Ok(entries[i].1),
            Some(i) => {
                let (_, stale) = entries.swap_remove(i);
                retire(stale);
                let raw = create(key.array)?;
                entries.push((key, raw));
                Ok(raw)
            }
            None => {
                let raw = create(key.array)?;
                entries.push((key, raw));
                Ok(raw)
            }
        }
    }

    /// Empties the cache and returns its objects, for the caller to destroy.
    pub(super) fn drain(&self) -> Vec<sys::CUsurfObject> {
        self.entries().drain(..).map(|(_, raw)| raw).collect()
    }

    /// How many surface objects are cached.
    pub(super) fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no surface object is cached.
    pub(super) fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }
}

/// A surface object handle borrowed from a mapping
/// ([`MappedImage::surface`](super::image::MappedImage::surface)): pass it to a kernel taking
/// `cudaSurfaceObject_t`. It cannot outlive the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Surface<'m> {
    raw: sys::CUsurfObject,
    _mapping: PhantomData<&'m ()>,
}

impl Surface<'_> {
    pub(super) fn new(raw: sys::CUsurfObject) -> Self {
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
    pub(super) raw: sys::CUsurfObject,
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn key(index: u32, level: u32, array: usize, width: usize) -> SubResource {
        SubResource {
            index,
            level,
            array: std::ptr::without_provenance_mut(array),
            shape: (width, 16, 0, ArrayFormat::UNSIGNED_INT8, 4),
        }
    }

    /// Drives the cache with fake handles: creation hands out 100, 101, ...; destroyed handles
    /// are collected.
    struct Fake {
        cache: SurfaceCache,
        next: RefCell<u64>,
        destroyed: RefCell<Vec<u64>>,
    }

    impl Fake {
        fn new() -> Fake {
            Fake {
                cache: SurfaceCache::default(),
                next: RefCell::new(100),
                destroyed: RefCell::new(Vec::new()),
            }
        }

        fn get(&self, k: SubResource) -> u64 {
            self.cache
                .get_or_create(
                    k,
                    |_| {
                        let mut n = self.next.borrow_mut();
                        *n += 1;
                        Ok(*n - 1)
                    },
                    |s| self.destroyed.borrow_mut().push(s),
                )
                .unwrap()
        }
    }

    #[test]
    fn reuses_the_object_while_the_array_is_the_same() {
        let f = Fake::new();
        let first = f.get(key(0, 0, 0x1000, 64));
        for _ in 0..5 {
            assert_eq!(f.get(key(0, 0, 0x1000, 64)), first);
        }
        assert_eq!(f.cache.len(), 1);
        assert!(f.destroyed.borrow().is_empty());
    }

    #[test]
    fn recreates_when_the_array_or_its_shape_changes() {
        let f = Fake::new();
        let a = f.get(key(0, 0, 0x1000, 64));
        let b = f.get(key(0, 0, 0x2000, 64));
        assert_ne!(a, b);
        assert_eq!(*f.destroyed.borrow(), vec![a]);
        // Same handle, other size: a new array at a reused address.
        let c = f.get(key(0, 0, 0x2000, 128));
        assert_ne!(b, c);
        assert_eq!(*f.destroyed.borrow(), vec![a, b]);
        assert_eq!(f.cache.len(), 1);
    }

    #[test]
    fn one_object_per_index_and_level_and_release_destroys_all() {
        let f = Fake::new();
        let layers: Vec<u64> = (0..4)
            .map(|i| f.get(key(i, 0, 0x1000 + i as usize, 64)))
            .collect();
        let level1 = f.get(key(0, 1, 0x5000, 32));
        assert_eq!(f.cache.len(), 5);
        for (i, &s) in layers.iter().enumerate() {
            assert_eq!(f.get(key(i as u32, 0, 0x1000 + i, 64)), s);
        }
        assert!(!layers.contains(&level1));
        f.destroyed.borrow_mut().extend(f.cache.drain());
        assert_eq!(f.cache.len(), 0);
        let mut destroyed = f.destroyed.borrow().clone();
        destroyed.sort_unstable();
        let mut all = layers.clone();
        all.push(level1);
        all.sort_unstable();
        assert_eq!(destroyed, all);
    }

    #[test]
    fn a_failed_creation_caches_nothing() {
        let cache = SurfaceCache::default();
        let err = cache
            .get_or_create(
                key(0, 0, 0x1000, 64),
                |_| Err(Error::InvalidArgument("no".into())),
                |_| unreachable!("nothing to destroy"),
            )
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)));
        assert_eq!(cache.len(), 0);
    }
}
