//! A display target's GL texture, in every mode alike: made, uploaded into and deleted through
//! cuda-gl's own GL table, with the owning context checked first, and the application's unpack
//! state read first and put back after every upload; leaked (not deleted) when another context
//! is current. It knows no mode: the modes own their pixel buffers
//! ([`GlBuffers`](super::gl_buffer::GlBuffers)) and upload through the primitives here.
//!
//! The texture is claimed from birth until it is deleted (or leaked, and then for good), as
//! cuda-gl's other GL objects are: no registration of the application's can map it while the
//! target fills or deletes it. It and the modes' buffers carry the target's [`Label`], asked for
//! before each GL write and before the deletion: a name the application deleted may name its
//! own next object, which the target must neither fill nor delete.

use crate::error::{DisplayError, Error, Result};
use crate::glapi::{Direction, GlFns, GlOwner, PixelState, UnpackState, bind_checked, label};
use crate::image::Layout;
use std::sync::atomic::{AtomicU64, Ordering};

/// The number in the next display target's label: no two targets share one.
static NEXT_LABEL: AtomicU64 = AtomicU64::new(1);

/// Rows of a frame: an upload's band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rows {
    /// The first row.
    pub(crate) first: usize,
    /// How many rows.
    pub(crate) count: usize,
}

/// A kind of object of a target, as labels and the error name it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Object {
    Texture,
    Buffer,
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

/// The label of every GL object of one target (`cuda-gl display <nonce>-<n>`): a number of
/// this process's own, drawn at random once, so that an application cannot give its own
/// object the label by accident (guessing it would take a search of 2^48 values), and the
/// target's number. No label in a context without object labels (before OpenGL 4.3 without
/// `GL_KHR_debug`), where cuda-gl's owner check refuses the target's calls anyway.
#[derive(Debug, Clone)]
pub(super) struct Label(Option<String>);

impl Label {
    /// The next target's label, in the current context (of `fns`).
    fn next(fns: &GlFns) -> Label {
        let usable =
            label::has_labels(fns) && fns.object_label.is_some() && fns.get_object_label.is_some();
        Label(usable.then(|| label::text("display", NEXT_LABEL.fetch_add(1, Ordering::Relaxed))))
    }

    /// Labels `name` (0: none), an object of the target just made, with the label.
    pub(super) fn mark(&self, fns: &GlFns, object: Object, name: u32) {
        if let (Some(text), true) = (&self.0, name != 0) {
            // The target has a label only where `glObjectLabel` was found.
            let _ = label::label(fns, object.identifier(), name, text);
        }
    }

    /// Whether `name` still names the target's object: it has the label (always true without
    /// labels). False once the application deleted it, whatever GL made of the name since.
    pub(super) fn is_own(&self, fns: &GlFns, object: Object, name: u32) -> bool {
        let Some(text) = &self.0 else {
            return true;
        };
        let is = match object {
            Object::Texture => fns.is_texture,
            Object::Buffer => fns.is_buffer,
        };
        // The target has a label only in a context with labels, and the owner check admits no
        // other context.
        label::is_labelled(fns, object.identifier(), name, is, text)
    }

    /// [`is_own`](Self::is_own) as a `Result`, before a GL call writes the object.
    ///
    /// # Errors
    /// [`DisplayError::ObjectReplaced`] when it is not.
    pub(super) fn check_own(&self, fns: &GlFns, object: Object, name: u32) -> Result<()> {
        if self.is_own(fns, object, name) {
            return Ok(());
        }
        let object = match object {
            Object::Texture => "texture",
            Object::Buffer => "pixel buffer",
        };
        Err(DisplayError::ObjectReplaced { object, name }.into())
    }
}

/// Refuses a zero side or one over `GL_MAX_TEXTURE_SIZE` of the current context (of `fns`).
///
/// # Errors
/// [`DisplayError::TargetSize`].
pub(super) fn check_size(fns: &GlFns, width: u32, height: u32) -> Result<()> {
    let mut max = 0;
    // SAFETY: a context is current (the callers checked the owner); a valid out-pointer.
    unsafe { (fns.get_integerv)(gl::MAX_TEXTURE_SIZE, &mut max) };
    let fits = |n: u32| n > 0 && i32::try_from(n).is_ok_and(|n| n <= max);
    if fits(width) && fits(height) {
        Ok(())
    } else {
        Err(DisplayError::TargetSize { width, height, max }.into())
    }
}

/// The texture of one size and format of a display target: its GL object and its layout.
#[derive(Debug)]
pub(crate) struct Texture {
    object: TextureObject,
    /// Its size and format, rows tightly packed.
    layout: Layout,
}

