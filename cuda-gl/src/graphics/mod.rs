//! Registering GL buffers and images with CUDA, and mapping them.
//!
//! - [`RegisteredBuffer`] and [`RegisteredImage`] own one registration each and unregister it on
//!   drop (or explicitly with `unregister()`, which returns the driver's error).
//! - `map(&mut self, &stream)` returns a guard ([`MappedBuffer`], [`MappedImage`]) that borrows
//!   the resource mutably and the stream; dropping the guard unmaps on that same stream. The
//!   borrows make these fail to compile: mapping twice, unregistering or dropping while mapped,
//!   and keeping a pointer, array or surface past the unmap.
//! - [`map_all`] maps N resources, buffers and images mixed, with one `cuGraphicsMapResources`
//!   call, and unmaps them with one call.
//!
//! Each registration also remembers whether it is mapped, so `std::mem::forget` on a guard stays
//! sound: the next `map`, `set_map_flags`, `unregister` or drop first waits for the context and
//! unmaps the leaked mapping.

mod batch;
mod buffer;
mod claim;
mod image;
mod retire;

pub use batch::{MappedBatch, Resource, map_all};
pub use buffer::{MappedBuffer, RegisteredBuffer};
pub use image::{
    ArrayFormat, MappedArray, MappedImage, MappedMipmappedArray, RegisteredImage, Surface,
    SurfaceObject, TextureDesc, TextureHandle, TextureObject,
};

use crate::context::Context;
use crate::device::{GlDeviceList, gl_devices};
use crate::error::{CudaError, Error, Result};
use crate::glcurrent::{self, GlOwner};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

bitflags::bitflags! {
    /// How CUDA will use a registered GL object (`CU_GRAPHICS_REGISTER_FLAGS_*`).
    ///
    /// Combinations that make no sense are rejected before the driver is called:
    /// `READ_ONLY | WRITE_DISCARD`, and the image-only flags on a buffer.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct RegisterFlags: u32 {
        /// No hint: CUDA may read and write.
        const NONE = 0;
        /// CUDA only reads; GL's contents are kept.
        const READ_ONLY = 1;
        /// CUDA overwrites everything; GL's previous contents need not be kept.
        const WRITE_DISCARD = 2;
        /// Images only: CUDA binds the image as a surface (`surf2Dwrite`).
        const SURFACE_LOAD_STORE = 4;
        /// Images only: CUDA may gather from it as a texture.
        const TEXTURE_GATHER = 8;
    }
}

/// How CUDA will use a resource during its next mappings (`CU_GRAPHICS_MAP_RESOURCE_FLAGS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MapFlags {
    /// CUDA may read and write.
    #[default]
    None,
    /// CUDA only reads.
    ReadOnly,
    /// CUDA overwrites everything.
    WriteDiscard,
}

impl MapFlags {
    fn raw(self) -> u32 {
        match self {
            MapFlags::None => 0,
            MapFlags::ReadOnly => 1,
            MapFlags::WriteDiscard => 2,
        }
    }
}

/// The GL target an image was created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageTarget {
    /// `GL_TEXTURE_2D`.
    Texture2D,
    /// `GL_TEXTURE_RECTANGLE`.
    Rectangle,
    /// `GL_TEXTURE_2D_ARRAY`: map layers with the array index.
    Texture2DArray,
    /// `GL_TEXTURE_3D`.
    Texture3D,
    /// `GL_TEXTURE_CUBE_MAP`: map faces with the array index (0..6).
    CubeMap,
    /// `GL_RENDERBUFFER`.
    Renderbuffer,
}

impl ImageTarget {
    /// The GL enum value.
    pub fn gl_enum(self) -> u32 {
        match self {
            ImageTarget::Texture2D => gl::TEXTURE_2D,
            ImageTarget::Rectangle => gl::TEXTURE_RECTANGLE,
            ImageTarget::Texture2DArray => gl::TEXTURE_2D_ARRAY,
            ImageTarget::Texture3D => gl::TEXTURE_3D,
            ImageTarget::CubeMap => gl::TEXTURE_CUBE_MAP,
            ImageTarget::Renderbuffer => gl::RENDERBUFFER,
        }
    }

