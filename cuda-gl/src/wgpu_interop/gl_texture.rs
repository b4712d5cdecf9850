//! The GL route's frame texture: a GL texture that cuda-gl makes in the wgpu device's GL
//! context, registers with CUDA, clears, and hands wgpu as a `wgpu::Texture` with a drop
//! callback, so that wgpu never deletes it (SAFETY G3 of the module docs).
//!
//! Why cuda-gl makes the texture rather than registering one that wgpu made: wgpu deletes the
//! GL texture of a texture it made whenever it destroys that texture, and safe code can make it
//! destroy every texture of a device at any moment (`wgpu::Device::destroy`, then a poll; a
//! lost device does the same), also while CUDA holds the texture registered or mapped. A
//! texture wgpu wraps with a drop callback it never deletes: the callback lets go of
//! cuda-gl's hold, and cuda-gl deletes the texture once both wgpu and the frame texture have
//! let go, after its registration is gone, with its GL context current (checked; otherwise
//! the texture is leaked).

use super::WgpuError;
use super::format::SharedFormat;
use super::gl_device::Gles;
use super::place::texture_descriptor;
use super::scope::scoped;
use crate::context::Context;
use crate::display::TextureObject;
use crate::error::{Error, Result};
use crate::glapi::GlOwner;
use crate::graphics::{RegisterFlags, RegisteredImage};
use crate::memory::DeviceBuffer;
use crate::result;
use crate::stream::{Event, Stream, StreamFlags};
use crate::wait::InDrop;
use std::mem::ManuallyDrop;
use std::num::NonZeroU32;
use std::sync::Arc;

/// The texture CUDA writes in place and wgpu samples (only in the present's blit or copy: it
/// is never handed out), with its registration.
#[derive(Debug)]
pub(super) struct GlFrameTexture {
    // The registration goes first (in `Drop`), then wgpu's handle, then cuda-gl's hold on the
    // GL texture.
    /// Never dropped when CUDA may still use the texture ([`keep_for_good`](Self::keep_for_good)).
    image: ManuallyDrop<RegisteredImage>,
    texture: wgpu::Texture,
    /// Shared with the drop callback of wgpu's texture; the GL texture is deleted when the last
    /// of the two lets go. Never dropped (so the texture never deleted) when the registration
    /// could not be undone.
    gl: ManuallyDrop<Arc<TextureObject>>,
    /// CUDA's work on the mapped texture did not end within the limit: the registration and
    /// the texture are leaked, not released under it.
    kept: bool,
    /// The clear's mark (see [`take_cleared`](Self::take_cleared)); `None` without a clear, or
    /// once taken.
    cleared: Option<Event>,
}

impl GlFrameTexture {
    /// A texture of `size` and `format` in the GL context current on this thread (the wgpu
    /// device's: SAFETY G1), registered with CUDA context `ctx` for surface writes, cleared to
    /// zero by CUDA from `zeros` when given (a zeroed buffer of the texture's bytes, tightly
    /// packed; `None` for a texture nothing reads before CUDA has written all of it), and
    /// wrapped as a `wgpu::Texture` of `device` named `label` (usages `TEXTURE_BINDING` and
    /// `COPY_SRC`). The clear is ordered before nothing of the caller's: its mark
    /// ([`take_cleared`](Self::take_cleared)) is what a later stream joins. The size is within
    /// the device's `max_texture_dimension_2d` (the caller checked it), which wgpu-hal takes
    /// from `GL_MAX_TEXTURE_SIZE`: within GL's limit too.
    ///
    /// # Errors
    /// The owner check's errors (no GL context current, or one without object labels); as
    /// `TextureObject::create`; as [`RegisteredImage::register`] (a context on another GPU:
    /// [`Error::WrongDevice`]); the driver's errors of the clear;
    /// [`WgpuError::NotGl`] for a device of another backend; [`WgpuError::Refused`] or
    /// [`WgpuError::OutOfMemory`] when wgpu refuses the texture.
    pub(super) fn new(
        ctx: &Arc<Context>,
        device: &wgpu::Device,
        (size, format): ((u32, u32), SharedFormat),
        zeros: Option<&DeviceBuffer<u8>>,
        label: &'static str,
    ) -> Result<GlFrameTexture> {
        let (owner, fns) = GlOwner::current("glTexStorage2D (a wgpu texture of cuda-gl's)")?;
        // No grey swizzle: wgpu samples a one-channel texture as (r, 0, 0, 1).
        let gl = Arc::new(TextureObject::create(owner, fns, size, format.gl(), false)?);
        // Refused: nothing registered, the texture is deleted.
        let mut image = RegisteredImage::register_own_texture(
            ctx,
            gl.name(),
            RegisterFlags::SURFACE_LOAD_STORE,
        )?;
        let cleared = zeros.map(|zeros| clear(ctx, &mut image, zeros)).transpose();
        let wrapped = cleared.and_then(|cleared| {
            wrap(device, &gl, (size, format), label).map(|texture| (texture, cleared))
        });
        match wrapped {
            Ok((texture, cleared)) => Ok(GlFrameTexture {
                image: ManuallyDrop::new(image),
                texture,
                gl: ManuallyDrop::new(gl),
                kept: false,
                cleared,
            }),
            // As the drop: the texture goes only once the registration is gone.
            Err(e) => {
                unregister_then_let_go(image, gl);
                Err(e)
            }
        }
    }

