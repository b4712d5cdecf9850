//! The GL objects of a display target: its texture and the pixel buffers beside it (interop's
//! registered one; the staged mode's one per band on NVIDIA's GL). Made, filled and deleted through cuda-gl's own GL table, with the
//! owning context checked first; leaked (not deleted) when another context is current.
//!
//! Both are claimed from birth until they are deleted (or leaked, and then for good), as
//! cuda-gl's other GL objects are: no registration of the application's can map them while
//! the target fills or deletes them. And both are labelled with the target's own label, asked
//! for before each GL write and before the deletion: a name the application deleted may name
//! its own next object, which the target must neither fill nor delete.

use super::Format;
use super::unpack::{Rows, UnpackState};
use crate::error::{Error, Result, UsageError};
use crate::gl_object::{ImageTarget, Kind};
use crate::glapi::{GlFns, GlOwner, claim, label};
use std::sync::atomic::{AtomicU64, Ordering};

/// The number in the next display target's label: no two sides share one.
static NEXT_LABEL: AtomicU64 = AtomicU64::new(1);

/// The texture (and pixel buffers) of one size and format.
#[derive(Debug)]
pub(super) struct GlSide {
    pub(super) owner: GlOwner,
    pub(super) texture: u32,
    /// Interop's pixel buffer of one frame, which pixel frames are drawn into (registered
    /// with CUDA); 0 without one.
    pub(super) pbo: u32,
    /// The staged mode's pixel buffers on NVIDIA's GL, one per band, each written whole and
    /// uploaded from (see [`staged_through_buffer`]); made by
    /// [`make_band_buffers`](Self::make_band_buffers), empty until then and in other modes.
    pub(super) band_buffers: Vec<u32>,
    /// Which pixel buffer the target was made with.
    pub(super) pixel_buffer: PixelBuffer,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) format: Format,
    /// The claims on the texture and the pixel buffers.
    claims: Vec<claim::Claim>,
    /// The label of every object of this side (`cuda-gl display target <n>`); `None` in a
    /// context without object labels (before OpenGL 4.3 without `GL_KHR_debug`), where cuda-gl's
    /// owner check refuses the target's calls anyway.
    label: Option<String>,
}

/// A kind of object of a side, as labels and the error name it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Object {
    Texture,
    Buffer,
}

/// The pixel buffer a display target's texture has beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PixelBuffer {
    /// None.
    None,
    /// One frame of `glBufferData` storage, for CUDA to register (interop's pixels).
    Registered,
    /// A buffer per band that GL writes the band into whole (`glBufferSubData`) and uploads
    /// it from: the staged mode's on NVIDIA's GL (see [`staged_through_buffer`]). NVIDIA's GL
    /// wrote bands into one frame-sized buffer at offsets at 1.6x the cost (1,534 against 947
    /// µs a 1080p frame on the H200: docs/benchmarks.md).
    Written,
}

/// Refuses a zero side or one over `GL_MAX_TEXTURE_SIZE` of the current context (of `fns`).
///
/// # Errors
/// [`UsageError::TargetSize`].
pub(super) fn check_size(fns: &GlFns, width: u32, height: u32) -> Result<()> {
    let mut max = 0;
    // SAFETY: a context is current (the callers checked the owner); a valid out-pointer.
    unsafe { (fns.get_integerv)(gl::MAX_TEXTURE_SIZE, &mut max) };
    let fits = |n: u32| n > 0 && i32::try_from(n).is_ok_and(|n| n <= max);
    if fits(width) && fits(height) {
        Ok(())
    } else {
        Err(UsageError::TargetSize { width, height, max }.into())
    }
}

