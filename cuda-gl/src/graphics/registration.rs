//! One registration, the state shared by buffers and images: register, map, unmap, recover a
//! leaked mapping, unregister.

use super::classify::{classify_register_error, explain_refused_image};
use super::{Kind, MapFlags, RegisterFlags, retire, surface_cache};
use crate::context::Context;
use crate::device::{GlDeviceList, gl_devices};
use crate::error::{Error, Result, UsageError};
use crate::glapi::{GlFns, GlOwner, claim, query};
use crate::result;
use crate::result::CudaError;
use crate::stream::{AsStream, wait_limit};
use crate::wait::InDrop;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// What an unmap that waits for cuda-gl's private stream first names in its timeout
/// ([`Context::settle_queued`]).
pub(super) const UNMAPPING: &str = "unmapping (cuGraphicsUnmapResources, not called)";

/// One registration: the state shared by buffers and images.
#[derive(Debug)]
pub(crate) struct Registration {
    pub(super) ctx: Arc<Context>,
    pub(super) raw: sys::CUgraphicsResource,
    pub(super) name: u32,
    pub(super) kind: Kind,
    pub(super) flags: RegisterFlags,
    pub(super) map_flags: MapFlags,
    /// Set while mapped; still set after a guard was leaked with `mem::forget`.
    pub(super) mapped: bool,
    /// Surface objects over the mapped arrays, one per (array index, mip level), kept across maps
    /// while the driver returns the same array (images registered `SURFACE_LOAD_STORE` only).
    pub(super) surfaces: surface_cache::SurfaceCache,
    /// Surface and texture objects waiting until the GPU work that may use them is done.
    pub(super) retired: retire::Retirement,
    /// This process's claim on the GL object, so a second registration is refused.
    pub(super) claim: Option<claim::Claim>,
    /// The GL context current at registration: map, unmap and unregister need it current.
    pub(super) owner: GlOwner,
}

// SAFETY: a CUgraphicsResource may be used and unregistered from any thread once the CUDA
// context is bound, which every method does first; mutation needs `&mut`.
unsafe impl Send for Registration {}
// SAFETY: `&self` methods only read fields.
unsafe impl Sync for Registration {}

/// Who claims the GL object a registration is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claiming {
    /// The registration claims it (an application's object): a second registration is refused.
    Now,
    /// The caller has claimed it (an object of cuda-gl's own, a display target's texture) and
    /// keeps it claimed until the object is deleted, after the registration is gone.
    Held,
}

impl Registration {
    /// Registers GL object `name`, claiming it first unless the caller holds the claim (one
    /// owner lookup).
    pub(crate) fn register(
        ctx: &Arc<Context>,
        name: u32,
        kind: Kind,
        flags: RegisterFlags,
        claiming: Claiming,
    ) -> Result<Self> {
        validate(name, kind, flags)?;
        let (owner, fns) =
            GlOwner::current("cuGraphicsGLRegister* (not called: no GL context is current)")?;
        let claim = if claiming == Claiming::Now {
            let claim =
                claim::claim(kind, name, owner).ok_or_else(|| Error::AlreadyRegistered {
                    name,
                    kind: kind.describe().to_string(),
                })?;
            Some(claim)
        } else {
            None
        };
        // On an error the claim ends here.
        let raw = register_raw(ctx, fns, name, kind, flags)?;
        Ok(Registration {
            ctx: ctx.clone(),
            raw,
            name,
            kind,
            flags,
            map_flags: MapFlags::None,
            mapped: false,
            surfaces: surface_cache::SurfaceCache::default(),
            retired: retire::Retirement::default(),
            claim,
            owner,
        })
    }

    /// Unmaps a mapping whose guard was leaked. The guard's stream may be gone, so this waits for
    /// the whole context first, at most the [wait limit](crate::wait_limit), and then unmaps on the
    /// legacy default stream.
    ///
    /// # Errors
    /// [`Error::Timeout`] when the context's work has not finished within the limit (the leaked
    /// guard's kernels may still use the mapping: it stays mapped, and the next call tries
    /// again); the errors of the owner check, of binding the context and of the unmap.
    pub(super) fn recover_leaked_mapping(&mut self) -> Result<()> {
        if !self.mapped {
            return Ok(());
        }
        self.wait_for_leaked_guard()?;
        self.unmap_after_leaked_guard()
    }