    /// The target whose GL enum is `gl_enum`, if CUDA can register it.
    pub(crate) fn from_gl(gl_enum: u32) -> Option<ImageTarget> {
        [
            ImageTarget::Texture2D,
            ImageTarget::Rectangle,
            ImageTarget::Texture2DArray,
            ImageTarget::Texture3D,
            ImageTarget::CubeMap,
            ImageTarget::Renderbuffer,
        ]
        .into_iter()
        .find(|t| t.gl_enum() == gl_enum)
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            ImageTarget::Texture2D => "GL_TEXTURE_2D texture",
            ImageTarget::Rectangle => "GL_TEXTURE_RECTANGLE texture",
            ImageTarget::Texture2DArray => "GL_TEXTURE_2D_ARRAY texture",
            ImageTarget::Texture3D => "GL_TEXTURE_3D texture",
            ImageTarget::CubeMap => "GL_TEXTURE_CUBE_MAP texture",
            ImageTarget::Renderbuffer => "renderbuffer",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Buffer,
    Image(ImageTarget),
}

impl Kind {
    /// The GL namespace of the name: buffers, textures and renderbuffers are counted apart.
    fn namespace(self) -> u8 {
        match self {
            Kind::Buffer => 0,
            Kind::Image(ImageTarget::Renderbuffer) => 2,
            Kind::Image(_) => 1,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Buffer => "buffer",
            Kind::Image(t) => t.describe(),
        }
    }
}

/// One registration: the state shared by buffers and images.
#[derive(Debug)]
pub(crate) struct Registration {
    ctx: Arc<Context>,
    raw: sys::CUgraphicsResource,
    name: u32,
    kind: Kind,
    flags: RegisterFlags,
    map_flags: MapFlags,
    /// Set while mapped; still set after a guard was leaked with `mem::forget`.
    mapped: bool,
    /// Surface objects over the mapped arrays, one per (array index, mip level), kept across maps
    /// while the driver returns the same array (images registered `SURFACE_LOAD_STORE` only).
    surfaces: image::SurfaceCache,
    /// Surface and texture objects waiting until the GPU work that may use them is done.
    retired: retire::Retirement,
    /// This process's claim on the GL object, so a second registration is refused.
    claim: Option<claim::Claim>,
    /// The GL context current at registration: map, unmap and unregister need it current.
    owner: GlOwner,
}

// SAFETY: a CUgraphicsResource may be used and unregistered from any thread once the CUDA
// context is bound, which every method does first; mutation needs `&mut`.
unsafe impl Send for Registration {}
// SAFETY: `&self` methods only read fields.
unsafe impl Sync for Registration {}

impl Registration {
    fn register(ctx: &Arc<Context>, name: u32, kind: Kind, flags: RegisterFlags) -> Result<Self> {
        validate(name, kind, flags)?;
        let owner =
            GlOwner::current("cuGraphicsGLRegister* (not called: no GL context is current)")?;
        let Some(claim) = claim::claim(ctx.device().raw(), kind, name, owner.handle()) else {
            return Err(Error::AlreadyRegistered {
                name,
                kind: kind.describe().to_string(),
            });
        };
        let raw = match register_raw(ctx, name, kind, flags) {
            Ok(raw) => raw,
            Err(e) => {
                claim.release(kind, name);
                return Err(e);
            }
        };
        Ok(Registration {
            ctx: ctx.clone(),
            raw,
            name,
            kind,
            flags,
            map_flags: MapFlags::None,
            mapped: false,
            surfaces: image::SurfaceCache::default(),
            retired: retire::Retirement::default(),
            claim: Some(claim),
            owner,
        })
    }

