//! What every registered GL object and every mapping guard share, written once as generic code:
//! [`Registered<K>`] (unregistering, map flags, the accessors) and [`Mapped<'a, K>`] (the unmap,
//! on the stream of the map, and its `Drop`). The kind `K`, [`GlBuffer`] or [`GlImage`], adds
//! what only that kind has: a buffer's map gives an address, an image's gives arrays and
//! surfaces (in `buffer.rs` and `image.rs`).

use super::{MapFlags, RegisterFlags, Registration};
use crate::context::Context;
use crate::error::{Error, Result};
use cuda_gl_sys as sys;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::Arc;

pub(super) mod sealed {
    use super::{BufferMapping, ResourceKind};

    /// Seals [`ResourceKind`], and holds what only the crate calls.
    pub trait Sealed {
        /// The mapping of a resource of this kind in a batch, from what
        /// [`map_all`](crate::map_all) asked the driver for every buffer of the batch (`None`
        /// for an image); `None` when `pre` does not fit this kind.
        fn prefetched(pre: Option<BufferMapping>) -> Option<<Self as ResourceKind>::Mapping>
        where
            Self: ResourceKind;
    }
}

/// The kind of GL object a registration holds: [`GlBuffer`] or [`GlImage`] (sealed).
pub trait ResourceKind: sealed::Sealed + Debug + 'static {
    /// What a mapping of this kind holds besides the registration and the stream (for a
    /// buffer: its address and size). Plain data, so that the guard stays covariant in its
    /// lifetime.
    type Mapping: Debug + Copy;
    /// What the kind is called in errors: "buffer" or "image".
    const WHAT: &'static str;
}

/// A GL buffer object, as the kind of a [`Registered`] and a [`Mapped`].
#[derive(Debug)]
pub enum GlBuffer {}

/// A GL texture or renderbuffer, as the kind of a [`Registered`] and a [`Mapped`].
#[derive(Debug)]
pub enum GlImage {}

impl sealed::Sealed for GlBuffer {
    fn prefetched(pre: Option<BufferMapping>) -> Option<BufferMapping> {
        pre
    }
}

impl sealed::Sealed for GlImage {
    fn prefetched(pre: Option<BufferMapping>) -> Option<()> {
        pre.is_none().then_some(())
    }
}

/// What a mapped buffer holds: its address and size.
#[derive(Debug, Clone, Copy)]
pub struct BufferMapping {
    pub(super) ptr: sys::CUdeviceptr,
    pub(super) size: usize,
}

impl ResourceKind for GlBuffer {
    type Mapping = BufferMapping;
    const WHAT: &'static str = "buffer";
}

impl ResourceKind for GlImage {
    type Mapping = ();
    const WHAT: &'static str = "image";
}

/// A GL object registered with CUDA: [`RegisteredBuffer`](crate::RegisteredBuffer) or
/// [`RegisteredImage`](crate::RegisteredImage). Unregistered on drop.
///
/// `Send` and `Sync`: it may move to another thread together with its GL context. Registering,
/// mapping, unmapping, unregistering and dropping need the GL context that registered it
/// current on the calling thread; each checks that through EGL/GLX and refuses with
/// [`Error::NoGlContext`] or [`Error::WrongGlContext`] otherwise (a `Drop` then logs and leaves
/// the registration to the driver). The CUDA context is bound by the crate itself.
#[derive(Debug)]
pub struct Registered<K: ResourceKind> {
    pub(super) reg: Registration,
    _kind: PhantomData<fn() -> K>,
}

impl<K: ResourceKind> Registered<K> {
    pub(super) fn from_registration(reg: Registration) -> Self {
        Registered {
            reg,
            _kind: PhantomData,
        }
    }

    /// Sets how CUDA will use the object in later mappings.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] or [`Error::WrongGlContext`] when a leaked mapping must be
    /// recovered first without its GL context; the driver's error from
    /// `cuGraphicsResourceSetMapFlags`.
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
    /// [`Error::NoGlContext`] or [`Error::WrongGlContext`] when the GL context that registered
    /// it is not current (nothing is released then); [`Error::Timeout`] when kernels that may
    /// use its surface or texture objects did not finish in time (the objects are leaked); the
    /// driver's error from `cuGraphicsUnregisterResource` (or from unmapping a leaked mapping
    /// first).
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

    /// The flags it was registered with.
    pub fn flags(&self) -> RegisterFlags {
        self.reg.flags
    }

    /// The flags set by [`set_map_flags`](Self::set_map_flags).
    pub fn map_flags(&self) -> MapFlags {
        self.reg.map_flags
    }

    /// Whether a mapping is outstanding (only after a guard was leaked with `mem::forget`).
    pub fn is_mapped(&self) -> bool {
        self.reg.mapped
    }

    /// [`unregister`](Self::unregister) in place, for an owner that cannot give the resource
    /// up by value (a display target, in its drop); called again, it does nothing more.
    ///
    /// # Errors
    /// As [`unregister`](Self::unregister).
    pub(crate) fn unregister_in_place(&mut self) -> Result<()> {
        self.reg.unregister()
    }

