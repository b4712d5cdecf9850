//! [`EguiImage`]: a `DisplayTarget` shown in egui through egui_glow (see the module docs above
//! this file, `egui_interop`, for why egui gets a texture of its own).

use crate::display::{DisplayTarget, Format};
use crate::error::{Error, Result};
use crate::glapi::claim::{self, Claim};
use crate::glapi::{GlFns, GlOwner, have, label};
use ::egui::TextureId;
use ::egui::load::SizedTexture;
use egui_glow::glow;
use std::marker::PhantomData;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

/// The number in the next egui texture's label: no two share one.
static NEXT_LABEL: AtomicU64 = AtomicU64::new(1);

/// A [`DisplayTarget`] and the egui texture it is shown through (see the
/// [module docs](super)): draw frames into [`target_mut`](Self::target_mut) as usual, then call
/// [`update`](Self::update) and give egui the [`SizedTexture`] it returns (`ui.image(..)`).
///
/// The egui texture is the painter's once registered: the adapter never deletes it, and egui
/// deletes it at its shutdown (or when the application frees its [`TextureId`]). Dropping the
/// image shrinks that texture to one texel of undefined content (its frame's memory is not kept
/// until egui's shutdown): drop the image in a frame whose UI no longer shows its texture, not
/// in one that does (egui paints at the frame's end). Row 0 of a frame is the image's top row in
/// egui (egui's texture coordinate `v = 0` is at the top).
///
/// Neither `Send` nor `Sync`: its GL calls go to the context current on the calling thread,
/// which must be the target's (egui's painter's).
#[derive(Debug)]
pub struct EguiImage {
    target: DisplayTarget,
    /// The texture given to egui, while it still carries its label.
    given: Option<Given>,
    _not_send: PhantomData<*const ()>,
}

/// A texture made by the adapter and registered with egui's painter (egui's to delete).
#[derive(Debug)]
struct Given {
    id: TextureId,
    name: u32,
    label: String,
    /// The storage it has: the target's size and format when last written.
    storage: (u32, u32, Format),
    /// The claim on its name (as on the target's own objects): no registration with CUDA can
    /// map it while the adapter gives it storage and copies into it.
    _claim: Claim,
}

/// What [`EguiImage::update`] does to the egui texture before the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// No texture of the adapter's is registered (none yet, or egui freed it): make one.
    Make,
    /// It has another size or format than the target: give the same name new storage.
    Respecify,
    /// It matches: copy straight into it.
    Copy,
}

/// The step for a texture given to egui (`None`: none), whether it still carries its label,
/// and the target's size and format.
fn step(given: Option<(u32, u32, Format)>, labelled: bool, want: (u32, u32, Format)) -> Step {
    match given {
        Some(_) if !labelled => Step::Make,
        None => Step::Make,
        Some(storage) if storage != want => Step::Respecify,
        Some(_) => Step::Copy,
    }
}

impl EguiImage {
    /// Shows `target` in egui. The target's GL context (egui's painter's) is current.
    ///
    /// # Errors
    /// The owner check's errors when the target's GL context is not current;
    /// [`Error::MissingGlFunction`] for a context without `glCopyImageSubData` (OpenGL 4.3 or
    /// `GL_ARB_copy_image`).
    pub fn new(target: DisplayTarget) -> Result<EguiImage> {
        let fns = target.owner().check("EguiImage::new")?;
        check_copy(fns)?;
        Ok(EguiImage {
            target,
            given: None,
            _not_send: PhantomData,
        })
    }

    /// The display target: its size, mode and texture.
    pub fn target(&self) -> &DisplayTarget {
        &self.target
    }

    /// The display target, to draw frames into ([`DisplayTarget::frame`],
    /// [`DisplayTarget::show`]) and to resize; [`update`](Self::update) then shows the result.
    pub fn target_mut(&mut self) -> &mut DisplayTarget {
        &mut self.target
    }

    /// The egui texture's id, once [`update`](Self::update) registered one.
    pub fn texture_id(&self) -> Option<TextureId> {
        self.given.as_ref().map(|g| g.id)
    }

    /// The egui texture's GL name (egui's: sample or read it; never delete it, give it other
    /// storage or register it with CUDA, which cuda-gl refuses while the image holds it), once
    /// [`update`](Self::update) registered one.
    pub fn egui_texture(&self) -> Option<glow::Texture> {
        self.given
            .as_ref()
            .and_then(|g| NonZeroU32::new(g.name))
            .map(glow::NativeTexture)
    }

