//! The GL state an upload into a texture touches: [`UnpackState`] reads it, makes the
//! pixel-store and pixel-transfer state neutral and puts it all back; [`bind_checked`] binds an
//! object and reads the binding back. The display's uploads and the video planes' go through
//! these, so that no upload runs under the application's state.

use super::{Direction, GlFns, PixelState};
use crate::error::{Error, Result};

/// Binds `name` to `target` (a pixel unpack or copy write buffer, or a 2-D texture) and reads
/// the binding back: `Err` naming `call` when it did not take (a name the application deleted,
/// in a core profile, where binding it fails and leaves the application's object bound).
///
/// # Errors
/// [`Error::GlCall`].
pub(crate) fn bind_checked(fns: &GlFns, target: u32, name: u32, call: &'static str) -> Result<()> {
    let query = match target {
        gl::PIXEL_UNPACK_BUFFER => gl::PIXEL_UNPACK_BUFFER_BINDING,
        gl::COPY_WRITE_BUFFER => gl::COPY_WRITE_BUFFER_BINDING,
        _ => gl::TEXTURE_BINDING_2D,
    };
    let mut bound = -1;
    // SAFETY: a context is current (the callers checked the owner); binding any name is
    // allowed (a bad one raises an error); a valid out-pointer.
    unsafe {
        if target != gl::TEXTURE_2D {
            (fns.bind_buffer)(target, name);
        } else {
            (fns.bind_texture)(target, name);
        }
        (fns.get_integerv)(query, &mut bound);
    }
    if u32::try_from(bound) == Ok(name) {
        Ok(())
    } else {
        fns.drain_errors();
        Err(Error::GlCall {
            call,
            code: gl::INVALID_OPERATION,
        })
    }
}

/// The GL state an upload changes, read first and put back after: the bindings it makes, and
/// the application's pixel-store and pixel-transfer state ([`PixelState`]), made neutral.
pub(crate) struct UnpackState {
    buffer: i32,
    /// The copy write binding, where the upload writes a pixel buffer through it.
    copy_write: Option<i32>,
    texture: i32,
    pixels: PixelState,
}

impl UnpackState {
    /// Reads the state (with the copy write binding when `copy_write`: the upload writes a
    /// pixel buffer through it), then makes the pixel-store and pixel-transfer state neutral
    /// for tightly packed rows taken as they are.
    ///
    /// # Errors
    /// As [`PixelState::neutral`] (nothing is left changed then).
    pub(crate) fn neutral(fns: &GlFns, copy_write: bool) -> Result<UnpackState> {
        let mut state = UnpackState {
            buffer: 0,
            copy_write: None,
            texture: 0,
            pixels: PixelState::neutral(fns, Direction::Unpack)?,
        };
        // SAFETY: a context is current (the callers checked the owner); valid out-pointers.
        unsafe {
            (fns.get_integerv)(gl::PIXEL_UNPACK_BUFFER_BINDING, &mut state.buffer);
            if copy_write {
                let mut bound = 0;
                (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut bound);
                state.copy_write = Some(bound);
            }
            (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut state.texture);
        }
        Ok(state)
    }

    /// Puts back what [`neutral`](Self::neutral) read.
    pub(crate) fn restore(self, fns: &GlFns) {
        self.pixels.restore(fns);
        // SAFETY: a context is current; the values were read from it.
        unsafe {
            (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, self.buffer.max(0) as u32);
            if let Some(bound) = self.copy_write {
                (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, bound.max(0) as u32);
            }
            (fns.bind_texture)(gl::TEXTURE_2D, self.texture.max(0) as u32);
        }
    }
}