    /// Unmaps a mapping whose guard was leaked. The guard's stream may be gone, so this waits for
    /// the whole context first and then unmaps on the legacy default stream.
    fn recover_leaked_mapping(&mut self) -> Result<()> {
        if !self.mapped {
            return Ok(());
        }
        log::warn!(
            "cuda-gl: GL {} {} is still mapped (its guard was leaked); synchronizing the context \
             and unmapping it",
            self.kind.describe(),
            self.name
        );
        self.owner.check("cuGraphicsUnmapResources (not called)")?;
        self.ctx.bind()?;
        result::ctx::synchronize()?;
        self.retired.synchronized();
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
    unsafe fn map_raw(raws: &mut [sys::CUgraphicsResource], stream: sys::CUstream) -> Result<()> {
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
    fn map_on(&mut self, stream: &impl AsStream) -> Result<sys::CUstream> {
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

    /// A single-resource guard's unmap: nothing when already unmapped, else unmap on `stream`.
    ///
    /// # Safety
    /// 1. When mapped, it was mapped on `stream`, which is still live, and no view of the
    ///    mapping is used after this call.
    unsafe fn finish_mapping(&mut self, stream: sys::CUstream) -> Result<()> {
        if !self.mapped {
            return Ok(());
        }
        // SAFETY: (1).
        unsafe { self.unmap_on(stream) }
    }

    fn prepare_map(&mut self, stream: &impl AsStream) -> Result<()> {
        if stream.raw_context() != self.ctx.raw() {
            return Err(Error::InvalidArgument(format!(
                "the stream belongs to another CUDA context than GL {} {}; map on a stream of the \
                 context the resource was registered in",
                self.kind.describe(),
                self.name
            )));
        }
        self.owner.check("cuGraphicsMapResources (not called)")?;
        self.recover_leaked_mapping()?;
        self.ctx.bind()?;
        self.retired.collect(&self.ctx);
        Ok(())
    }

    fn set_map_flags(&mut self, flags: MapFlags) -> Result<()> {
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
    unsafe fn unmap_on(&mut self, stream: sys::CUstream) -> Result<()> {
        self.owner.check("cuGraphicsUnmapResources (not called)")?;
        self.ctx.bind()?;
        // SAFETY: (1).
        unsafe { result::graphics::unmap(&mut [self.raw], stream) }.map_err(unmap_error)?;
        self.unmapped(stream);
        Ok(())
    }

    /// Book-keeping after a successful unmap on `stream`, the stream of the map: records when
    /// the surface and texture objects of the mapping are free (see [`retire`]).
    fn unmapped(&mut self, stream: sys::CUstream) {
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

    /// Ends the claim on the GL object, giving it back its previous label. The owning GL
    /// context is current (checked by `unregister`).
    fn release_claim(&mut self) {
        if let Some(claim) = self.claim.take() {
            claim.release(self.kind, self.name);
        }
    }

    /// Unmaps if needed, then unregisters. Idempotent.
    fn unregister(&mut self) -> Result<()> {
        if self.raw.is_null() {
            return Ok(());
        }
        // Without a GL context the handle is kept, so that a later unregister (with the context
        // current) can still release it.
        self.owner
            .check("cuGraphicsUnregisterResource (not called)")?;
        let recovered = self.recover_leaked_mapping();
        self.ctx.bind()?;
        let recovered = recovered.and(self.release_objects());
        // SAFETY: registered, unmapped (or the unmap failed and the driver will report it).
        match unsafe { result::graphics::unregister(self.raw) } {
            Ok(()) => {
                self.raw = std::ptr::null_mut();
                self.release_claim();
                recovered
            }
            Err(e) if e.code == sys::CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT => {
                // The GL context that owns the object is not current here. Keep the handle so
                // that a later `unregister` where it is current can still succeed.
                Err(Error::NoGlContext { source: e })
            }
            Err(e) => {
                // The driver refused for good; never try again.
                self.raw = std::ptr::null_mut();
                self.release_claim();
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
        if let Err(e) = self.unregister() {
            self.ctx.record_drop_error("unregistering a GL resource", e);
        }
    }
}

/// `CUDA_ERROR_ALREADY_MAPPED` for a registration that this book-keeping says is unmapped: the
/// driver's state no longer matches, which [`Error::MappingStateLost`] explains. Other errors
/// pass through.
fn mapping_state_lost(e: Error, name: u32, kind: Kind) -> Error {
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
    name: u32,
    kind: Kind,
    flags: RegisterFlags,
) -> Result<sys::CUgraphicsResource> {
    ctx.bind()?;
    check_same_gpu(ctx)?;
    if let Kind::Image(target) = kind
        && target != ImageTarget::Renderbuffer
        && let Some(actual) = glquery::texture_target(name)
        && actual != target.gl_enum()
    {
        // The driver registers a texture under another target without complaint.
        return Err(Error::WrongImageTarget {
            name,
            target,
            actual,
        });
    }
    // SAFETY: the out-handle is owned by the returned Registration, which unregisters it
    // exactly once.
    let registered = unsafe {
        match kind {
            Kind::Buffer => result::graphics::register_buffer(name, flags.bits()),
            Kind::Image(target) => {
                result::graphics::register_image(name, target.gl_enum(), flags.bits())
            }
        }
    };
    registered.map_err(|e| {
        let error = classify_register_error(e, name, kind, ctx);
        explain_refused_image(error, name, kind, flags)
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
        return Err(Error::InvalidArgument(format!(
            "GL name 0 is not a {}: 0 is GL's 'no object'; pass a name from glGen*/glCreate*",
            kind.describe()
        )));
    }
    if flags.contains(RegisterFlags::READ_ONLY | RegisterFlags::WRITE_DISCARD) {
        return Err(Error::InvalidArgument(
            "READ_ONLY and WRITE_DISCARD contradict each other: pick READ_ONLY when CUDA only \
             reads, WRITE_DISCARD when it overwrites everything"
                .into(),
        ));
    }
    if kind == Kind::Buffer
        && flags.intersects(RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::TEXTURE_GATHER)
    {
        return Err(Error::InvalidArgument(
            "SURFACE_LOAD_STORE and TEXTURE_GATHER apply to images only; register a buffer with \
             NONE, READ_ONLY or WRITE_DISCARD"
                .into(),
        ));
    }
    if flags.bits() & !RegisterFlags::all().bits() != 0 {
        return Err(Error::InvalidArgument(format!(
            "unknown register flag bits {:#x}",
            flags.bits() & !RegisterFlags::all().bits()
        )));
    }
    Ok(())
}

/// Turns the driver's error from a GL-device query into the variant that says what to do.
pub(crate) fn classify_gl_error(e: CudaError) -> Error {
    use sys::CUresult as R;
    match e.code {
        R::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT | R::CUDA_ERROR_INVALID_CONTEXT => {
            Error::NoGlContext { source: e }
        }
        R::CUDA_ERROR_NO_DEVICE | R::CUDA_ERROR_OPERATING_SYSTEM | R::CUDA_ERROR_UNKNOWN => {
            Error::NotNvidiaGl { source: e }
        }
        _ => e.into(),
    }
}

fn classify_register_error(e: CudaError, name: u32, kind: Kind, ctx: &Context) -> Error {
    use sys::CUresult as R;
    let kind_text = kind.describe().to_string();
    match e.code {
        R::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT => Error::NoGlContext { source: e },
        R::CUDA_ERROR_INVALID_DEVICE => Error::WrongDevice {
            gl_devices: gl_devices(GlDeviceList::All)
                .map(|ds| ds.iter().map(|d| d.label()).collect())
                .unwrap_or_default(),
            cuda: Box::new(ctx.device().label()),
        },
        R::CUDA_ERROR_OPERATING_SYSTEM | R::CUDA_ERROR_UNKNOWN | R::CUDA_ERROR_NO_DEVICE => {
            // Which of the two: a GL context that is not NVIDIA's, or no GL context at all.
            match gl_devices(GlDeviceList::All) {
                Err(Error::NoGlContext { .. }) => Error::NoGlContext { source: e },
                // An NVIDIA GL context is current: the object itself was refused (the driver
                // says UNKNOWN for an object it cannot register).
                Ok(devices) if !devices.is_empty() && e.code == R::CUDA_ERROR_UNKNOWN => {
                    Error::NotAGlObject {
                        name,
                        kind: kind_text,
                        source: e,
                    }
                }
                Ok(devices) if !devices.is_empty() => e.into(),
                _ => Error::NotNvidiaGl { source: e },
            }
        }
        // The driver says "out of memory" for a buffer without storage.
        R::CUDA_ERROR_OUT_OF_MEMORY
            if kind == Kind::Buffer && glquery::buffer_size(name) == Some(0) =>
        {
            Error::NotAGlObject {
                name,
                kind: kind_text,
                source: e,
            }
        }
        R::CUDA_ERROR_INVALID_VALUE if glcurrent::current() == glcurrent::Current::None => {
            Error::NoGlContext { source: e }
        }
        R::CUDA_ERROR_INVALID_VALUE
        | R::CUDA_ERROR_INVALID_HANDLE
        | R::CUDA_ERROR_NOT_SUPPORTED
        | R::CUDA_ERROR_INVALID_IMAGE => Error::NotAGlObject {
            name,
            kind: kind_text,
            source: e,
        },
        _ => e.into(),
    }
}

/// Refines [`Error::NotAGlObject`] for an image that GL says exists into
/// [`Error::UnsupportedImage`]: when CUDA takes it without the surface and gather flags, those
/// flags are what its format cannot do; otherwise its target or format is refused.
fn explain_refused_image(error: Error, name: u32, kind: Kind, flags: RegisterFlags) -> Error {
    let Error::NotAGlObject { source, .. } = &error else {
        return error;
    };
    let Kind::Image(target) = kind else {
        return error;
    };
    let special = RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::TEXTURE_GATHER;
    if flags.intersects(special) {
        // SAFETY: the probe handle is unregistered just below and never escapes.
        let probe = unsafe {
            result::graphics::register_image(name, target.gl_enum(), (flags - special).bits())
        };
        if let Ok(raw) = probe {
            // SAFETY: registered just above, never mapped.
            if let Err(e) = unsafe { result::graphics::unregister(raw) } {
                log::warn!("cuda-gl: unregistering a probe registration of GL image {name}: {e}");
            }
            return Error::UnsupportedImage {
                name,
                kind: kind.describe().to_string(),
                flags,
                flags_only: true,
                source: source.clone(),
            };
        }
    }
    if glquery::image_exists(target, name) {
        return Error::UnsupportedImage {
            name,
            kind: kind.describe().to_string(),
            flags,
            flags_only: false,
            source: source.clone(),
        };
    }
    error
}

/// Questions to GL, asked only to check a registration or to explain a refusal. Each answers
/// `None` (or `false`) unless a GL context is known to be current and the `gl` crate's function
/// pointers are loaded (by [`egl`](crate::egl), or by the application with the same `gl`
/// crate); the DSA queries also need OpenGL 4.5. No query changes GL state or raises a GL error.
mod glquery {
    use crate::glcurrent;
    use crate::graphics::ImageTarget;

    fn gl_current() -> bool {
        matches!(glcurrent::current(), glcurrent::Current::Context(_))
    }

    /// Whether the current context is OpenGL 4.5 or newer.
    fn has_dsa() -> bool {
        if !gl::GetIntegerv::is_loaded() {
            return false;
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: a GL context is current (checked by the callers) and the function is loaded;
        // GL_MAJOR_VERSION and GL_MINOR_VERSION are valid queries since OpenGL 3.0.
        unsafe {
            gl::GetIntegerv(gl::MAJOR_VERSION, &mut major);
            gl::GetIntegerv(gl::MINOR_VERSION, &mut minor);
        }
        (major, minor) >= (4, 5)
    }

    /// Whether `name` is a texture (or, for [`ImageTarget::Renderbuffer`], a renderbuffer).
    pub(super) fn image_exists(target: ImageTarget, name: u32) -> bool {
        if !gl_current() {
            return false;
        }
        if target == ImageTarget::Renderbuffer {
            // SAFETY: a GL context is current and the function is loaded; glIsRenderbuffer
            // changes no state.
            gl::IsRenderbuffer::is_loaded() && unsafe { gl::IsRenderbuffer(name) } == gl::TRUE
        } else {
            // SAFETY: as above, for glIsTexture.
            gl::IsTexture::is_loaded() && unsafe { gl::IsTexture(name) } == gl::TRUE
        }
    }

    /// The target texture `name` was created with (`GL_TEXTURE_TARGET`).
    pub(super) fn texture_target(name: u32) -> Option<u32> {
        if !image_exists(ImageTarget::Texture2D, name)
            || !gl::GetTextureParameteriv::is_loaded()
            || !has_dsa()
        {
            return None;
        }
        let mut target = 0;
        // SAFETY: a GL 4.5 context is current, `name` is a texture object of it, and
        // GL_TEXTURE_TARGET is a valid query for any texture object.
        unsafe { gl::GetTextureParameteriv(name, gl::TEXTURE_TARGET, &mut target) };
        u32::try_from(target).ok().filter(|&t| t != 0)
    }

    /// The size in bytes of buffer `name`'s storage.
    pub(super) fn buffer_size(name: u32) -> Option<i64> {
        // SAFETY: a GL context is current and the function is loaded; glIsBuffer changes no
        // state.
        let is_buffer =
            gl_current() && gl::IsBuffer::is_loaded() && unsafe { gl::IsBuffer(name) } == gl::TRUE;
        if !is_buffer || !gl::GetNamedBufferParameteri64v::is_loaded() || !has_dsa() {
            return None;
        }
        let mut size = -1;
        // SAFETY: a GL 4.5 context is current, `name` is a buffer object of it, and
        // GL_BUFFER_SIZE is a valid query for any buffer object.
        unsafe { gl::GetNamedBufferParameteri64v(name, gl::BUFFER_SIZE, &mut size) };
        (size >= 0).then_some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_nonsense_flags_before_the_driver() {
        let both = RegisterFlags::READ_ONLY | RegisterFlags::WRITE_DISCARD;
        assert!(matches!(
            validate(1, Kind::Buffer, both),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            validate(1, Kind::Image(ImageTarget::Texture2D), both),
            Err(Error::InvalidArgument(_))
        ));
        for image_only in [
            RegisterFlags::SURFACE_LOAD_STORE,
            RegisterFlags::TEXTURE_GATHER,
        ] {
            let err = validate(1, Kind::Buffer, image_only).err();
            assert!(
                matches!(&err, Some(Error::InvalidArgument(m)) if m.contains("images only")),
                "{err:?}"
            );
            assert!(validate(1, Kind::Image(ImageTarget::Texture2D), image_only).is_ok());
        }
        let unknown = RegisterFlags::from_bits_retain(0x40);
        assert!(matches!(
            validate(1, Kind::Buffer, unknown),
            Err(Error::InvalidArgument(_))
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
            matches!(&err, Some(Error::InvalidArgument(m)) if m.contains("GL name 0")),
            "{err:?}"
        );
    }
}