    /// Whether `texture` is the adapter's texture and still carries its label: false once egui
    /// freed it (or anything else deleted it), whatever GL has made of the name since.
    ///
    /// # Errors
    /// The owner check's errors when the target's GL context is not current.
    pub fn holds(&self, texture: glow::Texture) -> Result<bool> {
        let fns = self.target.owner().check("EguiImage::holds")?;
        Ok(self
            .given
            .as_ref()
            .is_some_and(|g| g.name == texture.0.get() && is_labelled(fns, g)))
    }

    /// Copies what the target shows (after its last present or show) into the egui texture,
    /// first making that texture and handing it to egui with `register` where there is none
    /// (the first call, or egui freed it), or giving it the target's size and format where they
    /// changed. `register` is `|t| painter.register_native_texture(t)` with an egui_glow
    /// `Painter`, `|t| frame.register_native_glow_texture(t)` in eframe; it must register the
    /// texture with the painter of this GL context, which owns it from then on.
    ///
    /// Returns the texture and its size in pixels, for `ui.image(..)` or `egui::Image::new`.
    /// In [`Mode::Stream`](crate::display::Mode::Stream) the target shows a frame up to two presents
    /// late unless [`DisplayTarget::flush`] was called first.
    ///
    /// # Errors
    /// The owner check's errors when the target's GL context is not current;
    /// [`Error::GlCall`] when GL refuses the texture or the copy.
    pub fn update(
        &mut self,
        register: impl FnOnce(glow::Texture) -> TextureId,
    ) -> Result<SizedTexture> {
        // What a forgotten frame left mapped for CUDA is undone, and the source is found still
        // the target's texture (a name the application deleted may name its own now).
        self.target.ready_for_gl()?;
        let owner = self.target.owner();
        let fns = owner.check("EguiImage::update")?;
        // Asked every time: the target may have been swapped for one of another context.
        check_copy(fns)?;
        let (w, h) = self.target.size();
        let want = (w, h, self.target.format());
        let labelled = self.given.as_ref().is_some_and(|g| is_labelled(fns, g));
        let step = step(self.given.as_ref().map(|g| g.storage), labelled, want);
        fns.take_pending_errors("EguiImage::update");
        let given = match (self.given.take(), step) {
            (Some(given), Step::Copy) => given,
            (Some(mut given), Step::Respecify) => {
                with_bound(fns, given.name, || specify(fns, want));
                if let Err(e) = fns.check("glTexImage2D (an egui image's new size)") {
                    // Still egui's texture and the adapter's: kept, to be tried again.
                    self.given = Some(given);
                    return Err(e);
                }
                given.storage = want;
                given
            }
            // None yet, or egui freed it: that one is egui's business, forgotten here (never
            // deleted, its claim ended). A new one, made, claimed and filled first, and only
            // then handed to egui: `register` is the application's code, after which the
            // adapter makes no GL call (it may have made another context current).
            (old, _) => {
                // Its claim ends first: GL may give the new texture the freed one's name.
                drop(old);
                let (native, label, claim) = make(fns, owner, want)?;
                let filled = copy_into(fns, self.target.texture().0, native.0.get(), (w, h));
                if let Err(e) = filled {
                    // SAFETY: a context is current (checked); the name was just made here, is
                    // not egui's yet, and is deleted once.
                    unsafe { (fns.delete_textures)(1, &native.0.get()) };
                    return Err(e);
                }
                let given = self.given.insert(Given {
                    id: register(native),
                    name: native.0.get(),
                    label,
                    storage: want,
                    _claim: claim,
                });
                return Ok(SizedTexture::new(given.id, [w as f32, h as f32]));
            }
        };
        let given = self.given.insert(given);
        copy_into(fns, self.target.texture().0, given.name, (w, h))?;
        Ok(SizedTexture::new(given.id, [w as f32, h as f32]))
    }
}