    /// The wait of [`recover_leaked_mapping`](Self::recover_leaked_mapping), mapped: for the
    /// whole context, at most the [wait limit](crate::wait_limit).
    ///
    /// # Errors
    /// [`Error::Timeout`], the driver's error from `cuCtxSynchronize` (which a graph capture in
    /// another thread may forbid), the owner check's and binding's: the leaked guard's kernels
    /// may then still use the mapping and the objects over it.
    fn wait_for_leaked_guard(&mut self) -> Result<()> {
        log::warn!(
            "cuda-gl: GL {} {} is still mapped (its guard was leaked); synchronizing the context \
             and unmapping it",
            self.kind.describe(),
            self.name
        );
        self.owner.check("cuGraphicsUnmapResources (not called)")?;
        self.ctx.bind()?;
        self.ctx.synchronize_within(wait_limit())?;
        self.retired.synchronized();
        Ok(())
    }

    /// The rest of [`recover_leaked_mapping`](Self::recover_leaked_mapping), once the leaked
    /// guard's work is done: destroys the objects over the mapping and unmaps it.
    fn unmap_after_leaked_guard(&mut self) -> Result<()> {
        self.release_objects()?;
        // SAFETY: the resource is mapped (flag) and no view of it is reachable: its guard is gone.
        match unsafe { result::graphics::unmap(&mut [self.raw], std::ptr::null_mut()) } {
            Ok(()) => {}
            // An earlier unmap that reported a failure had unmapped it after all (seen when the
            // GL context was destroyed while mapped): the flag was stale.
            Err(e) if e.code == sys::CUresult::CUDA_ERROR_NOT_MAPPED => {
                log::warn!("cuda-gl: the driver had already unmapped it: {e}");
            }
            Err(e) => return Err(unmap_error(e)),
        }
        self.mapped = false;
        Ok(())
    }

    /// Maps `raws` (this registration's handle, or a batch) on `stream`.
    ///
    /// # Safety
    /// As `result::graphics::map`, and each registration's owning GL context was checked
    /// (`prepare_map`).
    pub(super) unsafe fn map_raw(
        raws: &mut [sys::CUgraphicsResource],
        stream: sys::CUstream,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { result::graphics::map(raws, stream) }.map_err(|e| {
            if e.code == sys::CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT {
                Error::NoGlContext { source: e }
            } else {
                e.into()
            }
        })
    }

    /// Maps this one registration on `stream` and marks it mapped; returns the raw stream, which
    /// the guard keeps for the unmap.
    pub(super) fn map_on(&mut self, stream: &impl AsStream) -> Result<sys::CUstream> {
        self.prepare_map(stream)?;
        let s = stream.raw_stream();
        // SAFETY: registered in the bound context, unmapped (recovered by prepare_map); the
        // stream is live while borrowed and in this context (checked by prepare_map).
        unsafe { Registration::map_raw(&mut [self.raw], s) }
            .map_err(|e| mapping_state_lost(e, self.name, self.kind))?;
        self.mapped = true;
        self.retired.mapped();
        Ok(s)
    }

    /// Refuses a registration that an earlier unregister released (its handle is null): the
    /// driver would be handed a null resource.
    fn check_registered(&self) -> Result<()> {
        if self.raw.is_null() {
            return Err(UsageError::Unregistered {
                name: self.name,
                kind: self.kind.describe().to_string(),
            }
            .into());
        }
        Ok(())
    }

    /// A single-resource guard's unmap: nothing when already unmapped, else unmap on `stream`.
    ///
    /// # Safety
    /// 1. When mapped, it was mapped on `stream`, which is still live, and no view of the
    ///    mapping is used after this call.
    pub(super) unsafe fn finish_mapping(&mut self, stream: sys::CUstream) -> Result<()> {
        if !self.mapped {
            return Ok(());
        }
        // SAFETY: (1).
        unsafe { self.unmap_on(stream) }
    }

    pub(super) fn prepare_map(&mut self, stream: &impl AsStream) -> Result<()> {
        self.check_registered()?;
        if stream.raw_context() != self.context_raw() {
            return Err(UsageError::WrongCudaContext {
                what: "stream",
                owner: format!("GL {} {}", self.kind.describe(), self.name),
            }
            .into());
        }
        self.owner.check("cuGraphicsMapResources (not called)")?;
        self.recover_leaked_mapping()?;
        crate::stream::refuse_capturing(&self.ctx, stream, "cuGraphicsMapResources (not called)")?;
        self.retired.collect(&self.ctx);
        Ok(())
    }