    /// Takes the clear's mark: an event recorded on cuda-gl's private stream after the clear's
    /// copy (which ran there) and its unmap. The clear ran on a stream of its own, which no
    /// frame's stream is ordered after, and a map on another stream is ordered only after GL's
    /// commands issued before it, not after CUDA's work on the first stream: the frames'
    /// streams join the private stream after this mark (until one is shown, whose blit then
    /// orders the later maps), so that their kernels write the texture (and the pixels the
    /// clear read) after the clear.
    pub(super) fn take_cleared(&mut self) -> Option<Event> {
        self.cleared.take()
    }

    /// Whether CUDA still holds the texture mapped (a frame whose guard was forgotten).
    pub(super) fn is_mapped(&self) -> bool {
        self.image.is_mapped()
    }

    /// Leaks the registration and the texture when this is dropped, for a texture that CUDA
    /// may still use (a forgotten frame's kernel that outlived the drop's wait): unregistering
    /// it would first wait for the whole context again, with no limit.
    pub(super) fn keep_for_good(&mut self) {
        self.kept = true;
    }

    /// Refuses `call` unless the texture's GL context is current on this thread.
    ///
    /// # Errors
    /// As `TextureObject::check_current`.
    pub(super) fn check_current(&self, call: &'static str) -> Result<()> {
        self.gl.check_current(call)
    }

    /// The wgpu texture, for the present's blit or copy.
    pub(super) fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// The registration, for a frame's map, and the wgpu texture, for its present.
    pub(super) fn parts(&mut self) -> (&mut RegisteredImage, &wgpu::Texture) {
        (&mut *self.image, &self.texture)
    }
}

impl Drop for GlFrameTexture {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        if self.kept {
            log::error!(
                "cuda-gl: cuda-gl's GL texture {} for wgpu and its registration leaked: \
                 CUDA's work on it did not end in time",
                self.gl.name()
            );
            return;
        }
        // SAFETY: taken once, here, and never used after.
        let (image, gl) = unsafe {
            (
                ManuallyDrop::take(&mut self.image),
                ManuallyDrop::take(&mut self.gl),
            )
        };
        unregister_then_let_go(image, gl);
    }
}

/// Unregisters `image` (with the GL context current; a leaked mapping is recovered first,
/// waiting for the context's work), then lets go of cuda-gl's hold on its texture `gl`, which
/// is deleted once wgpu's drop callback lets go too. When the unregister fails the driver may
/// still hold the texture: the hold is leaked, so the texture is never deleted.
fn unregister_then_let_go(mut image: RegisteredImage, gl: Arc<TextureObject>) {
    let unregistered = image.unregister_in_place();
    // Its own drop records why, when it could not unregister.
    drop(image);
    match unregistered {
        Ok(()) => drop(gl),
        Err(e) => {
            log::error!(
                "cuda-gl: cuda-gl's GL texture {} for wgpu leaked, not deleted (CUDA may \
                 still hold it): {e}",
                gl.name()
            );
            std::mem::forget(gl);
        }
    }
}