impl GlSide {
    /// A `width` x `height` texture of `format` in the current context (`owner`, whose table is
    /// `fns`), with interop's pixel buffer of one frame when `pbo` is
    /// [`PixelBuffer::Registered`] (a staged target's buffers come with its bands:
    /// [`make_band_buffers`](Self::make_band_buffers)). Immutable storage
    /// (`glTexStorage2D`) where the context has it (OpenGL 4.2), so that no GL call can give
    /// the registered texture other storage. The caller has checked the size ([`check_size`]).
    ///
    /// # Errors
    /// [`Error::GlCall`](crate::Error::GlCall) when GL refuses the texture or the buffer.
    pub(super) fn create(
        owner: GlOwner,
        fns: &GlFns,
        width: u32,
        height: u32,
        format: Format,
        pbo: PixelBuffer,
    ) -> Result<GlSide> {
        fns.drain_errors();
        let mut side = GlSide {
            owner,
            texture: 0,
            pbo: 0,
            band_buffers: Vec::new(),
            pixel_buffer: pbo,
            width,
            height,
            format,
            claims: Vec::new(),
            label: (label::has_labels(fns)
                && fns.object_label.is_some()
                && fns.get_object_label.is_some())
            .then(|| {
                format!(
                    "cuda-gl display target {}",
                    NEXT_LABEL.fetch_add(1, Ordering::Relaxed)
                )
            }),
        };
        let (internal, pixel_format, ty) = format.gl();
        let (w, h) = (width as i32, height as i32);
        let state = UnpackState::neutral(fns, false)?;
        let storage = fns.tex_storage_2d.filter(|_| fns.version() >= (4, 2));
        // SAFETY: a context is current; the names are fresh and bound before use; with no
        // unpack buffer bound (below) a null pixel pointer asks for storage only; the state
        // changed is restored after.
        unsafe {
            (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, 0);
            (fns.gen_textures)(1, &mut side.texture);
            (fns.bind_texture)(gl::TEXTURE_2D, side.texture);
            match storage {
                Some(storage) => storage(gl::TEXTURE_2D, 1, internal, w, h),
                None => (fns.tex_image_2d)(
                    gl::TEXTURE_2D,
                    0,
                    internal as i32,
                    w,
                    h,
                    0,
                    pixel_format,
                    ty,
                    std::ptr::null(),
                ),
            }
            for (parameter, value) in [
                (gl::TEXTURE_MIN_FILTER, gl::NEAREST),
                (gl::TEXTURE_MAG_FILTER, gl::NEAREST),
                (gl::TEXTURE_MAX_LEVEL, 0),
            ] {
                (fns.tex_parameteri)(gl::TEXTURE_2D, parameter, value as i32);
            }
            if format.one_channel() {
                for swizzle in [
                    gl::TEXTURE_SWIZZLE_R,
                    gl::TEXTURE_SWIZZLE_G,
                    gl::TEXTURE_SWIZZLE_B,
                ] {
                    (fns.tex_parameteri)(gl::TEXTURE_2D, swizzle, gl::RED as i32);
                }
                (fns.tex_parameteri)(gl::TEXTURE_2D, gl::TEXTURE_SWIZZLE_A, gl::ONE as i32);
            }
            if pbo == PixelBuffer::Registered {
                // Binding a generated name makes the buffer; it gets one frame of storage now,
                // so that CUDA can register it.
                (fns.gen_buffers)(1, &mut side.pbo);
                (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, side.pbo);
                (fns.buffer_data)(
                    gl::PIXEL_UNPACK_BUFFER,
                    side.frame_bytes() as isize,
                    std::ptr::null(),
                    gl::STREAM_DRAW,
                );
            }
        }
        state.restore(fns);
        // Labelled before anything can fail, so that the drop below knows them for the side's.
        side.mark(fns, Object::Texture, side.texture);
        side.mark(fns, Object::Buffer, side.pbo);
        if side.texture != 0 && !side.is_own(fns, Object::Texture, side.texture) {
            // A label that did not take would refuse every frame and leak every object: the
            // side goes without (as in a context without labels).
            log::warn!(
                "cuda-gl: glObjectLabel did not label display texture {}: a name the \
                 application deletes cannot be told from its next object",
                side.texture
            );
            side.label = None;
        }
        // On failure, `side` is dropped here and deletes what was made.
        fns.check("glTexStorage2D / glBufferData (a display target)")?;
        let objects = [
            (Kind::Image(ImageTarget::Texture2D), side.texture),
            (Kind::Buffer, side.pbo),
        ];
        for (kind, name) in objects.into_iter().filter(|&(_, name)| name != 0) {
            side.claim(kind, name)?;
        }
        Ok(side)
    }

    /// Claims `name`, just made by this side. A name just made is claimed by no one, unless a
    /// context sharing this one's objects registered it in the moment since: then it is left
    /// to that one (forgotten here, never deleted).
    ///
    /// # Errors
    /// [`Error::AlreadyRegistered`] in that case.
    fn claim(&mut self, kind: Kind, name: u32) -> Result<()> {
        let Some(claim) = claim::claim(kind, name, self.owner) else {
            if kind != Kind::Buffer {
                self.texture = 0;
            } else if self.pbo == name {
                self.pbo = 0;
            } else {
                self.band_buffers.retain(|&b| b != name);
            }
            return Err(Error::AlreadyRegistered {
                name,
                kind: kind.describe().to_string(),
            });
        };
        self.claims.push(claim);
        Ok(())
    }

