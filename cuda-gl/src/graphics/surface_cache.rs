//! The surface objects a registration keeps across mappings, one per sub-resource: plain data
//! with no dependency on the registration or its arrays, so that the registration can hold it
//! and the surface code fill it without the two depending on each other.

use crate::error::Result;
use cuda_gl_sys as sys;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// What a cached surface object was created over: the sub-resource, and the array the driver
/// returned for it with that array's shape (a new array at a reused handle is noticed too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SubResource {
    pub(super) index: u32,
    pub(super) level: u32,
    pub(super) array: sys::CUarray,
    /// Width, height, depth, channel format and channel count.
    pub(super) shape: (usize, usize, usize, sys::CUarray_format, u32),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::cell::RefCell;

    fn key(index: u32, level: u32, array: usize, width: usize) -> SubResource {
        SubResource {
            index,
            level,
            array: std::ptr::without_provenance_mut(array),
            shape: (
                width,
                16,
                0,
                sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
                4,
            ),
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
                |_| Err(Error::Internal { what: "no".into() }),
                |_| unreachable!("nothing to destroy"),
            )
            .unwrap_err();
        assert!(matches!(err, Error::Internal { .. }));
        assert_eq!(cache.len(), 0);
    }
}
