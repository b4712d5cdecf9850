//! [`TextureObject`]: a 2-D GL texture that cuda-gl makes, claims, labels and deletes (or
//! leaks) with its context current: a display target's texture, or (feature `wgpu-gl`) a
//! texture that cuda-gl hands wgpu on wgpu's GL backend (a wgpu target's frame texture, the
//! wgpu video planes' plane textures).

use super::{Label, Object};
use crate::error::{Error, Result};
use crate::gl_object::{ImageTarget, Kind};
use crate::glapi::UnpackState;
use crate::glapi::{GlFns, GlOwner, claim};

/// A GL texture of cuda-gl's: one level of a size and a GL format, claimed from birth until it
/// is deleted (or leaked, and then for good), labelled as its target's objects are.
#[derive(Debug)]
pub(crate) struct TextureObject {
    pub(super) owner: GlOwner,
    pub(super) name: u32,
    /// The claim on the texture (none once leaked, or when another context claimed it first).
    claims: Vec<claim::Claim>,
    pub(super) label: Label,
}

impl TextureObject {
    /// A 2-D texture of `(width, height)` and GL's `(internal format, pixel format, type)`,
    /// one level, in the current context (`owner`, whose table is `fns`). Immutable storage
    /// (`glTexStorage2D`) where the context has it (OpenGL 4.2), so that no GL call can give a
    /// registered texture other storage. With `grey`, the swizzle reads red into green and
    /// blue, and alpha as 1 (a one-channel display texture's); without, GL's own (a wgpu
    /// texture's, which wgpu samples as it made it). The caller has checked the size
    /// ([`check_size`](super::check_size), or the wgpu device's limit, which wgpu-hal takes
    /// from `GL_MAX_TEXTURE_SIZE`).
    ///
    /// # Errors
    /// [`Error::GlCall`](crate::Error::GlCall) when GL refuses the texture;
    /// [`Error::AlreadyRegistered`] when another context registered its name in the moment
    /// since it was made (it is left to that one, never deleted).
    pub(crate) fn create(
        owner: GlOwner,
        fns: &GlFns,
        (width, height): (u32, u32),
        (internal, pixel_format, ty): (u32, u32, u32),
        grey: bool,
    ) -> Result<TextureObject> {
        fns.take_pending_errors("glTexStorage2D (a texture of cuda-gl's)");
        let mut texture = TextureObject {
            owner,
            name: 0,
            claims: Vec::new(),
            label: Label::next(fns),
        };
        let (w, h) = (width as i32, height as i32);
        let state = UnpackState::neutral(fns, false)?;
        let storage = fns.tex_storage_2d.filter(|_| fns.version() >= (4, 2));
        // SAFETY: a context is current; the name is fresh and bound before use; with no
        // unpack buffer bound (below) a null pixel pointer asks for storage only; the state
        // changed is restored after.
        unsafe {
            (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, 0);
            (fns.gen_textures)(1, &mut texture.name);
            (fns.bind_texture)(gl::TEXTURE_2D, texture.name);
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
            if grey {
                for swizzle in [
                    gl::TEXTURE_SWIZZLE_R,
                    gl::TEXTURE_SWIZZLE_G,
                    gl::TEXTURE_SWIZZLE_B,
                ] {
                    (fns.tex_parameteri)(gl::TEXTURE_2D, swizzle, gl::RED as i32);
                }
                (fns.tex_parameteri)(gl::TEXTURE_2D, gl::TEXTURE_SWIZZLE_A, gl::ONE as i32);
            }
        }
        state.restore(fns);
        // Labelled before anything can fail, so that the drop below knows it for the target's.
        texture.label.mark(fns, Object::Texture, texture.name);
        if texture.name != 0 && !texture.label.is_own(fns, Object::Texture, texture.name) {
            // A label that did not take would refuse every frame and leak every object: the
            // target goes without (as in a context without labels).
            log::warn!(
                "cuda-gl: glObjectLabel did not label GL texture {}: a name the \
                 application deletes cannot be told from its next object",
                texture.name
            );
            texture.label = Label(None);
        }
        // On failure, `texture` is dropped here and deletes what was made.
        fns.check("glTexStorage2D (a texture of cuda-gl's)")?;
        if texture.name != 0 {
            let Some(claim) =
                claim::claim(Kind::Image(ImageTarget::Texture2D), texture.name, owner)
            else {
                // Registered by a context sharing this one's objects in the moment since: left
                // to that one (forgotten here, never deleted).
                let name = std::mem::take(&mut texture.name);
                return Err(Error::AlreadyRegistered {
                    name,
                    kind: Kind::Image(ImageTarget::Texture2D).describe().to_string(),
                });
            };
            texture.claims.push(claim);
        }
        Ok(texture)
    }

    /// The texture's GL name.
    pub(crate) fn name(&self) -> u32 {
        self.name
    }

    /// Refuses `call` unless the texture's GL context is current on this thread.
    ///
    /// # Errors
    /// As [`GlOwner::check`]: [`Error::NoGlContext`], [`Error::WrongGlContext`],
    /// [`Error::GlContextGone`], [`Error::GlPlatformUnknown`].
    #[cfg(feature = "wgpu-gl")]
    pub(crate) fn check_current(&self, call: &'static str) -> Result<()> {
        self.owner.check(call).map(|_| ())
    }

    /// Leaks the texture: never deleted, claimed for good (the driver may still hold it
    /// mapped).
    pub(super) fn leak(&mut self) {
        if self.name == 0 {
            return;
        }
        log::error!(
            "cuda-gl: GL texture {} of cuda-gl's leaked: CUDA may still hold it",
            self.name
        );
        std::mem::forget(std::mem::take(&mut self.claims));
        self.name = 0;
    }
}

impl Drop for TextureObject {
    fn drop(&mut self) {
        if self.name == 0 {
            // Leaked (`leak`), or never made.
            return;
        }
        match self.owner.check("glDeleteTextures (not called)") {
            // A name the application deleted may name its own object now: left alone.
            Ok(fns) if !self.label.is_own(fns, Object::Texture, self.name) => log::warn!(
                "cuda-gl: GL texture {} of cuda-gl's is no longer its own (the \
                 application deleted or relabelled it): not deleted",
                self.name
            ),
            // SAFETY: the name came from `create`, still names the target's texture
            // (labelled) and is deleted once, with its context current (checked).
            Ok(fns) => unsafe { (fns.delete_textures)(1, &self.name) },
            Err(e) => {
                log::error!(
                    "cuda-gl: GL texture {} of cuda-gl's leaked, not deleted: {e}",
                    self.name
                );
                // The texture lives on: it stays claimed, so it is never registered.
                std::mem::forget(std::mem::take(&mut self.claims));
            }
        }
        // The claim ends here, once the texture is deleted.
    }
}