    /// Makes the staged mode's pixel buffers on NVIDIA's GL ([`PixelBuffer::Written`]): one
    /// per band of `bands`, each of the band's bytes, claimed as the texture is. Does nothing
    /// for a target made with another [`PixelBuffer`], or when the buffers are made already.
    /// Called once per side, by the staged state's constructor, which drops the side on an
    /// error (so a side is never used with part of its buffers).
    ///
    /// # Errors
    /// The owner check's errors when the target's context is not current;
    /// [`Error::GlCall`](crate::Error::GlCall) when GL refuses a buffer;
    /// [`Error::AlreadyRegistered`] as [`create`](Self::create). The buffers made so far are
    /// deleted with the side, but for one another context registered in the moment between
    /// its making and its claim: that one is left to it, as `create` leaves its objects.
    pub(super) fn make_band_buffers(&mut self, bands: &[Rows]) -> Result<()> {
        if self.pixel_buffer != PixelBuffer::Written || !self.band_buffers.is_empty() {
            return Ok(());
        }
        let fns = self.owner.check("glBufferData (a display band's buffer)")?;
        fns.drain_errors();
        let (row, _) = self.frame_shape();
        let mut saved = 0;
        // SAFETY: a context is current (checked); a valid out-pointer.
        unsafe { (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut saved) };
        for rows in bands {
            let mut name = 0;
            // SAFETY: a context is current; binding a generated name makes the buffer, given
            // the band's bytes of storage with no data; the application's copy write binding
            // is put back below.
            unsafe {
                (fns.gen_buffers)(1, &mut name);
                (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, name);
                (fns.buffer_data)(
                    gl::COPY_WRITE_BUFFER,
                    (rows.count * row) as isize,
                    std::ptr::null(),
                    gl::DYNAMIC_DRAW,
                );
            }
            if name != 0 {
                self.mark(fns, Object::Buffer, name);
                self.band_buffers.push(name);
            }
        }
        // Read before the binding is put back, so that the error is the making's.
        let made = fns.check("glBufferData (a display band's buffer)");
        // SAFETY: a context is current; the name was read from it. A name another context of
        // the share group deleted since is refused with an error, drained here: the binding
        // then stays on the last band buffer, whose deletion (with the side) unbinds it.
        unsafe { (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, saved.max(0) as u32) };
        fns.drain_errors();
        // On failure the buffers made are deleted with the side.
        made?;
        if self.band_buffers.len() != bands.len() {
            return Err(Error::Internal {
                what: "glGenBuffers gave no name for a display band's buffer".into(),
            });
        }
        for name in self.band_buffers.clone() {
            self.claim(Kind::Buffer, name)?;
        }
        Ok(())
    }

    /// Labels `name` (0: none), an object of this side just made, with the side's label.
    fn mark(&self, fns: &GlFns, object: Object, name: u32) {
        if let (Some(text), true) = (&self.label, name != 0) {
            // The side has a label only where `glObjectLabel` was found.
            let _ = label::label(fns, object.identifier(), name, text);
        }
    }

    /// Whether `name` still names this side's object: it has the side's label (always true
    /// without labels). False once the application deleted it, whatever GL made of the name
    /// since.
    pub(super) fn is_own(&self, fns: &GlFns, object: Object, name: u32) -> bool {
        let Some(text) = &self.label else {
            return true;
        };
        let is = match object {
            Object::Texture => fns.is_texture,
            Object::Buffer => fns.is_buffer,
        };
        // The side has a label only in a context with labels, and the owner check admits no
        // other context.
        label::is_labelled(fns, object.identifier(), name, is, text)
    }

    /// [`is_own`](Self::is_own) as a `Result`, before a GL call writes the object.
    ///
    /// # Errors
    /// [`UsageError::DisplayObjectReplaced`] when it is not.
    pub(super) fn check_own(&self, fns: &GlFns, object: Object, name: u32) -> Result<()> {
        if self.is_own(fns, object, name) {
            return Ok(());
        }
        let object = match object {
            Object::Texture => "texture",
            Object::Buffer => "pixel buffer",
        };
        Err(UsageError::DisplayObjectReplaced { object, name }.into())
    }