    /// The raw context it is registered in.
    pub(crate) fn context_raw(&self) -> sys::CUcontext {
        self.ctx.raw()
    }

    /// Refuses a CUDA write into this registration's mapping when it was registered or mapped
    /// read-only (CUDA leaves such writes undefined).
    pub(crate) fn check_writable(&self, what: &'static str) -> Result<()> {
        if self.flags.contains(RegisterFlags::READ_ONLY) || self.map_flags == MapFlags::ReadOnly {
            Err(UsageError::ReadOnlyMapping {
                kind: self.kind.describe(),
                name: self.name,
                what,
            }
            .into())
        } else {
            Ok(())
        }
    }

    pub(super) fn set_map_flags(&mut self, flags: MapFlags) -> Result<()> {
        self.check_registered()?;
        self.recover_leaked_mapping()?;
        self.ctx.bind()?;
        // SAFETY: registered and (after recovery) unmapped.
        unsafe { result::graphics::set_map_flags(self.raw, flags.raw()) }?;
        self.map_flags = flags;
        Ok(())
    }

    /// Unmaps on `stream` (the stream of the map). The surface cache survives: it is only
    /// reachable through a guard.
    ///
    /// # Safety
    /// 1. The resource is mapped on `stream`, which is still live, and no view is used after.
    pub(super) unsafe fn unmap_on(&mut self, stream: sys::CUstream) -> Result<()> {
        self.owner.check("cuGraphicsUnmapResources (not called)")?;
        self.ctx.bind()?;
        // SAFETY: (1): the stream is live.
        unsafe {
            crate::queue::check_not_capturing(stream, "cuGraphicsUnmapResources (not called)")
        }?;
        // A copy of cuda-gl's that `stream` may not be ordered after: refused (still mapped, and
        // recovered later) rather than unmapped under it.
        self.ctx.settle_queued(UNMAPPING)?;
        // SAFETY: (1).
        unsafe { result::graphics::unmap(&mut [self.raw], stream) }.map_err(unmap_error)?;
        self.unmapped(stream);
        Ok(())
    }

    /// Book-keeping after a successful unmap on `stream`, the stream of the map: records when
    /// the surface and texture objects of the mapping are free (see [`retire`]).
    pub(super) fn unmapped(&mut self, stream: sys::CUstream) {
        self.mapped = false;
        let cached = !self.surfaces.is_empty();
        // SAFETY: the stream was live for the unmap just made on it, in this bound context.
        unsafe { self.retired.unmapped(&self.ctx, stream, cached) };
    }

    /// Destroys every cached and retired surface and texture object once the GPU work that may
    /// use them is done. `&mut self`: no guard, so no handle, is alive.
    fn release_objects(&mut self) -> Result<()> {
        let cached = self.surfaces.drain();
        let cached = cached.into_iter().map(retire::Retired::Surface).collect();
        self.retired.release_all(&self.ctx, cached)
    }

    /// Ends the claim on the GL object once the driver holds the registration no more: while it
    /// may still hold it mapped, the claim is leaked instead, and the object stays refused to
    /// every later registration in its share group.
    fn end_claim(&mut self) {
        if self.mapped {
            std::mem::forget(self.claim.take());
        } else {
            self.claim = None;
        }
    }