/// Clears the registered texture to zero: maps it on a stream of its own, copies `zeros` in,
/// and unmaps (GL's later commands come after the copy). Returns the clear's mark, recorded on
/// cuda-gl's private stream after the copy and the unmap (see
/// [`GlFrameTexture::take_cleared`]).
///
/// # Errors
/// The driver's errors; as [`RegisteredImage::map`].
fn clear(
    ctx: &Arc<Context>,
    image: &mut RegisteredImage,
    zeros: &DeviceBuffer<u8>,
) -> Result<Event> {
    let stream = Stream::new(ctx, StreamFlags::NonBlocking)?;
    let mapped = image.map(&stream)?;
    mapped.array(0, 0)?.copy_from_device(zeros)?;
    mapped.unmap()?;
    let mark = Event::new(ctx, false)?;
    let raw = mark.raw();
    // SAFETY: the stream is live (owned here, destroyed after its work) and of `ctx`; the
    // event is live, of `ctx`.
    unsafe {
        ctx.run_now(
            stream.raw(),
            "cuEventRecord (the clear of a GL texture of cuda-gl's for wgpu)",
            |p| Ok(result::stream::event_record(raw, p)?),
        )
    }?;
    Ok(mark)
}

/// `gl`'s texture as a `wgpu::Texture` of `device` named `label` (a 2-D texture of `size` and
/// `format`, one level, usages `TEXTURE_BINDING` and `COPY_SRC`), whose drop callback holds
/// `gl`.
///
/// # Errors
/// [`WgpuError::NotGl`]; [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when wgpu
/// refuses it; `Error::Internal` for a texture without a name, or one that wgpu does not hold
/// as a 2-D texture of that name.
pub(super) fn wrap(
    device: &wgpu::Device,
    gl: &Arc<TextureObject>,
    (size, format): ((u32, u32), SharedFormat),
    label: &'static str,
) -> Result<wgpu::Texture> {
    let name = NonZeroU32::new(gl.name()).ok_or_else(|| Error::Internal {
        what: "cuda-gl's GL texture for wgpu has no name".into(),
    })?;
    let usage = wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_SRC;
    let desc = texture_descriptor(size, format, label, usage);
    let hal_desc = wgpu::hal::TextureDescriptor {
        label: desc.label,
        size: desc.size,
        mip_level_count: desc.mip_level_count,
        sample_count: desc.sample_count,
        dimension: desc.dimension,
        format: desc.format,
        // What wgpu-hal maps `desc.usage` to.
        usage: wgpu::TextureUses::RESOURCE | wgpu::TextureUses::COPY_SRC,
        memory_flags: wgpu::hal::MemoryFlags::empty(),
        view_formats: Vec::new(),
    };
    let kept = gl.clone();
    let hal_texture = {
        // SAFETY: the guard is used to wrap the texture (SAFETY G3) and dropped at once.
        let hal = unsafe { device.as_hal::<Gles>() }.ok_or_else(|| WgpuError::NotGl {
            call: "wgpu::Device::create_texture_from_hal (a GL texture of cuda-gl's)",
            what: "device",
            backend: format!("{:?}", device.adapter_info().backend),
        })?;
        // SAFETY: SAFETY G3 of the module docs: a 2-D texture of one level, `size` and
        // the internal format wgpu-hal gives `format`, made in the device's context; with a
        // drop callback wgpu-hal never deletes it, and the callback holds `gl` until wgpu is
        // done with the texture.
        unsafe { hal.texture_from_raw(name, &hal_desc, Some(Box::new(move || drop(kept)))) }
    };
    let texture = scoped(device, "wgpu::Device::create_texture_from_hal", || {
        // SAFETY: SAFETY G3: made in this device's context as `desc` says, and initialized
        // (cleared by CUDA before this); GL has no layouts to match (`UNINITIALIZED`).
        unsafe {
            device.create_texture_from_hal::<Gles>(
                hal_texture,
                &desc,
                wgpu::TextureUses::UNINITIALIZED,
            )
        }
    })?;
    match gl_name_of(&texture) {
        Some((raw, target)) if raw == name.get() && target == gl::TEXTURE_2D => Ok(texture),
        other => Err(Error::Internal {
            what: format!(
                "wgpu holds the GL frame texture {name} as {other:?}, not a GL_TEXTURE_2D of \
                 that name"
            ),
        }),
    }
}

/// The GL name and target of a texture of wgpu's GL backend (`TextureInner::Texture`), or
/// `None` for another backend, a renderbuffer, or a destroyed texture.
pub(super) fn gl_name_of(texture: &wgpu::Texture) -> Option<(u32, u32)> {
    // SAFETY: the guard is only read and dropped here (while it lives it holds wgpu's
    // destruction lock: SAFETY G5).
    let hal = unsafe { texture.as_hal::<Gles>() }?;
    match hal.inner {
        wgpu::hal::gles::TextureInner::Texture { raw, target } => Some((raw.0.get(), target)),
        _ => None,
    }
}
