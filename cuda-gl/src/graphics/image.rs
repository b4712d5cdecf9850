//! GL textures and renderbuffers registered with CUDA: mapped as CUDA arrays, surfaces and
//! textures.

use super::retire::Retired;
use super::{ImageTarget, Kind, MapFlags, RegisterFlags, Registration};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::module::KernelParam;
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A GL texture or renderbuffer registered with CUDA. Unregistered on drop.
///
/// Mapped, it gives CUDA arrays (one per array index and mip level), never a linear pointer:
/// asking an image for a device pointer does not compile.
///
/// `Send` and `Sync`, with the same thread rules as
/// [`RegisteredBuffer`](crate::RegisteredBuffer).
#[derive(Debug)]
pub struct RegisteredImage {
    reg: Registration,
}

impl RegisteredImage {
    /// Registers the GL image `image`, created with `target`, in `ctx`. The GL context that owns
    /// it must be current on this thread, and the image must have storage.
    ///
    /// # Errors
    /// As [`RegisteredBuffer::register`](crate::RegisteredBuffer::register); in addition,
    /// [`Error::WrongImageTarget`] when `target` is not the one the texture was created with
    /// (asked of GL when the context is OpenGL 4.5 or newer), and [`Error::UnsupportedImage`]
    /// for a format CUDA cannot register, or cannot use with `SURFACE_LOAD_STORE` (e.g. a depth
    /// or compressed format).
    #[doc(alias = "cuGraphicsGLRegisterImage")]
    pub fn register(
        ctx: &Arc<Context>,
        image: u32,
        target: ImageTarget,
        flags: RegisterFlags,
    ) -> Result<Self> {
        Ok(Self {
            reg: Registration::register(ctx, image, Kind::Image(target), flags)?,
        })
    }

    /// Maps the image on `stream`. The returned guard unmaps on the same stream when dropped.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a stream of another context; the driver's error from
    /// `cuGraphicsMapResources`.
    #[doc(alias = "cuGraphicsMapResources")]
    pub fn map<'a, S: AsStream>(&'a mut self, stream: &'a S) -> Result<MappedImage<'a>> {
        let s = self.reg.map_on(stream)?;
        Ok(MappedImage {
            reg: &mut self.reg,
            stream: s,
            _stream: PhantomData,
        })
    }

    /// Sets how CUDA will use the image in later mappings.
    ///
    /// # Errors
    /// The driver's error from `cuGraphicsResourceSetMapFlags`.
    #[doc(alias = "cuGraphicsResourceSetMapFlags")]
    pub fn set_map_flags(&mut self, flags: MapFlags) -> Result<()> {
        self.reg.set_map_flags(flags)
    }

    /// Unregisters now and returns the driver's error, which `Drop` can only log.
    ///
    /// The resource is consumed even when this fails. With [`Error::NoGlContext`] (the GL
    /// context that owns the object is not current on this thread) the driver still holds the
    /// registration, and dropping it here can only log the same error: use
    /// [`try_unregister`](Self::try_unregister) to get the resource back and retry with the
    /// context current.
    ///
    /// # Errors
    /// The driver's error from `cuGraphicsUnregisterResource`.
    #[doc(alias = "cuGraphicsUnregisterResource")]
    pub fn unregister(mut self) -> Result<()> {
        self.reg.unregister()
    }

    /// [`unregister`](Self::unregister), handing the resource back with the error.
    ///
    /// After [`Error::NoGlContext`] the registration is intact: make the GL context current and
    /// call this again. After other errors the driver has released or refused the registration
    /// for good, and dropping the returned resource does nothing more.
    ///
    /// # Errors
    /// As [`unregister`](Self::unregister), paired with the resource.
    #[doc(alias = "cuGraphicsUnregisterResource")]
    // A rare, cold path; handing the resource back unboxed keeps the retry simple.
    #[allow(clippy::result_large_err)]
    pub fn try_unregister(mut self) -> std::result::Result<(), (Self, Error)> {
        match self.reg.unregister() {
            Ok(()) => Ok(()),
            Err(e) => Err((self, e)),
        }
    }

    /// The GL name.
    pub fn gl_name(&self) -> u32 {
        self.reg.name
    }

    /// The GL target it was registered with.
    pub fn target(&self) -> ImageTarget {
        match self.reg.kind {
            Kind::Image(t) => t,
            // Only `register` builds this type, always with an image kind.
            Kind::Buffer => ImageTarget::Texture2D,
        }
    }

    /// The flags it was registered with.
    pub fn flags(&self) -> RegisterFlags {
        self.reg.flags
    }