impl Texture {
    /// A texture of `layout`'s size and format (tightly packed: the pitch is a row) in the
    /// current context (`owner`, whose table is `fns`), as [`TextureObject::create`] makes it;
    /// with `grey`, a one-channel texture's swizzle reads red into green and blue, and alpha as
    /// 1 (a display target's, sampled by the application's shaders). The caller has checked
    /// the size ([`check_size`]).
    ///
    /// # Errors
    /// As [`TextureObject::create`].
    pub(crate) fn create(
        owner: GlOwner,
        fns: &GlFns,
        layout: Layout,
        grey: bool,
    ) -> Result<Texture> {
        let format = layout.format();
        let grey = grey && format.one_channel();
        let object = TextureObject::create(owner, fns, layout.size(), format.gl(), grey)?;
        Ok(Texture { object, layout })
    }

    /// The GL context that owns it.
    pub(super) fn owner(&self) -> GlOwner {
        self.object.owner
    }

    /// The texture's GL name.
    pub(crate) fn name(&self) -> u32 {
        self.object.name()
    }

    /// Its size and format, rows tightly packed.
    pub(super) fn layout(&self) -> Layout {
        self.layout
    }

    /// The label of the target's objects, which the modes give their buffers.
    pub(super) fn label(&self) -> &Label {
        &self.object.label
    }

    /// One frame's row bytes and rows, tightly packed.
    pub(super) fn frame_shape(&self) -> (usize, usize) {
        (self.layout.row_bytes(), self.layout.height() as usize)
    }

    /// The bytes of one frame, tightly packed.
    pub(super) fn frame_bytes(&self) -> usize {
        self.layout.bytes()
    }

    /// Uploads one tightly packed frame from the start of GL buffer `buffer` (of at least
    /// [`frame_bytes`](Self::frame_bytes) bytes: interop's pixel buffer, a display stream's
    /// slot) into the texture, in GL's order; `labelled`: the buffer is the target's, and is
    /// asked for its label first.
    ///
    /// # Errors
    /// As [`upload`](Self::upload); [`Error::GlCall`](crate::Error::GlCall) when GL refuses a
    /// binding or the upload; [`DisplayError::ObjectReplaced`] when the application
    /// deleted or relabelled the texture or a labelled buffer (nothing is uploaded).
    pub(super) fn upload_from_buffer(&self, buffer: u32, labelled: bool) -> Result<()> {
        self.upload("glTexSubImage2D (a display frame)", false, |fns| {
            if labelled {
                self.object.label.check_own(fns, Object::Buffer, buffer)?;
            }
            self.bind_for_upload(fns, buffer)?;
            let rows = Rows {
                first: 0,
                count: self.layout.height() as usize,
            };
            // SAFETY: the buffer and the texture are bound (read back); the rows are the
            // texture's; the null pointer is offset 0 in the buffer, and GL refuses a read past
            // its end with an error rather than reading it (a stream slot holds at least one
            // frame, the pixel buffer exactly one).
            unsafe { self.tex_sub_image(fns, &rows, std::ptr::null()) };
            Ok(())
        })
    }

