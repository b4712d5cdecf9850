//! [`Offscreen`]: the colour target a headless program draws into and reads back, so that it
//! needs no framebuffer code of its own.

use crate::error::{Error, Result, UsageError};
use crate::gl_name::TextureName;
use crate::glapi::{Direction, GlFns, GlOwner, PixelState};
use std::marker::PhantomData;

/// An RGBA8 colour target of a given size in the GL context current when it was made: a
/// `GL_TEXTURE_2D` (one level, `GL_NEAREST` sampling) attached to a framebuffer object.
///
/// Draw into it after [`bind`](Self::bind), read it back with [`read_rgba8`](Self::read_rgba8),
/// or register its [`texture`](Self::texture) with CUDA
/// ([`RegisteredImage::register`](crate::RegisteredImage::register) with
/// [`ImageTarget::Texture2D`](crate::ImageTarget::Texture2D)), so that a kernel writes the
/// picture GL then reads or draws. It works in any GL context (a [`HeadlessContext`]'s, a
/// window's), through cuda-gl's own GL entry points: no GL crate needs loading for it.
///
/// Dropping it deletes the texture and the framebuffer when its context is current; with
/// another context (or none) current, it logs and leaks them instead, since deleting by name
/// there would delete another context's objects. Neither `Send` nor `Sync`: its GL calls go to
/// the context current on the calling thread.
///
/// [`HeadlessContext`]: super::HeadlessContext
#[derive(Debug)]
pub struct Offscreen {
    framebuffer: u32,
    texture: u32,
    width: u32,
    height: u32,
    owner: GlOwner,
    _not_send: PhantomData<*const ()>,
}

impl Offscreen {
    /// A complete framebuffer of `width` x `height` RGBA8 pixels (contents undefined until
    /// drawn). The state it changes (`GL_TEXTURE_2D` of the active unit, the draw and read
    /// framebuffers, the pixel unpack buffer) is restored; GL errors the application's calls
    /// left pending are taken (each logged as a warning), so that only its own are reported.
    ///
    /// The texture's storage is mutable (`glTexImage2D`, for OpenGL 3.x contexts): do not
    /// re-specify it while it is registered with CUDA.
    ///
    /// # Errors
    /// - [`UsageError::OffscreenSize`] for a zero size or one over `GL_MAX_TEXTURE_SIZE`;
    /// - [`Error::NoGlContext`] and the other errors of the owner check when no usable GL
    ///   context is current;
    /// - [`Error::GlCall`] when GL refuses the texture, or the framebuffer is incomplete (the
    ///   code is then `glCheckFramebufferStatus`'s).
    #[doc(alias = "glFramebufferTexture2D")]
    pub fn new(width: u32, height: u32) -> Result<Offscreen> {
        let (owner, fns) = GlOwner::current("Offscreen::new")?;
        let mut max = 0;
        // SAFETY: a context is current (checked above); a valid out-pointer.
        unsafe { (fns.get_integerv)(gl::MAX_TEXTURE_SIZE, &mut max) };
        let fits = |n: u32| n > 0 && i32::try_from(n).is_ok_and(|n| n <= max);
        if !fits(width) || !fits(height) {
            return Err(UsageError::OffscreenSize { width, height, max }.into());
        }
        fns.take_pending_errors("Offscreen::new");
        let mut target = Offscreen {
            framebuffer: 0,
            texture: 0,
            width,
            height,
            owner,
            _not_send: PhantomData,
        };
        let (w, h) = (width as i32, height as i32);
        let (mut texture_binding, mut draw, mut read, mut unpack_buffer) = (0, 0, 0, 0);
        // SAFETY: a context is current; valid out-pointers; the names are fresh and bound
        // before use; no unpack buffer is bound at the texture's making (`new_rgba8_texture`'s
        // 1: unbound just before); every binding changed is restored to the value read first.
        let status = unsafe {
            (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut texture_binding);
            (fns.get_integerv)(gl::DRAW_FRAMEBUFFER_BINDING, &mut draw);
            (fns.get_integerv)(gl::READ_FRAMEBUFFER_BINDING, &mut read);
            // A pixel unpack buffer would turn the null pixel pointer into an offset into it.
            (fns.get_integerv)(gl::PIXEL_UNPACK_BUFFER_BINDING, &mut unpack_buffer);
            if unpack_buffer != 0 {
                (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, 0);
            }
            target.texture = fns.new_rgba8_texture(w, h);
            for parameter in [gl::TEXTURE_MIN_FILTER, gl::TEXTURE_MAG_FILTER] {
                (fns.tex_parameteri)(gl::TEXTURE_2D, parameter, gl::NEAREST as i32);
            }
            (fns.bind_texture)(gl::TEXTURE_2D, texture_binding.max(0) as u32);
            if unpack_buffer != 0 {
                (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, unpack_buffer as u32);
            }
            (fns.gen_framebuffers)(1, &mut target.framebuffer);
            (fns.bind_framebuffer)(gl::FRAMEBUFFER, target.framebuffer);
            (fns.framebuffer_texture_2d)(
                gl::FRAMEBUFFER,
                gl::COLOR_ATTACHMENT0,
                gl::TEXTURE_2D,
                target.texture,
                0,
            );
            let status = (fns.check_framebuffer_status)(gl::FRAMEBUFFER);
            (fns.bind_framebuffer)(gl::DRAW_FRAMEBUFFER, draw.max(0) as u32);
            (fns.bind_framebuffer)(gl::READ_FRAMEBUFFER, read.max(0) as u32);
            status
        };
        fns.check("glTexImage2D (an offscreen target)")?;
        if status != gl::FRAMEBUFFER_COMPLETE {
            return Err(Error::GlCall {
                call: "glCheckFramebufferStatus (an offscreen target)",
                code: status,
            });
        }
        Ok(target)
    }

