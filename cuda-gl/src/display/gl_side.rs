//! The GL objects of a display target: its texture and, for the staged mode, the pixel buffer
//! frames are uploaded from. Made, filled and deleted through cuda-gl's own GL table, with the
//! owning context checked first; leaked (not deleted) when another context is current.
//!
//! Both are claimed from birth until they are deleted (or leaked, and then for good), as
//! cuda-gl's other GL objects are: no registration of the application's can map them while
//! the target fills or deletes them.

use super::Format;
use super::gl_upload::UnpackState;
use crate::error::{Error, Result, UsageError};
use crate::gl_object::{ImageTarget, Kind};
use crate::glapi::{GlFns, GlOwner, claim};

/// The texture (and pixel buffer) of one size and format.
#[derive(Debug)]
pub(super) struct GlSide {
    pub(super) owner: GlOwner,
    pub(super) texture: u32,
    /// The pixel unpack buffer: interop's pixel frames are drawn into it (registered with
    /// CUDA), the staged mode on NVIDIA's GL uploads through it (see
    /// [`staged_through_buffer`]); 0 without one.
    pub(super) pbo: u32,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) format: Format,
    /// The claims on the texture and the pixel buffer.
    claims: Vec<claim::Claim>,
}

/// The pixel buffer a display target's texture has beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PixelBuffer {
    /// None.
    None,
    /// One frame of `glBufferData` storage, for CUDA to register (interop's pixels).
    Registered,
    /// One frame of `glBufferData` storage that GL writes each band into
    /// (`glBufferSubData`): the staged mode's on NVIDIA's GL (see [`staged_through_buffer`]).
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
    /// `fns`), with a pixel buffer of one frame when `pbo`. Immutable storage
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
            width,
            height,
            format,
            claims: Vec::new(),
        };
        let (internal, pixel_format, ty) = format.gl();
        let (w, h) = (width as i32, height as i32);
        let state = UnpackState::neutral(fns, false);
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
            if pbo != PixelBuffer::None {
                // Binding a generated name makes the buffer; it gets one frame of storage now,
                // so that CUDA can register it (interop) or GL write bands into it (staged).
                (fns.gen_buffers)(1, &mut side.pbo);
                (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, side.pbo);
                (fns.buffer_data)(
                    gl::PIXEL_UNPACK_BUFFER,
                    side.frame_bytes() as isize,
                    std::ptr::null(),
                    match pbo {
                        PixelBuffer::Written => gl::DYNAMIC_DRAW,
                        _ => gl::STREAM_DRAW,
                    },
                );
            }
        }
        state.restore(fns);
        // On failure, `side` is dropped here and deletes what was made.
        fns.check("glTexStorage2D / glBufferData (a display target)")?;
        let objects = [
            (Kind::Image(ImageTarget::Texture2D), side.texture),
            (Kind::Buffer, side.pbo),
        ];
        for (kind, name) in objects.into_iter().filter(|&(_, name)| name != 0) {
            // A name just made is claimed by no one, unless a context sharing this one's
            // objects registered it in the moment since: then it is left to that one.
            let Some(claim) = claim::claim(kind, name, owner) else {
                if kind == Kind::Buffer {
                    side.pbo = 0;
                } else {
                    side.texture = 0;
                }
                return Err(Error::AlreadyRegistered {
                    name,
                    kind: kind.describe().to_string(),
                });
            };
            side.claims.push(claim);
        }
        Ok(side)
    }

    /// One frame's row bytes and rows, tightly packed.
    pub(super) fn frame_shape(&self) -> (usize, usize) {
        (
            self.width as usize * self.format.bytes_per_pixel(),
            self.height as usize,
        )
    }

    /// Whether there is a pixel buffer: interop's, or the one the staged mode writes its bands
    /// into on NVIDIA's GL.
    pub(super) fn has_pixel_buffer(&self) -> bool {
        self.pbo != 0
    }

    /// The bytes of one frame, tightly packed.
    pub(super) fn frame_bytes(&self) -> usize {
        self.width as usize * self.height as usize * self.format.bytes_per_pixel()
    }
}

/// Whether staged frames go through a pixel buffer in the current context (of `fns`):
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
    /// Leaks the texture and the pixel buffer: never deleted, claimed for good (the driver may
    /// still hold the texture mapped).
    pub(super) fn leak(&mut self) {
        log::error!(
            "cuda-gl: display target's texture {} and pixel buffer {} leaked: CUDA may still \
             hold them",
            self.texture,
            self.pbo
        );
        std::mem::forget(std::mem::take(&mut self.claims));
        self.texture = 0;
        self.pbo = 0;
    }
}

impl Drop for GlSide {
    fn drop(&mut self) {
        if self.texture == 0 && self.pbo == 0 {
            // Leaked (`leak`), or never made.
            return;
        }
        match self.owner.check("glDeleteTextures (not called)") {
            // SAFETY: the names came from `create` and are deleted once (0 is ignored), with
            // their context current (checked).
            Ok(fns) => unsafe {
                (fns.delete_textures)(1, &self.texture);
                (fns.delete_buffers)(1, &self.pbo);
            },
            Err(e) => {
                log::error!(
                    "cuda-gl: display target's texture {} and pixel buffer {} leaked, not \
                     deleted: {e}",
                    self.texture,
                    self.pbo
                );
                // The objects live on: they stay claimed, so they are never registered.
                std::mem::forget(std::mem::take(&mut self.claims));
            }
        }
        // The claims end here, once the objects are deleted.
    }
}