impl Drop for EguiImage {
    /// Gives egui's texture 1x1 storage, so that a dropped image does not keep its frame's
    /// memory until egui's painter shuts down (eframe has no call to free a native texture);
    /// the texture stays egui's, registered, and egui deletes it then. Nothing when the
    /// target's GL context is not current, or egui freed the texture.
    fn drop(&mut self) {
        let Some(given) = self.given.take() else {
            return;
        };
        match self
            .target
            .owner()
            .check("glTexImage2D (a dropped egui image's 1x1)")
        {
            Ok(fns) if is_labelled(fns, &given) => {
                fns.take_pending_errors("glTexImage2D (a dropped egui image's 1x1)");
                with_bound(fns, given.name, || specify(fns, (1, 1, given.storage.2)));
                fns.drain_errors();
            }
            Ok(_) => {}
            Err(e) => log::warn!(
                "cuda-gl: an egui image dropped with another GL context current keeps its \
                 texture's memory until egui frees it: {e}"
            ),
        }
    }
}

/// Copies all of texture `source` into texture `dest`, both `size` pixels of one internal
/// format, in the current context (of `fns`).
///
/// # Errors
/// [`Error::GlCall`] when GL refuses the copy.
fn copy_into(fns: &GlFns, source: u32, dest: u32, (w, h): (u32, u32)) -> Result<()> {
    let copy = have(fns.copy_image_sub_data, "glCopyImageSubData")?;
    // SAFETY: the callers checked the owner and that the context has the call; `source` is the
    // target's texture (its label checked by `ready_for_gl`) and `dest` the adapter's (labelled,
    // claimed), both 2D textures of one level with the same internal format and this size;
    // the region is all of it, and GL refuses anything else with an error.
    unsafe {
        copy(
            source,
            gl::TEXTURE_2D,
            0,
            0,
            0,
            0,
            dest,
            gl::TEXTURE_2D,
            0,
            0,
            0,
            0,
            w as i32,
            h as i32,
            1,
        )
    };
    fns.check("glCopyImageSubData (a display target into its egui image)")
}

/// Refuses a context (current, of `fns`) without `glCopyImageSubData`.
///
/// # Errors
/// [`Error::MissingGlFunction`] without OpenGL 4.3 or `GL_ARB_copy_image`.
fn check_copy(fns: &GlFns) -> Result<()> {
    have(fns.copy_image_sub_data, "glCopyImageSubData")?;
    // A resolved address says nothing of the context: its version or extension does.
    let supported = fns.version_string() >= (4, 3) || fns.has_extension("GL_ARB_copy_image");
    if supported {
        Ok(())
    } else {
        Err(Error::MissingGlFunction {
            function: "glCopyImageSubData",
        })
    }
}

/// Whether `given`'s name is still the adapter's texture (carries its label).
fn is_labelled(fns: &GlFns, given: &Given) -> bool {
    // The owner check admitted the context, so it has object labels.
    label::is_labelled(fns, gl::TEXTURE, given.name, fns.is_texture, &given.label)
}

/// A new texture of `want`'s size and format, labelled: its name and label. Deleted again if
/// GL refuses it (it is not egui's until registered).
///
/// # Errors
/// [`Error::GlCall`] when GL refuses it; [`Error::MissingGlFunction`] without `glObjectLabel`;
/// [`Error::AlreadyRegistered`] when a context of the share group registered the new name with
/// CUDA in the moment since it was made (it is left to that one).
fn make(
    fns: &GlFns,
    owner: GlOwner,
    want: (u32, u32, Format),
) -> Result<(glow::Texture, String, Claim)> {
    let mut name = 0;
    // SAFETY: a context is current; a valid out-pointer for one name.
    unsafe { (fns.gen_textures)(1, &mut name) };
    let text = label::text("egui", NEXT_LABEL.fetch_add(1, Ordering::Relaxed));
    let made = with_bound(fns, name, || {
        specify(fns, want);
        for (parameter, value) in [
            (gl::TEXTURE_MIN_FILTER, gl::NEAREST),
            (gl::TEXTURE_MAG_FILTER, gl::NEAREST),
            (gl::TEXTURE_WRAP_S, gl::CLAMP_TO_EDGE),
            (gl::TEXTURE_WRAP_T, gl::CLAMP_TO_EDGE),
            (gl::TEXTURE_MAX_LEVEL, 0),
        ] {
            // SAFETY: the new texture is bound to GL_TEXTURE_2D (with_bound); valid values.
            unsafe { (fns.tex_parameteri)(gl::TEXTURE_2D, parameter, value as i32) };
        }
        label::label(fns, gl::TEXTURE, name, &text)
    })
    .and_then(|()| fns.check("glTexImage2D (an egui image)"))
    .and_then(|()| {
        // glGenTextures gives 0 only with an error, which the check above reports.
        NonZeroU32::new(name).ok_or(Error::GlCall {
            call: "glGenTextures (an egui image)",
            code: gl::INVALID_OPERATION,
        })
    });
    let claimed = made.and_then(|name| {
        // A name just made is claimed by no one, unless a context of the share group
        // registered it in the moment since: then it is left to that one. Claimed with its
        // label: once egui deleted it, the name is free to claim for the next texture made
        // there, before this image's next update has noticed.
        claim::claim_labelled_texture(name.get(), owner, &text)
            .map(|claim| (name, claim))
            .ok_or(Error::AlreadyRegistered {
                name: name.get(),
                kind: "texture".into(),
            })
    });
    match claimed {
        Ok((name, claim)) => Ok((glow::NativeTexture(name), text, claim)),
        Err(e @ Error::AlreadyRegistered { .. }) => Err(e),
        Err(e) => {
            // SAFETY: a context is current; the name is the one just made, not yet given away.
            unsafe { (fns.delete_textures)(1, &name) };
            Err(e)
        }
    }
}

