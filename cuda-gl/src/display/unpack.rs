//! What every upload into a display target's texture shares: the rows of a band, and the
//! application's unpack state (bindings, pixel-store and pixel-transfer state), read first and
//! put back after.

use crate::error::Result;
use crate::glapi::{Direction, GlFns, PixelState};

/// Rows of a frame: an upload's band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rows {
    /// The first row.
    pub(super) first: usize,
    /// How many rows.
    pub(super) count: usize,
}

impl Rows {
    /// Whether `bands` cover `height` rows in order: each starting where the last ended,
    /// together every row once.
    pub(super) fn cover(bands: &[Rows], height: usize) -> bool {
        let mut next = 0;
        for b in bands {
            if b.first != next {
                return false;
            }
            next += b.count;
        }
        next == height
    }
}

/// The GL state an upload changes, read first and put back after: the bindings it makes, and
/// the application's pixel-store and pixel-transfer state ([`PixelState`]), made neutral.
pub(super) struct UnpackState {
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
    pub(super) fn neutral(fns: &GlFns, copy_write: bool) -> Result<UnpackState> {
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

    pub(super) fn restore(self, fns: &GlFns) {
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
