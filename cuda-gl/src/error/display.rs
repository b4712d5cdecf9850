//! [`DisplayError`]: what a [`DisplayTarget`](crate::display::DisplayTarget) refuses, published
//! as `cuda_gl::display::DisplayError` and reaching callers as [`Error::Display`].

#[cfg(doc)]
use super::Error;

/// A display call refused before it did anything: bad input, or a target whose objects the
/// application deleted. It reaches callers as [`Error::Display`] (of kind
/// [`ErrorKind::Usage`](super::ErrorKind::Usage)); every message ends with a `help:` line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DisplayError {
    /// A display target of a zero side or one over the largest side: for a
    /// [`DisplayTarget`](crate::display::DisplayTarget), `GL_MAX_TEXTURE_SIZE` of its context;
    /// for a `wgpu_interop::WgpuTarget` (feature `wgpu`), the wgpu device's
    /// `max_texture_dimension_2d` (the limit the device was opened with).
    #[error(
        "a display target of {width}x{height} pixels cannot be made.\nhelp: each side must be \
         1 to {max} (GL_MAX_TEXTURE_SIZE of a GL target's context; max_texture_dimension_2d of \
         a wgpu target's device, which its required_limits may raise up to the adapter's); \
         show a large image in tiles, or scaled down"
    )]
    TargetSize {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
        /// The largest side: `GL_MAX_TEXTURE_SIZE` of the current context, or a wgpu device's
        /// `max_texture_dimension_2d` (`i32::MAX` where that is larger).
        max: i32,
    },

    /// Pitched device memory that cannot hold the image it is said to hold: a pitch smaller
    /// than a row, or fewer bytes than `pitch * (height - 1) + row`.
    #[error(
        "{what} of {width}x{height} pixels with a pitch of {pitch} bytes needs rows of \
         {row_bytes} bytes and {needed} bytes in all, but has {given}.\nhelp: the pitch is the \
         distance in bytes between the starts of two rows: at least width x bytes per pixel \
         ({row_bytes}); pass the buffer's real pitch and size"
    )]
    PitchedSource {
        /// What was given, e.g. `the device buffer`.
        what: &'static str,
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// The pitch given, in bytes.
        pitch: usize,
        /// The bytes of one row of pixels.
        row_bytes: usize,
        /// The bytes the image needs.
        needed: usize,
        /// The bytes it has.
        given: usize,
    },

    /// A display frame asked again for its surface or pixels after mapping them failed.
    #[error(
        "the display frame's {what} could not be mapped earlier in this frame.\nhelp: present or \
         drop this frame and begin another (a frame maps each object once)"
    )]
    FrameMapFailed {
        /// What, e.g. `texture`.
        what: &'static str,
    },

    /// A GL object of a [`DisplayTarget`](crate::display::DisplayTarget) is no longer the
    /// target's: the application deleted it (a GL call allowed on any name of its share group),
    /// and its name now names nothing or another object, which GL may have handed to the
    /// application's next `glGen*`; or relabelled it (`glObjectLabel`), which cannot be told
    /// from that. The target writes nothing into it and leaves it alone when dropped. The
    /// target keeps its claim on the name until it is dropped: a registration of the
    /// application's object of that name is refused until then.
    #[error(
        "the display target's {object} (GL name {name}) is not the target's any more: it was \
         deleted, and the name now names nothing or another object, which the target leaves \
         alone (or it was relabelled, which the target cannot tell from that).\nhelp: \
         `DisplayTarget::texture` lends the name for drawing and sampling only: never delete \
         or relabel it (an owner type that deletes its texture on drop must not be given this \
         one); drop this target and make a new one"
    )]
    ObjectReplaced {
        /// `"texture"` or `"pixel buffer"`.
        object: &'static str,
        /// The object's GL name.
        name: u32,
    },

    /// A [`ColorMap`](crate::display::ColorMap) whose range spreads no values: `min` and
    /// `max` must be finite, with `min < max`.
    #[error(
        "a colour map whose range is not finite, or whose `min` is not below its `max`, spreads \
         no values over its palette.\nhelp: give the value to show in the palette's first \
         colour as `min` and the one for its last as `max`, both finite, `min < max` (for R8 \
         images the values are the bytes, 0 to 255)"
    )]
    ColorMapRange,

    /// A mode asked of a target that has no such mode (a wgpu target in
    /// [`Mode::Stream`](crate::display::Mode::Stream)).
    #[error(
        "{target}: there is no {mode} mode for this target\nhelp: ask for one of {modes}, or \
         for None (the fastest that works here)"
    )]
    ModeUnavailable {
        /// The target, e.g. `WgpuTarget::new`.
        target: &'static str,
        /// The mode asked for.
        mode: &'static str,
        /// The modes the target has.
        modes: &'static str,
    },

    /// A target shown in egui holds pixels that egui cannot show as they are: egui samples
    /// filterable colour textures, and shows a one-channel texture red.
    #[error(
        "{call}: the target's format is {format}; egui shows RGBA8 images\nhelp: show \
         one-channel data through a colour map (`set_color_map`), which makes the target RGBA8, \
         or convert to RGBA8 before showing it"
    )]
    NotRgba8 {
        /// The call that refused it.
        call: &'static str,
        /// The target's format, e.g. `R32F`.
        format: String,
    },
}