    /// Runs `body` with the owner checked, the texture found still the target's, GL's old
    /// errors drained and the unpack state neutral (the copy write binding too when
    /// `copy_write`), then puts the application's state back and reports a GL error that
    /// `body` raised as `call`'s.
    ///
    /// # Errors
    /// The owner check's errors when the target's context is not current;
    /// [`DisplayError::ObjectReplaced`] for a texture the application deleted or
    /// relabelled; `body`'s; [`Error::GlCall`](crate::Error::GlCall) naming `call`.
    pub(super) fn upload(
        &self,
        call: &'static str,
        copy_write: bool,
        body: impl FnOnce(&GlFns) -> Result<()>,
    ) -> Result<()> {
        let fns = self.object.owner.check("glTexSubImage2D (not called)")?;
        self.object
            .label
            .check_own(fns, Object::Texture, self.object.name)?;
        fns.take_pending_errors(call);
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
    ///
    /// # Errors
    /// [`Error::GlCall`](crate::Error::GlCall) when a binding did not take.
    pub(super) fn bind_for_upload(&self, fns: &GlFns, buffer: u32) -> Result<()> {
        bind_checked(
            fns,
            gl::PIXEL_UNPACK_BUFFER,
            buffer,
            "glBindBuffer (a display buffer)",
        )?;
        bind_checked(
            fns,
            gl::TEXTURE_2D,
            self.object.name,
            "glBindTexture (a display texture)",
        )
    }

    /// The texture's pixels as stored: its format (a one-channel texture's one channel,
    /// before the grey swizzle), rows tightly packed, row 0 (GL's first) first. Read with
    /// `glGetnTexImage`, whose size limit keeps GL from writing past the buffer whatever
    /// storage the texture has, under neutral pack and pixel-transfer state; the application's
    /// bindings and state are put back. Waits for GL's commands that write the texture.
    ///
    /// # Errors
    /// The owner check's errors; [`DisplayError::ObjectReplaced`] for a texture the
    /// application deleted or relabelled; [`Error::MissingGlFunction`] without
    /// `glGetnTexImage` (OpenGL 4.5, or `glGetnTexImageARB` of `GL_ARB_robustness`);
    /// [`Error::GlCall`] when GL refuses the read.
    pub(super) fn read(&self) -> Result<Vec<u8>> {
        let fns = self.object.owner.check("glGetnTexImage (not called)")?;
        self.object
            .label
            .check_own(fns, Object::Texture, self.object.name)?;
        let get = fns.bounded_tex_image()?;
        fns.take_pending_errors("glGetnTexImage (a display texture)");
        // Unbinds the pixel pack buffer too, until `restore`.
        let state = PixelState::neutral(fns, Direction::Pack)?;
        let mut texture = 0;
        // SAFETY: a context is current (checked); a valid query and out-pointer.
        unsafe { (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut texture) };
        let mut pixels = vec![0u8; self.frame_bytes()];
        let (_, format, ty) = self.layout.format().gl();
        let read = bind_checked(
            fns,
            gl::TEXTURE_2D,
            self.object.name,
            "glBindTexture (a display texture)",
        )
        .map(|()| {
            // SAFETY: the texture is bound (read back) and no pixel pack buffer is; the pack
            // state is neutral (tight rows, nothing skipped); GL writes at most
            // `pixels.len()` bytes into `pixels` (a larger image is an error, not a write).
            unsafe {
                get(
                    gl::TEXTURE_2D,
                    0,
                    format,
                    ty,
                    i32::try_from(pixels.len()).unwrap_or(i32::MAX),
                    pixels.as_mut_ptr().cast(),
                );
            }
        });
        // SAFETY: a context is current; the name was read from it.
        unsafe { (fns.bind_texture)(gl::TEXTURE_2D, texture.max(0) as u32) };
        state.restore(fns);
        read?;
        fns.check("glGetnTexImage (a display texture)")?;
        Ok(pixels)
    }

    /// Refuses `rows` that do not lie within the texture, or `bytes` of client memory (when
    /// given) that are not those rows tightly packed: what [`tex_sub_image`](Self::tex_sub_image)
    /// relies on, checked before it. Cannot happen (the modes cut their bands from the
    /// texture's own shape), kept as an error rather than a panic.
    ///
    /// # Errors
    /// [`Error::Internal`].
    pub(super) fn check_rows(&self, rows: &Rows, bytes: Option<usize>) -> Result<()> {
        let (row, height) = self.frame_shape();
        let within = rows
            .first
            .checked_add(rows.count)
            .is_some_and(|end| end <= height);
        if within && bytes.is_none_or(|bytes| bytes == rows.count * row) {
            return Ok(());
        }
        Err(Error::Internal {
            what: "a display upload of rows outside its texture, or of another size".into(),
        })
    }

    /// `glTexSubImage2D` of `rows` of the bound texture from `source`.
    ///
    /// # Safety
    /// 1. A context is current, the texture is bound, and `rows` lie within it.
    /// 2. `source` is `rows` tightly packed rows of this format: in client memory (no pixel
    ///    unpack buffer bound), read before the call returns; or an offset into the bound
    ///    pixel unpack buffer.
    pub(super) unsafe fn tex_sub_image(
        &self,
        fns: &GlFns,
        rows: &Rows,
        source: *const std::ffi::c_void,
    ) {
        let (_, pixel_format, ty) = self.layout.format().gl();
        // SAFETY: (1), (2).
        unsafe {
            (fns.tex_sub_image_2d)(
                gl::TEXTURE_2D,
                0,
                0,
                rows.first as i32,
                self.layout.width() as i32,
                rows.count as i32,
                pixel_format,
                ty,
                source,
            );
        }
    }

    /// Leaks the texture: never deleted, claimed for good (the driver may still hold it
    /// mapped).
    pub(super) fn leak(&mut self) {
        self.object.leak();
    }
}

mod object;
#[cfg(all(test, feature = "egl"))]
mod tests;

pub(crate) use object::TextureObject;