    /// The framebuffer object's name.
    pub fn framebuffer(&self) -> u32 {
        self.framebuffer
    }

    /// The colour texture's name: a `GL_TEXTURE_2D` of `GL_RGBA8`, one level.
    pub fn texture(&self) -> TextureName {
        TextureName(self.texture)
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Binds the framebuffer for drawing and reading (`GL_FRAMEBUFFER`), with the viewport
    /// covering it. Left bound: later draws go into it.
    ///
    /// # Errors
    /// The owner check's errors when its GL context is not current.
    pub fn bind(&self) -> Result<()> {
        let fns = self.owner.check("glBindFramebuffer (not called)")?;
        // SAFETY: the owning context is current and the framebuffer is one of its objects.
        unsafe {
            (fns.bind_framebuffer)(gl::FRAMEBUFFER, self.framebuffer);
            (fns.viewport)(0, 0, self.width as i32, self.height as i32);
        }
        Ok(())
    }

    /// The pixels, RGBA8, `width * height * 4` bytes, **bottom row first** (GL's order). Waits
    /// for the GL commands that draw into it. The pixels are read as stored: the application's
    /// pack state and, in a compatibility-profile context, its pixel-transfer state (scales,
    /// biases, colour maps and tables, the colour matrix, ...: the list is in the GL context
    /// guide) are made neutral for the read, and put back after it with the read framebuffer
    /// binding and the pixel pack buffer (after [`bind`](Self::bind), the read framebuffer
    /// stays this one). The colour texture is read whatever read buffer the application gave
    /// the framebuffer while it was bound (`glReadBuffer`), and that read buffer is put back.
    ///
    /// # Errors
    /// The owner check's errors when its GL context is not current; [`Error::GlCall`] when
    /// `glReadPixels` fails; [`Error::MissingGlFunction`] when a compatibility context's
    /// state cannot be made neutral for want of an entry point (nothing is read).
    #[doc(alias = "glReadPixels")]
    pub fn read_rgba8(&self) -> Result<Vec<u8>> {
        let fns = self.owner.check("glReadPixels (not called)")?;
        // Both sides are at most GL_MAX_TEXTURE_SIZE (checked by `new`): no overflow.
        let len = (self.width as usize)
            .saturating_mul(self.height as usize)
            .saturating_mul(4);
        let mut pixels = vec![0u8; len];
        fns.take_pending_errors("glReadPixels (an offscreen target)");
        read_into(fns, self, &mut pixels)?;
        fns.check("glReadPixels (an offscreen target)")?;
        Ok(pixels)
    }
}

/// `glReadPixels` of the whole target into `pixels`, with the application's pack and
/// pixel-transfer state made neutral for the read, and it and the bindings the read changes put
/// back after.
///
/// # Errors
/// As [`PixelState::neutral`] (nothing is read then).
fn read_into(fns: &GlFns, target: &Offscreen, pixels: &mut [u8]) -> Result<()> {
    // No pixel pack buffer is bound from here on (PixelState): the pointer is client memory.
    let state = PixelState::neutral(fns, Direction::Pack)?;
    let (mut read, mut read_buffer) = (0, gl::COLOR_ATTACHMENT0 as i32);
    // SAFETY: the owning context is current (callers); valid out-pointers. The framebuffer's
    // read buffer is its own state, which the application's `glReadBuffer` sets while it is
    // bound (after `bind`): the colour attachment for the read, the application's value back
    // after it. With no pixel pack buffer bound, the pack state neutral (tight rows, alignment
    // 1, nothing skipped, no swapping or inversion) and no pixel-transfer stage that could
    // change the pixels' count (convolution, histogram or minmax sinks are off), glReadPixels
    // writes `width * height * 4` bytes (RGBA8) into `pixels`, which has that size.
    unsafe {
        (fns.get_integerv)(gl::READ_FRAMEBUFFER_BINDING, &mut read);
        (fns.bind_framebuffer)(gl::READ_FRAMEBUFFER, target.framebuffer);
        (fns.get_integerv)(gl::READ_BUFFER, &mut read_buffer);
        if read_buffer != gl::COLOR_ATTACHMENT0 as i32 {
            (fns.read_buffer)(gl::COLOR_ATTACHMENT0);
        }
        (fns.read_pixels)(
            0,
            0,
            target.width as i32,
            target.height as i32,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            pixels.as_mut_ptr().cast(),
        );
        if read_buffer != gl::COLOR_ATTACHMENT0 as i32 {
            (fns.read_buffer)(read_buffer.max(0) as u32);
        }
        (fns.bind_framebuffer)(gl::READ_FRAMEBUFFER, read.max(0) as u32);
    }
    state.restore(fns);
    Ok(())
}

impl Drop for Offscreen {
    fn drop(&mut self) {
        match self.owner.check("glDeleteFramebuffers (not called)") {
            // SAFETY: both names came from `new` and are deleted once (0 is ignored), with
            // their context current (checked).
            Ok(fns) => unsafe {
                (fns.delete_framebuffers)(1, &self.framebuffer);
                (fns.delete_textures)(1, &self.texture);
            },
            Err(e) => log::error!(
                "cuda-gl: offscreen target (framebuffer {}, texture {}) leaked, not deleted: {e}",
                self.framebuffer,
                self.texture
            ),
        }
    }
}

#[cfg(test)]
mod tests;
