//! The application's unpack state, read first and put back after every upload into a display
//! target's texture.

use crate::glapi::GlFns;

/// The GL state an upload changes, read first and put back after.
pub(super) struct UnpackState {
    buffer: i32,
    /// The copy write binding, where the upload writes a pixel buffer through it.
    copy_write: Option<i32>,
    texture: i32,
    alignment: i32,
    row_length: i32,
    skip_rows: i32,
    skip_pixels: i32,
    swap_bytes: i32,
}

impl UnpackState {
    /// Reads the state (with the copy write binding when `copy_write`: the upload writes a
    /// pixel buffer through it), then sets the unpack parameters for tightly packed rows.
    pub(super) fn neutral(fns: &GlFns, copy_write: bool) -> UnpackState {
        let mut state = UnpackState {
            buffer: 0,
            copy_write: None,
            texture: 0,
            alignment: 4,
            row_length: 0,
            skip_rows: 0,
            skip_pixels: 0,
            swap_bytes: 0,
        };
        // SAFETY: a context is current (the callers checked the owner); valid out-pointers;
        // the values set are valid for these parameters.
        unsafe {
            (fns.get_integerv)(gl::PIXEL_UNPACK_BUFFER_BINDING, &mut state.buffer);
            if copy_write {
                let mut bound = 0;
                (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut bound);
                state.copy_write = Some(bound);
            }
            (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut state.texture);
            (fns.get_integerv)(gl::UNPACK_ALIGNMENT, &mut state.alignment);
            (fns.get_integerv)(gl::UNPACK_ROW_LENGTH, &mut state.row_length);
            (fns.get_integerv)(gl::UNPACK_SKIP_ROWS, &mut state.skip_rows);
            (fns.get_integerv)(gl::UNPACK_SKIP_PIXELS, &mut state.skip_pixels);
            (fns.get_integerv)(gl::UNPACK_SWAP_BYTES, &mut state.swap_bytes);
            (fns.pixel_storei)(gl::UNPACK_ALIGNMENT, 1);
            (fns.pixel_storei)(gl::UNPACK_ROW_LENGTH, 0);
            (fns.pixel_storei)(gl::UNPACK_SKIP_ROWS, 0);
            (fns.pixel_storei)(gl::UNPACK_SKIP_PIXELS, 0);
            (fns.pixel_storei)(gl::UNPACK_SWAP_BYTES, 0);
        }
        state
    }

    pub(super) fn restore(&self, fns: &GlFns) {
        // SAFETY: a context is current; the values were read from it.
        unsafe {
            (fns.pixel_storei)(gl::UNPACK_ALIGNMENT, self.alignment);
            (fns.pixel_storei)(gl::UNPACK_ROW_LENGTH, self.row_length);
            (fns.pixel_storei)(gl::UNPACK_SKIP_ROWS, self.skip_rows);
            (fns.pixel_storei)(gl::UNPACK_SKIP_PIXELS, self.skip_pixels);
            (fns.pixel_storei)(gl::UNPACK_SWAP_BYTES, self.swap_bytes);
            (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, self.buffer.max(0) as u32);
            if let Some(bound) = self.copy_write {
                (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, bound.max(0) as u32);
            }
            (fns.bind_texture)(gl::TEXTURE_2D, self.texture.max(0) as u32);
        }
    }
}
