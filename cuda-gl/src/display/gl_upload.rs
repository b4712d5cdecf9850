//! How frames reach a display target's texture: band by band from client memory, through a
//! pixel buffer per band (the staged mode on NVIDIA's GL), or from a whole-frame GL buffer,
//! with the application's unpack state read first and put back after, and every binding read
//! back before it is relied on.

use super::gl_side::{GlSide, Object};
use super::unpack::{Rows, UnpackState};
use crate::error::{Error, Result};
use crate::glapi::{Fence, GlFns};
use std::time::Instant;

impl GlSide {
    /// Uploads a tightly packed frame into the texture band by band: `bands[k]` rows come
    /// from `band(k)`, asked for in order, so that a band's bytes may still be arriving while
    /// the bands before it are handled. Straight from each band's bytes when the side has no
    /// band buffers (`glTexSubImage2D` of the band's rows reads client memory before it
    /// returns); with them (NVIDIA's GL), each band is written whole into its own buffer
    /// (`glBufferSubData` copies the bytes before it returns) and its rows uploaded from it, in
    /// GL's order, after waiting for `last_upload` (the fence of the frame before's uploads,
    /// which read the buffers) until `deadline`, so that GL neither stalls nor copies aside a
    /// buffer still being read; `last_upload` is then this frame's fence. Either way each
    /// band's bytes may be reused once `band` is asked for the next one or this returns.
    ///
    /// # Errors
    /// `band`'s errors (the bands before it are uploaded); the owner check's errors when the
    /// target's context is not current; [`Error::GlCall`](crate::Error::GlCall) when GL
    /// refuses an upload or a buffer's binding (the bands before it are uploaded);
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) when
    /// the application deleted or relabelled the texture or a band's buffer (asked before the
    /// first band: nothing is uploaded); [`Error::Timeout`](crate::Error::Timeout) when the
    /// uploads before have not finished by `deadline`.
    pub(super) fn upload_bands<'p>(
        &self,
        bands: &[Rows],
        mut band: impl FnMut(usize) -> Result<&'p [u8]>,
        last_upload: &mut Option<Fence>,
        deadline: Instant,
    ) -> Result<()> {
        let (row, height) = self.frame_shape();
        let buffers = &self.band_buffers;
        if !Rows::cover(bands, height) || !(buffers.is_empty() || buffers.len() == bands.len()) {
            return Err(crate::Error::Internal {
                what: "staged bands that do not cover their frame in order, or not one \
                       buffer each"
                    .into(),
            });
        }
        if let Some(fence) = last_upload.as_ref() {
            let limit = deadline.saturating_duration_since(Instant::now());
            match fence.client_wait(limit, || "the last staged upload's GL fence".into()) {
                Ok(()) => {}
                // A fence GL cannot wait on (GL_WAIT_FAILED) is dropped: GL's own ordering
                // still keeps the next write after the upload (by stalling), so the next
                // present goes on.
                Err(e @ crate::Error::GlCall { .. }) => {
                    *last_upload = None;
                    return Err(e);
                }
                // Kept (a timeout, another context current): the next present waits again.
                Err(e) => return Err(e),
            }
        }
        *last_upload = None;
        let queued = std::cell::Cell::new(false);
        let through = !buffers.is_empty();
        let uploaded = self.with_unpack_state("glTexSubImage2D (a staged frame)", through, |fns| {
            if !through {
                self.bind_for_upload(fns, 0)?;
            }
            // All before the first band, so that a frame refused for a replaced buffer
            // uploads nothing.
            for &buffer in buffers {
                self.check_own(fns, Object::Buffer, buffer)?;
            }
            for (k, rows) in bands.iter().enumerate() {
                let pixels = band(k)?;
                if pixels.len() != rows.count * row || rows.first + rows.count > height {
                    return Err(crate::Error::Internal {
                        what: "a staged band of another size than its rows".into(),
                    });
                }
                let Some(&buffer) = buffers.get(k) else {
                    // SAFETY: the texture is bound (read back, before the loop); the rows lie
                    // within it (checked); no pixel buffer is bound (read back), so `pixels`,
                    // the band's rows tightly packed, are read before the call returns.
                    unsafe { self.tex_sub_image(fns, rows, pixels.as_ptr().cast()) };
                    continue;
                };
                // Written with the buffer bound as a copy target, bound as the pixel
                // unpack buffer only for the upload: the GL calls of the benchmark's
                // plain-call version (`raw bands ... each written whole`), so that the two
                // differ only in cuda-gl's own work.
                bind_checked(
                    fns,
                    gl::COPY_WRITE_BUFFER,
                    buffer,
                    "glBindBuffer (a display buffer)",
                )?;
                // SAFETY: a context is current; the band's buffer is bound as the copy
                // target (read back); GL refuses a range past its end with an error,
                // writing nothing (it holds the band, unless the application gave its name
                // other storage); `pixels` is read before the call returns.
                unsafe {
                    (fns.buffer_sub_data)(
                        gl::COPY_WRITE_BUFFER,
                        0,
                        pixels.len() as isize,
                        pixels.as_ptr().cast(),
                    );
                }
                self.bind_for_upload(fns, buffer)?;
                // SAFETY: the texture and the band's buffer are bound (read back); the
                // rows lie within the texture (checked); the null pointer is offset 0 in
                // the buffer, and GL refuses a read past its end with an error rather than
                // reading it.
                unsafe { self.tex_sub_image(fns, rows, std::ptr::null()) };
                queued.set(true);
            }
            Ok(())
        });
        if queued.get() {
            // Whatever the uploads' final error check said, they may read the buffers now: the
            // next frame's writes wait for this fence. Without one, GL keeps them
            // after the upload by stalling (with no time limit), so a fence that cannot be
            // placed is logged, not an error of a frame that was uploaded.
            match Fence::place(self.owner) {
                Ok(fence) => *last_upload = Some(fence),
                Err(e) => log::warn!("cuda-gl: no GL fence after a staged upload: {e}"),
            }
        }
        uploaded
    }

    /// Uploads one tightly packed frame from the start of GL buffer `buffer` (of at least
    /// [`frame_bytes`](Self::frame_bytes) bytes: a display stream's slot) into the texture, in
    /// GL's order.
    ///
    /// # Errors
    /// As [`upload_bands`](Self::upload_bands).
    pub(super) fn upload_from_buffer(&self, buffer: u32) -> Result<()> {
        self.with_unpack_state("glTexSubImage2D (a display frame)", false, |fns| {
            if buffer == self.pbo {
                self.check_own(fns, Object::Buffer, buffer)?;
            }
            self.bind_for_upload(fns, buffer)?;
            // SAFETY: the buffer and the texture are bound (read back); the null pointer is
            // offset 0 in the buffer, and GL refuses a read past its end with an error rather
            // than reading it (a stream slot holds at least one frame, the pixel buffer exactly
            // one).
            unsafe { self.tex_sub_image(fns, &self.all_rows(), std::ptr::null()) };
            Ok(())
        })
    }

    /// Every row of the texture.
    fn all_rows(&self) -> Rows {
        Rows {
            first: 0,
            count: self.height as usize,
        }
    }

    /// Runs `body` with the owner checked, the texture found still the side's, GL's old errors
    /// drained and the unpack state
    /// neutral (the copy write binding too when `copy_write`), then puts the application's
    /// state back and reports a GL error that `body` raised as `call`'s.
    fn with_unpack_state(
        &self,
        call: &'static str,
        copy_write: bool,
        body: impl FnOnce(&GlFns) -> Result<()>,
    ) -> Result<()> {
        let fns = self.owner.check("glTexSubImage2D (not called)")?;
        self.check_own(fns, Object::Texture, self.texture)?;
        fns.drain_errors();
        let state = UnpackState::neutral(fns, copy_write)?;
        let done = body(fns);
        state.restore(fns);
        done?;
        fns.check(call)
    }

    /// Binds `buffer` (0: none) as the pixel unpack buffer and the texture, each read back
    /// before it is relied on: the application may have deleted one of these names (a GL call
    /// allowed on any name of its share group). In a core profile binding a deleted name fails
    /// and leaves the application's object bound, where a null pointer would then be read as
    /// client memory at address 0; in a compatibility profile it makes a new, empty object,
    /// which GL's range checks keep every read and write within.
    fn bind_for_upload(&self, fns: &GlFns, buffer: u32) -> Result<()> {
        bind_checked(
            fns,
            gl::PIXEL_UNPACK_BUFFER,
            buffer,
            "glBindBuffer (a display buffer)",
        )?;
        bind_checked(
            fns,
            gl::TEXTURE_2D,
            self.texture,
            "glBindTexture (a display texture)",
        )
    }

    /// `glTexSubImage2D` of `rows` of the bound texture from `source`.
    ///
    /// # Safety
    /// 1. A context is current, the texture is bound, and `rows` lie within it.
    /// 2. `source` is `rows` tightly packed rows of this format: in client memory (no pixel
    ///    unpack buffer bound), read before the call returns; or an offset into the bound
    ///    pixel unpack buffer.
    unsafe fn tex_sub_image(&self, fns: &GlFns, rows: &Rows, source: *const std::ffi::c_void) {
        let (_, pixel_format, ty) = self.format.gl();
        // SAFETY: (1), (2).
        unsafe {
            (fns.tex_sub_image_2d)(
                gl::TEXTURE_2D,
                0,
                0,
                rows.first as i32,
                self.width as i32,
                rows.count as i32,
                pixel_format,
                ty,
                source,
            );
        }
    }
}

/// Binds `name` to `target` (a pixel unpack or copy write buffer, or a 2-D texture) and reads
/// the binding back: `Err` naming `call` when it did not take (a name the application deleted,
/// in a core profile: see [`GlSide::bind_for_upload`]).
fn bind_checked(fns: &GlFns, target: u32, name: u32, call: &'static str) -> Result<()> {
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