    /// The flags set by [`RegisteredImage::set_map_flags`].
    pub fn map_flags(&self) -> MapFlags {
        self.reg.map_flags
    }

    /// How many surface objects [`MappedImage::surface_at`] keeps cached for this image (one
    /// per array index and mip level used); they are destroyed when it is unregistered, after
    /// the work queued before its last unmap.
    pub fn cached_surfaces(&self) -> usize {
        self.reg.surfaces.len()
    }

    /// How many dropped surface and texture objects wait to be destroyed until the GPU work
    /// queued before the last unmap is done (checked, without waiting, at the next map; waited
    /// for when the image is unregistered).
    pub fn retired_objects(&self) -> usize {
        self.reg.retired.len()
    }

    /// Whether a mapping is outstanding (only after a guard was leaked with `mem::forget`).
    pub fn is_mapped(&self) -> bool {
        self.reg.mapped
    }

    /// The context it is registered in.
    pub fn context(&self) -> &Arc<Context> {
        &self.reg.ctx
    }

    /// The raw `CUgraphicsResource`.
    pub fn raw(&self) -> sys::CUgraphicsResource {
        self.reg.raw
    }

    pub(crate) fn registration(&mut self) -> &mut Registration {
        &mut self.reg
    }
}

/// A mapped GL image. Arrays, surfaces and textures obtained from it borrow it, so none of them
/// can outlive the mapping. Dropping it unmaps on the stream it was mapped on.
#[derive(Debug)]
#[must_use = "dropping the guard unmaps the image at once"]
pub struct MappedImage<'a> {
    reg: &'a mut Registration,
    stream: sys::CUstream,
    _stream: PhantomData<&'a ()>,
}

impl MappedImage<'_> {
    /// The CUDA array of layer (or cube face) `index` at mip `level`.
    ///
    /// # Errors
    /// [`Error::InvalidSubresource`] when the image has no such index or level; otherwise the
    /// driver's error from `cuGraphicsSubResourceGetMappedArray`.
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn array(&self, index: u32, level: u32) -> Result<MappedArray<'_>> {
        mapped_array(self.reg, index, level)
    }

    /// The whole mipmapped array.
    ///
    /// # Errors
    /// The driver's error from `cuGraphicsResourceGetMappedMipmappedArray` (renderbuffers have
    /// none).
    #[doc(alias = "cuGraphicsResourceGetMappedMipmappedArray")]
    pub fn mipmapped_array(&self) -> Result<MappedMipmappedArray<'_>> {
        mapped_mipmapped_array(self.reg)
    }

    /// The surface object over array index 0, mip level 0, for `surf2Dwrite`/`surf2Dread` in a
    /// kernel: the fast path for a kernel to write a GL texture in place (see the crate docs,
    /// "The fast path"). The same as [`MappedImage::surface_at`]`(0, 0)`.
    ///
    /// # Errors
    /// As [`MappedImage::surface_at`].
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn surface(&self) -> Result<Surface<'_>> {
        self.surface_at(0, 0)
    }

    /// The surface object over array index (layer or cube face) `index` at mip `level`, for
    /// `surf2Dwrite`/`surf2Dread` in a kernel.
    ///
    /// The object is cached on the registration, one per (index, level), and reused by later
    /// mappings while the driver returns the same array for that sub-resource (it does, frame
    /// after frame, for an unchanged texture). When the array changes (another handle, size or
    /// format), the old object is destroyed and a new one created. All of them are destroyed
    /// when the image is unregistered or dropped. A [`Surface`] borrows this guard, so it is
    /// only usable while the image is mapped: keeping one past the unmap does not compile.
    ///
    /// Several surfaces of one mapping may be alive at once (e.g. one per layer of a 2D array
    /// texture, to render K frames under one map).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless the image was registered with `SURFACE_LOAD_STORE`;
    /// [`Error::InvalidSubresource`] for an index or level the image lacks; the driver's error
    /// from `cuGraphicsSubResourceGetMappedArray` or `cuSurfObjectCreate`.
    #[doc(alias = "cuSurfObjectCreate")]
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn surface_at(&self, index: u32, level: u32) -> Result<Surface<'_>> {
        if !self.reg.flags.contains(RegisterFlags::SURFACE_LOAD_STORE) {
            return Err(Error::InvalidArgument(format!(
                "GL image {} was not registered with SURFACE_LOAD_STORE, so CUDA cannot write it \
                 through a surface; register it with RegisterFlags::SURFACE_LOAD_STORE",
                self.reg.name
            )));
        }
        let array = mapped_array(self.reg, index, level)?;
        let raw = self.reg.surfaces.get_or_create(
            SubResource::of(index, level, &array),
            |a| {
                // SAFETY: the array is mapped and registered for surface load/store. The object
                // is handed out only through guards (as `Surface<'_>` borrowing one), and it is
                // destroyed only after an unmap, once the work queued before it is done.
                unsafe { result::array::surface_create(a) }.map_err(|e| surface_error(self.reg, e))
            },
            // A stale object was last handed out in an earlier mapping, whose kernels may still
            // run: it waits for them.
            |stale| self.reg.retired.retire(Retired::Surface(stale)),
        )?;
        Ok(Surface::new(raw))
    }

    /// Creates a surface object over `array`. It cannot outlive the mapping; when it drops, it
    /// is destroyed as soon as the work queued before the unmap is done.
    ///
    /// # Errors
    /// The driver's error from `cuSurfObjectCreate`.
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn create_surface<'m>(&'m self, array: &MappedArray<'m>) -> Result<SurfaceObject<'m>> {
        self.reg.ctx.bind()?;
        // SAFETY: the array is mapped for the borrow `'m`, which the surface object cannot
        // outlive.
        let raw = unsafe { result::array::surface_create(array.raw) }
            .map_err(|e| surface_error(self.reg, e))?;
        Ok(SurfaceObject { reg: self.reg, raw })
    }

    /// Creates a texture object over `array` (sampled reads, filtering). It cannot outlive the
    /// mapping; when it drops, it is destroyed as soon as the work queued before the unmap is
    /// done.
    ///
    /// # Errors
    /// The driver's error from `cuTexObjectCreate`.
    #[doc(alias = "cuTexObjectCreate")]
    pub fn create_texture<'m>(
        &'m self,
        array: &MappedArray<'m>,
        desc: &TextureDesc,
    ) -> Result<TextureObject<'m>> {
        self.reg.ctx.bind()?;
        let raw_desc = desc.raw();
        // SAFETY: the array is mapped for the borrow `'m`, which the texture cannot outlive.
        let raw = unsafe { result::array::texture_create(array.raw, &raw_desc) }?;
        Ok(TextureObject { reg: self.reg, raw })
    }

    /// The stream it was mapped on.
    pub fn raw_stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Unmaps now, on the stream it was mapped on, and returns the driver's error.
    ///
    /// # Errors
    /// The driver's error from `cuGraphicsUnmapResources`.
    #[doc(alias = "cuGraphicsUnmapResources")]
    pub fn unmap(mut self) -> Result<()> {
        let result = self.finish();
        // As for buffers: on failure the registration stays marked mapped and recovers later.
        std::mem::forget(self);
        result
    }

    fn finish(&mut self) -> Result<()> {
        // SAFETY: mapped on `self.stream`, borrowed for the guard's lifetime; every view borrows
        // this guard, so none is used after.
        unsafe { self.reg.finish_mapping(self.stream) }
    }
}