    /// Unmaps if needed, then unregisters. Idempotent.
    pub(super) fn unregister(&mut self) -> Result<()> {
        if self.raw.is_null() {
            return Ok(());
        }
        // Without a GL context the handle is kept, so that a later unregister (with the context
        // current) can still release it. With the owner destroyed there is none to come: the
        // handle is forgotten (the driver's resource leaks), and the claim ends unless the
        // driver still holds the resource mapped.
        match self
            .owner
            .check("cuGraphicsUnregisterResource (not called)")
        {
            Ok(_) => {}
            Err(e @ Error::GlContextGone { .. }) => {
                self.raw = std::ptr::null_mut();
                self.end_claim();
                self.mapped = false;
                return Err(e);
            }
            Err(e) => return Err(e),
        }
        if self.mapped
            && let Err(e) = self.wait_for_leaked_guard()
        {
            // The leaked guard's work may still use the mapping and the objects over it (the
            // wait gave up, or could not wait: a capture forbids cuCtxSynchronize): nothing is
            // unmapped, unregistered or destroyed. The handle is forgotten (the driver's
            // resource leaks, and the surface and texture objects, plain handles, with it), and
            // the object stays claimed: it is still mapped.
            log::error!(
                "cuda-gl: leaking the registration of GL {} {}, still mapped by a leaked guard \
                 whose work is not known to have finished: {e}",
                self.kind.describe(),
                self.name
            );
            self.raw = std::ptr::null_mut();
            self.end_claim();
            return Err(e);
        }
        let recovered = if self.mapped {
            self.unmap_after_leaked_guard()
        } else {
            Ok(())
        };
        self.ctx.bind()?;
        let recovered = recovered.and(self.release_objects());
        // SAFETY: registered, unmapped (or the unmap failed and the driver will report it).
        match unsafe { result::graphics::unregister(self.raw) } {
            Ok(()) => {
                self.raw = std::ptr::null_mut();
                self.claim = None;
                recovered
            }
            Err(e) if e.code == sys::CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT => {
                // The GL context that owns the object is not current here. Keep the handle so
                // that a later `unregister` where it is current can still succeed.
                Err(Error::NoGlContext { source: e })
            }
            Err(e) => {
                // The driver refused for good; never try again. While it may still hold the
                // resource mapped, the object stays claimed.
                self.raw = std::ptr::null_mut();
                self.end_claim();
                if self.mapped {
                    Err(e.into())
                } else {
                    Err(mapping_state_lost(e.into(), self.name, self.kind))
                }
            }
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        if let Err(e) = self.unregister() {
            if !self.raw.is_null() {
                // Refused (no GL context, or another, is current) and no later unregister
                // comes: the driver keeps the resource.
                self.end_claim();
            }
            // A timeout (a leaked guard's work, or the retired objects' event) is recorded too.
            self.ctx.record_drop_wait(
                "unregistering a GL resource",
                "cuEventQuery or cuCtxSynchronize",
                e,
            );
        }
    }
}

/// `CUDA_ERROR_ALREADY_MAPPED` for a registration that this book-keeping says is unmapped: the
/// driver's state no longer matches, which [`Error::MappingStateLost`] explains. Other errors
/// pass through.
pub(super) fn mapping_state_lost(e: Error, name: u32, kind: Kind) -> Error {
    match e {
        Error::Cuda(source) if source.code == sys::CUresult::CUDA_ERROR_ALREADY_MAPPED => {
            Error::MappingStateLost {
                name,
                kind: kind.describe().to_string(),
                source,
            }
        }
        other => other,
    }
}

/// The error of a failed unmap: no GL context current is the usual cause and gets the variant
/// that says what to do.
pub(crate) fn unmap_error(e: CudaError) -> Error {
    if e.code == sys::CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT {
        Error::NoGlContext { source: e }
    } else {
        e.into()
    }
}

/// Registers GL object `name` with the driver, after the checks the driver does not make.
fn register_raw(
    ctx: &Arc<Context>,
    fns: &GlFns,
    name: u32,
    kind: Kind,
    flags: RegisterFlags,
) -> Result<sys::CUgraphicsResource> {
    ctx.bind()?;
    check_same_gpu(ctx)?;
    if let Kind::Image(target) = kind
        && query::texture_target_is(fns, name, target)? == Some(false)
    {
        // The driver registers a texture under another target without complaint.
        return Err(Error::WrongImageTarget {
            name,
            target,
            actual: query::texture_target(fns, name)?.unwrap_or(0),
        });
    }
    // SAFETY: the out-handle is owned by the returned Registration, which unregisters it
    // exactly once.
    let registered = unsafe {
        match kind.image_enum() {
            None => result::graphics::register_buffer(name, flags.bits()),
            Some(target) => result::graphics::register_image(name, target, flags.bits()),
        }
    };
    registered.map_err(|e| {
        let error = classify_register_error(e, fns, name, kind, ctx);
        explain_refused_image(error, fns, name, kind, flags)
    })
}

/// Refuses to register when the current GL context is on no GPU of `ctx`: the driver would accept
/// it. No GL context, or a GL context that is not NVIDIA's, is reported here too, with the error
/// that says what to do.
fn check_same_gpu(ctx: &Context) -> Result<()> {
    match gl_devices(GlDeviceList::All) {
        Ok(devices) if !devices.is_empty() && !devices.contains(ctx.device()) => {
            Err(Error::WrongDevice {
                gl_devices: devices.iter().map(|d| d.label()).collect(),
                cuda: Box::new(ctx.device().label()),
            })
        }
        Err(e @ (Error::NoGlContext { .. } | Error::NotNvidiaGl { .. })) => Err(e),
        // Anything else: let the registration itself report it.
        _ => Ok(()),
    }
}

fn validate(name: u32, kind: Kind, flags: RegisterFlags) -> Result<()> {
    if name == 0 {
        return Err(UsageError::ZeroGlName {
            kind: kind.describe(),
        }
        .into());
    }
    if flags.contains(RegisterFlags::READ_ONLY | RegisterFlags::WRITE_DISCARD) {
        return Err(UsageError::ContradictoryFlags.into());
    }
    if kind == Kind::Buffer
        && flags.intersects(RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::TEXTURE_GATHER)
    {
        return Err(UsageError::ImageOnlyFlags { flags }.into());
    }
    if flags.bits() & !RegisterFlags::all().bits() != 0 {
        return Err(Error::InvalidArgument(format!(
            "unknown register flag bits {:#x}.\nhelp: build flags from RegisterFlags' constants \
             (from_bits_retain keeps bits CUDA does not know)",
            flags.bits() & !RegisterFlags::all().bits()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gl_object::ImageTarget;

    #[test]
    fn rejects_nonsense_flags_before_the_driver() {
        let both = RegisterFlags::READ_ONLY | RegisterFlags::WRITE_DISCARD;
        assert!(matches!(
            validate(1, Kind::Buffer, both),
            Err(Error::Usage(UsageError::ContradictoryFlags))
        ));
        assert!(matches!(
            validate(1, Kind::Image(ImageTarget::Texture2D), both),
            Err(Error::Usage(UsageError::ContradictoryFlags))
        ));
        for image_only in [
            RegisterFlags::SURFACE_LOAD_STORE,
            RegisterFlags::TEXTURE_GATHER,
        ] {
            let err = validate(1, Kind::Buffer, image_only).err();
            assert!(
                matches!(&err, Some(Error::Usage(UsageError::ImageOnlyFlags { flags }))
                    if *flags == image_only)
                    && err
                        .as_ref()
                        .is_some_and(|e| e.to_string().contains("images only")),
                "{err:?}"
            );
            assert!(validate(1, Kind::Image(ImageTarget::Texture2D), image_only).is_ok());
        }
        let unknown = RegisterFlags::from_bits_retain(0x40);
        assert!(matches!(
            validate(1, Kind::Buffer, unknown),
            Err(Error::InvalidArgument(m)) if m.contains("0x40") && m.contains("\nhelp: ")
        ));
        for ok in [
            RegisterFlags::NONE,
            RegisterFlags::READ_ONLY,
            RegisterFlags::WRITE_DISCARD,
        ] {
            assert!(validate(7, Kind::Buffer, ok).is_ok());
        }
    }

    #[test]
    fn refusals_get_the_variant_that_says_what_to_do() {
        let err = |code| CudaError::new("cuGraphicsUnregisterResource", code);
        let lost = mapping_state_lost(
            err(sys::CUresult::CUDA_ERROR_ALREADY_MAPPED).into(),
            3,
            Kind::Buffer,
        );
        assert!(
            matches!(lost, Error::MappingStateLost { name: 3, .. }),
            "{lost:?}"
        );
        let sticky = mapping_state_lost(
            err(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS).into(),
            3,
            Kind::Buffer,
        );
        assert!(
            matches!(sticky, Error::ContextUnusable { .. }),
            "{sticky:?}"
        );
        let other = mapping_state_lost(
            err(sys::CUresult::CUDA_ERROR_INVALID_VALUE).into(),
            3,
            Kind::Buffer,
        );
        assert!(matches!(other, Error::Cuda(_)), "{other:?}");
        let no_gl = unmap_error(err(sys::CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT));
        assert!(matches!(no_gl, Error::NoGlContext { .. }), "{no_gl:?}");
        assert_eq!(
            ImageTarget::from_gl(gl::TEXTURE_2D_ARRAY),
            Some(ImageTarget::Texture2DArray)
        );
        assert_eq!(ImageTarget::from_gl(gl::TEXTURE_1D), None);
    }

    #[test]
    fn rejects_gl_name_zero() {
        let err = validate(0, Kind::Buffer, RegisterFlags::NONE).err();
        assert!(
            matches!(
                &err,
                Some(Error::Usage(UsageError::ZeroGlName { kind: "buffer" }))
            ) && err
                .as_ref()
                .is_some_and(|e| e.to_string().contains("GL name 0")),
            "{err:?}"
        );
    }
}