/// Gives the texture bound to `GL_TEXTURE_2D` storage of `want`'s size and format (mutable
/// storage: a resize keeps the name), with the swizzle that shows one channel grey, as the
/// target's texture does.
fn specify(fns: &GlFns, (w, h, format): (u32, u32, Format)) {
    let (internal, pixel_format, ty) = format.gl();
    let swizzle = if format.one_channel() {
        [gl::RED, gl::RED, gl::RED, gl::ONE]
    } else {
        [gl::RED, gl::GREEN, gl::BLUE, gl::ALPHA]
    };
    // SAFETY: a texture is bound (the callers'); no unpack buffer is bound (with_bound), so
    // the null pointer asks for storage only; valid enums and the target's (checked) size.
    unsafe {
        (fns.tex_image_2d)(
            gl::TEXTURE_2D,
            0,
            internal as i32,
            w as i32,
            h as i32,
            0,
            pixel_format,
            ty,
            std::ptr::null(),
        );
        for (parameter, value) in [
            gl::TEXTURE_SWIZZLE_R,
            gl::TEXTURE_SWIZZLE_G,
            gl::TEXTURE_SWIZZLE_B,
            gl::TEXTURE_SWIZZLE_A,
        ]
        .into_iter()
        .zip(swizzle)
        {
            (fns.tex_parameteri)(gl::TEXTURE_2D, parameter, value as i32);
        }
    }
}

/// Runs `body` with `name` bound to `GL_TEXTURE_2D` and no pixel unpack buffer bound, then
/// binds back what the application (egui) had bound.
fn with_bound<T>(fns: &GlFns, name: u32, body: impl FnOnce() -> T) -> T {
    let (mut texture, mut unpack) = (0, 0);
    // SAFETY: a context is current; valid queries and out-pointers; the names bound are the
    // caller's texture and then the ones read here.
    unsafe {
        (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut texture);
        (fns.get_integerv)(gl::PIXEL_UNPACK_BUFFER_BINDING, &mut unpack);
        (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, 0);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
    }
    let result = body();
    // SAFETY: as above: the names read before.
    unsafe {
        (fns.bind_texture)(gl::TEXTURE_2D, texture as u32);
        (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, unpack as u32);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const RGBA: (u32, u32, Format) = (641, 479, Format::Rgba8);

    #[test]
    fn a_texture_is_made_first_and_again_once_egui_freed_it() {
        assert_eq!(step(None, false, RGBA), Step::Make);
        assert_eq!(step(Some(RGBA), false, RGBA), Step::Make);
        assert_eq!(step(Some((1, 1, Format::R8)), false, RGBA), Step::Make);
    }

    #[test]
    fn a_new_size_or_format_keeps_the_name() {
        assert_eq!(
            step(Some((640, 479, Format::Rgba8)), true, RGBA),
            Step::Respecify
        );
        assert_eq!(
            step(Some((641, 479, Format::R8)), true, RGBA),
            Step::Respecify
        );
        assert_eq!(step(Some(RGBA), true, RGBA), Step::Copy);
    }

    #[test]
    fn labels_are_the_process_scheme() {
        let text = label::text("egui", 7);
        assert!(
            text.starts_with("cuda-gl egui ") && text.ends_with("-7"),
            "{text}"
        );
        assert!(text.len() <= 47, "{text}");
    }

    static_assertions::assert_not_impl_any!(EguiImage: Send, Sync);
}
