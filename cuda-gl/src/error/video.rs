//! [`VideoError`]: what [`video`](crate::video) refuses, published as
//! `cuda_gl::video::VideoError` and reaching callers as [`Error::Video`].

#[cfg(doc)]
use super::Error;

/// A video call refused before it did anything: a frame layout that cannot describe NV12 or
/// P010 planes, memory too small for a frame, or a destination image that does not match it.
/// It reaches callers as [`Error::Video`] (of kind [`ErrorKind::Usage`](super::ErrorKind::Usage));
/// every message names the call and ends with a `help:` line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VideoError {
    /// A frame with a side of 0.
    #[error(
        "{call}: a video frame of {width}x{height} pixels has no samples.\nhelp: give the \
         decoded picture's width and height, each at least 1"
    )]
    ZeroSize {
        /// The call that refused it, e.g. `VideoLayout::new`.
        call: &'static str,
        /// The width given.
        width: u32,
        /// The height given.
        height: u32,
    },

    /// A plane whose pitch is smaller than one of its rows.
    #[error(
        "{call}: the {plane} plane's pitch of {pitch} bytes is smaller than one of its rows \
         ({row_bytes} bytes).\nhelp: the pitch is the distance in bytes between the starts of \
         two rows, at least the row's bytes; pass the pitch the decoder reports (NVDEC: the \
         `pitch` of `cuvidMapVideoFrame`)"
    )]
    PitchTooSmall {
        /// The call that refused it.
        call: &'static str,
        /// `"luma"` or `"chroma"`.
        plane: &'static str,
        /// The pitch given, in bytes.
        pitch: usize,
        /// The bytes of one row of the plane.
        row_bytes: usize,
    },

    /// A P010 pitch or chroma offset that is odd: P010 samples are 16-bit words, so every row
    /// starts on an even byte.
    #[error(
        "{call}: the {what} of a P010 frame is {value} bytes, an odd number.\nhelp: P010 \
         samples are 16-bit words: pitches and the chroma offset are even numbers of bytes; \
         check that the frame is P010 (10-bit) and not NV12 (8-bit), and pass the decoder's \
         pitch"
    )]
    OddP010 {
        /// The call that refused it.
        call: &'static str,
        /// `"luma pitch"`, `"chroma pitch"` or `"chroma offset"`.
        what: &'static str,
        /// The value given, in bytes.
        value: usize,
    },

    /// A chroma plane that starts inside the luma plane.
    #[error(
        "{call}: the chroma plane starts {chroma_offset} bytes after the luma's first byte, \
         inside the luma plane, which spans {luma_bytes} bytes.\nhelp: the chroma offset is \
         counted from the luma's first byte and is at least luma pitch x (height - 1) + row \
         (usually luma pitch x the decoder's aligned height); use VideoLayout::new for chroma \
         right after the luma"
    )]
    ChromaOverlapsLuma {
        /// The call that refused it.
        call: &'static str,
        /// The chroma offset given, in bytes.
        chroma_offset: usize,
        /// The bytes the luma plane spans.
        luma_bytes: usize,
    },

    /// A layout whose bytes cannot be counted in a `usize`.
    #[error(
        "{call}: a video frame of {width}x{height} pixels with these pitches and offset spans \
         more bytes than a usize holds.\nhelp: pass the frame's real pitches and chroma offset \
         (a few times its row and its size at most)"
    )]
    TooLarge {
        /// The call that refused it.
        call: &'static str,
        /// The width given.
        width: u32,
        /// The height given.
        height: u32,
    },

    /// Memory that holds fewer bytes than the frame spans.
    #[error(
        "{call}: {what} holds {given} bytes, but the video frame spans {needed}.\nhelp: a frame \
         spans chroma offset + chroma pitch x (chroma rows - 1) + chroma row bytes \
         (VideoLayout::bytes); pass the whole allocation the decoder wrote, and its real \
         pitches"
    )]
    FrameTooSmall {
        /// The call that refused it.
        call: &'static str,
        /// What was given, e.g. `the source buffer`.
        what: &'static str,
        /// The bytes the frame spans.
        needed: usize,
        /// The bytes given.
        given: usize,
    },

    /// A destination image that is not RGBA8.
    #[error(
        "{call}: the destination image is {format}, but video frames are converted to \
         RGBA8.\nhelp: give an image of Format::Rgba8 (Layout::packed(size, Format::Rgba8), or \
         Layout::new with its pitch)"
    )]
    DestinationFormat {
        /// The call that refused it.
        call: &'static str,
        /// The destination's format, e.g. `R8`.
        format: String,
    },

    /// A destination image of another size than the frame.
    #[error(
        "{call}: the video frame is {}x{}, but the destination image is {}x{}.\nhelp: convert \
         into an RGBA8 image of the frame's size (no scaling is done)",
        .frame.0, .frame.1, .image.0, .image.1
    )]
    DestinationSize {
        /// The call that refused it.
        call: &'static str,
        /// The frame's width and height.
        frame: (u32, u32),
        /// The destination's width and height.
        image: (u32, u32),
    },

    /// A frame of another format than the plane textures were made for.
    #[error(
        "{call}: the frame is {frame}, but the plane textures were made for {planes}.\n\
         help: make planes of textures for this format (NV12: R8 + RG8, P010: R16 + RG16) with \
         VideoPlanes::new"
    )]
    PlaneFormat {
        /// The call that refused it.
        call: &'static str,
        /// The frame's format, e.g. `P010`.
        frame: String,
        /// The format the textures were made for.
        planes: String,
    },

    /// A plane texture whose size or internal format does not hold the frame's plane.
    #[error(
        "{call}: the {plane} texture is {got}, but the frame's {plane} plane needs {want}.\n\
         help: give the luma texture the frame's size and GL_R8 (NV12) or GL_R16 (P010), the \
         chroma texture half the size rounded up and GL_RG8 or GL_RG16; for frames of another \
         size, drop the planes and make planes of textures of that size"
    )]
    PlaneTexture {
        /// The call that refused it.
        call: &'static str,
        /// `luma` or `chroma`.
        plane: &'static str,
        /// What the texture is, e.g. `1920 x 1080 x 1 channel of UNSIGNED_INT8`.
        got: String,
        /// What the plane needs.
        want: String,
    },

    /// A plane texture whose storage GL calls may change (mutable storage, made with
    /// `glTexImage2D`), or a name that is no texture (one the application deleted while the
    /// planes held it): the planes' size and format are checked by
    /// [`VideoPlanes::new`](crate::video::VideoPlanes::new) and must stay what they were.
    #[error(
        "{call}: the {plane} texture (GL name {texture}) has {storage}, but the planes need \
         immutable storage.\nhelp: make each plane texture with glTexStorage2D(GL_TEXTURE_2D, \
         1, format, width, height) (GL 4.2+ or ARB_texture_storage; NV12: GL_R8 + GL_RG8, \
         P010: GL_R16 + GL_RG16): GL then \
         fixes its size and format for the texture's life, and each frame is checked against \
         them before anything is copied; delete the textures only after dropping the planes"
    )]
    PlaneStorage {
        /// The call that refused it.
        call: &'static str,
        /// `luma` or `chroma`.
        plane: &'static str,
        /// The texture's GL name.
        texture: u32,
        /// What its storage is, e.g. `mutable storage (glTexImage2D)`.
        storage: String,
    },
}