impl Drop for MappedImage<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            self.reg.ctx.record_drop_error("unmapping a GL image", e);
        }
    }
}

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

/// A refused `cuSurfObjectCreate` on an image registered for surfaces means its format cannot be
/// a surface: say so, and what to do.
fn surface_error(reg: &Registration, e: Error) -> Error {
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

pub(super) fn mapped_mipmapped_array(reg: &Registration) -> Result<MappedMipmappedArray<'_>> {
    reg.ctx.bind()?;
    // SAFETY: the registration is mapped for as long as the caller's borrow.
    let raw = unsafe { result::graphics::mapped_mipmapped_array(reg.raw) }?;
    Ok(MappedMipmappedArray {
        raw,
        _mapping: PhantomData,
    })
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
    fn of(index: u32, level: u32, array: &MappedArray<'_>) -> SubResource {
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
    fn get_or_create(
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
    fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no surface object is cached.
    pub(super) fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }
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
    raw: sys::CUarray,
    width: usize,
    height: usize,
    depth: usize,
    format: ArrayFormat,
    channels: u32,
    _mapping: PhantomData<&'m ()>,
}

impl MappedArray<'_> {
    fn describe<'m>(raw: sys::CUarray) -> Result<MappedArray<'m>> {
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

/// A surface object handle borrowed from a mapping ([`MappedImage::surface`]): pass it to a
/// kernel taking `cudaSurfaceObject_t`. It cannot outlive the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Surface<'m> {
    raw: sys::CUsurfObject,
    _mapping: PhantomData<&'m ()>,
}

impl Surface<'_> {
    fn new(raw: sys::CUsurfObject) -> Self {
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
    reg: &'m Registration,
    raw: sys::CUsurfObject,
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
    fn raw(&self) -> sys::CUDA_TEXTURE_DESC {
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
    reg: &'m Registration,
    raw: sys::CUtexObject,
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