    /// One frame's row bytes and rows, tightly packed.
    pub(super) fn frame_shape(&self) -> (usize, usize) {
        (
            self.width as usize * self.format.bytes_per_pixel(),
            self.height as usize,
        )
    }

    /// Whether staged frames go through a pixel buffer per band ([`PixelBuffer::Written`]).
    pub(super) fn writes_band_buffers(&self) -> bool {
        self.pixel_buffer == PixelBuffer::Written
    }

    /// The bytes of one frame, tightly packed.
    pub(super) fn frame_bytes(&self) -> usize {
        self.width as usize * self.height as usize * self.format.bytes_per_pixel()
    }
}

impl Object {
    /// The object's namespace for `glObjectLabel`.
    fn identifier(self) -> u32 {
        match self {
            Object::Texture => gl::TEXTURE,
            Object::Buffer => gl::BUFFER,
        }
    }
}

/// Whether staged frames go through pixel buffers in the current context (of `fns`):
/// on NVIDIA's GL the upload from a buffer is the GPU's copy, which runs in GL's order while
/// the CPU goes on, where an upload from client memory costs ten times the copy (1,966 µs for
/// a 1920x1080 RGBA8 frame on the H200); on any other GL (Mesa's llvmpipe, a laptop's
/// integrated GPU, VirtualGL) the frame is uploaded straight from pinned memory, one CPU copy
/// fewer where GL copies on the CPU anyway.
pub(super) fn staged_through_buffer(fns: &GlFns) -> bool {
    // GL_VENDOR only: Mesa's drivers over an NVIDIA GPU (zink, WSL2's d3d12) name it in
    // GL_RENDERER, and they are GL that copies on the CPU.
    fns.string(gl::VENDOR)
        .is_some_and(|vendor| vendor.to_ascii_uppercase().starts_with("NVIDIA"))
}

impl GlSide {
    /// Leaks the texture and the pixel buffers: never deleted, claimed for good (the driver
    /// may still hold the texture mapped).
    pub(super) fn leak(&mut self) {
        log::error!(
            "cuda-gl: display target's texture {} and pixel buffers {} {:?} leaked: CUDA may \
             still hold them",
            self.texture,
            self.pbo,
            self.band_buffers
        );
        std::mem::forget(std::mem::take(&mut self.claims));
        self.texture = 0;
        self.pbo = 0;
        self.band_buffers.clear();
    }
}

impl Drop for GlSide {
    fn drop(&mut self) {
        if self.texture == 0 && self.pbo == 0 && self.band_buffers.is_empty() {
            // Leaked (`leak`), or never made.
            return;
        }
        match self.owner.check("glDeleteTextures (not called)") {
            Ok(fns) => {
                // A name the application deleted may name its own object now: left alone.
                let own = |object, name| name != 0 && self.is_own(fns, object, name);
                let texture = own(Object::Texture, self.texture).then_some(self.texture);
                let buffers: Vec<u32> = std::iter::once(self.pbo)
                    .chain(self.band_buffers.iter().copied())
                    .filter(|&name| own(Object::Buffer, name))
                    .collect();
                let buffers_made = usize::from(self.pbo != 0) + self.band_buffers.len();
                if (self.texture != 0 && texture.is_none()) || buffers.len() != buffers_made {
                    log::warn!(
                        "cuda-gl: display target's texture {} and pixel buffers {} {:?}: only \
                         {texture:?} and {buffers:?} are still the target's (the application \
                         deleted or relabelled the others); those alone are deleted",
                        self.texture,
                        self.pbo,
                        self.band_buffers
                    );
                }
                // SAFETY: the names came from `create` and `make_band_buffers`, still name the
                // side's objects (labelled) and are deleted once, with their context current
                // (checked); the count is the vector's own (at most 33 names).
                unsafe {
                    (fns.delete_textures)(1, &texture.unwrap_or(0));
                    (fns.delete_buffers)(buffers.len() as i32, buffers.as_ptr());
                }
            }
            Err(e) => {
                log::error!(
                    "cuda-gl: display target's texture {} and pixel buffers {} {:?} leaked, \
                     not deleted: {e}",
                    self.texture,
                    self.pbo,
                    self.band_buffers
                );
                // The objects live on: they stay claimed, so they are never registered.
                std::mem::forget(std::mem::take(&mut self.claims));
            }
        }
        // The claims end here, once the objects are deleted.
    }
}