    /// Unmaps a mapping whose guard was leaked (synchronizing the context first); nothing when
    /// none is outstanding. For cuda-gl's own objects that GL uses without mapping them again.
    ///
    /// # Errors
    /// The owner check's errors; the driver's errors of the synchronize and the unmap.
    pub(crate) fn recover_leaked_mapping(&mut self) -> Result<()> {
        self.reg.recover_leaked_mapping()
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

/// A mapped GL object: [`MappedBuffer`](crate::MappedBuffer) (a device pointer and a size) or
/// [`MappedImage`](crate::MappedImage) (arrays, surfaces, textures), valid while this guard
/// lives. What it hands out borrows it, so nothing of the mapping outlives it.
///
/// Dropping it unmaps on the stream it was mapped on; [`Mapped::unmap`] does the same and
/// returns the driver's error. Not `Send`: it borrows the resource and the stream.
///
/// A batch ([`map_all`](crate::map_all)) hands out the same type, by shared reference only
/// (`&MappedBuffer`, `&MappedImage`): the batch owns its views and unmaps them all with one
/// call, so a view of a batch never unmaps on its own and cannot outlive the batch.
#[derive(Debug)]
#[must_use = "dropping the guard unmaps at once"]
pub struct Mapped<'a, K: ResourceKind> {
    pub(super) reg: &'a mut Registration,
    /// The raw stream of the map, whose `AsStream` the guard borrows for `'a`.
    pub(super) stream: sys::CUstream,
    pub(super) mapping: K::Mapping,
    /// The stream object of the map, when it offers itself
    /// ([`AsStream::as_any`](crate::AsStream::as_any)): adapters find their library's stream
    /// there.
    stream_any: Option<&'a dyn std::any::Any>,
    /// Part of a batch: the batch unmaps, with one call for all its resources, and this guard's
    /// drop does nothing (it is only reachable through `&`, so never dropped or unmapped by hand).
    batched: bool,
    pub(super) _stream: PhantomData<&'a ()>,
}

impl<'a, K: ResourceKind> Mapped<'a, K> {
    pub(super) fn new(
        reg: &'a mut Registration,
        stream: &'a impl crate::stream::AsStream,
        mapping: K::Mapping,
    ) -> Self {
        Mapped {
            reg,
            stream: stream.raw_stream(),
            mapping,
            stream_any: stream.as_any(crate::stream::adapter::Token),
            batched: false,
            _stream: PhantomData,
        }
    }

    /// The view of `reg`, mapped on `stream` as part of a batch, which unmaps it.
    pub(super) fn batched(
        reg: &'a mut Registration,
        stream: sys::CUstream,
        stream_any: Option<&'a dyn std::any::Any>,
        mapping: K::Mapping,
    ) -> Self {
        Mapped {
            reg,
            stream,
            mapping,
            stream_any,
            batched: true,
            _stream: PhantomData,
        }
    }

    /// The registration, for the batch's unmap and book-keeping.
    pub(super) fn registration_mut(&mut self) -> &mut Registration {
        self.reg
    }

    /// The raw graphics resource of the mapping.
    #[allow(dead_code, reason = "used by the optional cudarc adapter only")]
    pub(crate) fn resource_raw(&self) -> sys::CUgraphicsResource {
        self.reg.raw
    }

    /// The stream object it was mapped on, when its type offers itself
    /// ([`AsStream::as_any`](crate::AsStream::as_any)): an adapter for another library's
    /// streams finds its stream here.
    #[allow(dead_code, reason = "used by the optional cudarc adapter only")]
    pub(crate) fn stream_any(&self) -> Option<&'a dyn std::any::Any> {
        self.stream_any
    }

    /// Unmaps now, on the stream it was mapped on, and returns the driver's error.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] or [`Error::WrongGlContext`] when the GL context that registered
    /// the object is not current (it stays mapped and is recovered later);
    /// [`Error::Timeout`] when an earlier call of cuda-gl on the stream returned
    /// [`Error::Timeout`] with its copy still queued and your stream not ordered after it (a
    /// capture of the stream began meanwhile), and that copy has not finished within the
    /// [wait limit](crate::wait_limit) (it stays mapped and is recovered later, once the copy is
    /// done); the driver's error from `cuGraphicsUnmapResources`.
    #[doc(alias = "cuGraphicsUnmapResources")]
    pub fn unmap(mut self) -> Result<()> {
        let result = self.finish();
        // The guard holds only borrows; on failure the registration stays marked mapped and its
        // next map or unregister recovers it, so Drop must not retry and log the failure twice.
        std::mem::forget(self);
        result
    }

    /// The stream it was mapped on.
    pub fn raw_stream(&self) -> sys::CUstream {
        self.stream
    }

    /// The context the object is registered (and mapped) in.
    pub fn context(&self) -> &Arc<Context> {
        &self.reg.ctx
    }

    fn finish(&mut self) -> Result<()> {
        if self.batched {
            return Ok(());
        }
        // SAFETY: (1) mapped on `self.stream`, whose stream is borrowed for the guard's
        // lifetime; every view of the mapping (its pointer, arrays, surface and texture objects)
        // borrows this guard, so none is used after.
        unsafe { self.reg.finish_mapping(self.stream) }
    }
}

impl<K: ResourceKind> Drop for Mapped<'_, K> {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            let what = format!("unmapping a GL {}", K::WHAT);
            // A timeout (the wait for cuda-gl's private stream) is recorded too.
            self.reg.ctx.record_drop_wait(&what, "cuStreamQuery", e);
        }
    }
}
