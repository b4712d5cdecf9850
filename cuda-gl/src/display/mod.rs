//! Frames on screen on any machine: a [`DisplayTarget`] is a GL texture that CUDA writes every
//! frame and GL draws, through the fastest path that works here, with a [`Report`] that says
//! which and why.
//!
//! The frame code is the same in every mode: [`DisplayTarget::frame`] gives a [`Frame`] that a
//! kernel draws through its [`surface`](Frame::surface) (`surf2Dwrite`) or into its
//! [`pixels`](Frame::pixels) (pitched device memory); [`Frame::present`] puts it on the
//! texture (a frame dropped unpresented shows nothing). A `WgpuTarget` (feature `wgpu`) gives
//! the same [`Frame`]: what its surface and pixels are, and what its present does, on wgpu's
//! Vulkan and GL backends, are in [`Frame`]'s docs. On a `DisplayTarget` the modes differ in
//! how:
//!
//! - [`Mode::Interop`]: the texture is registered with CUDA and mapped for a frame that asks for
//!   its surface, which is the texture's own: a surface frame is written in place, with no copy
//!   (the fast path). Pixels are a pixel buffer, also registered, mapped for a frame that asks
//!   for them and uploaded into the texture by GL at the present (a copy on the GPU). Needs GL
//!   on the CUDA GPU, NVIDIA's.
//! - [`Mode::Staged`]: GL is not NVIDIA's, or CUDA cannot register its objects (a laptop whose
//!   GL runs on the integrated GPU, Mesa's llvmpipe in a container, WSL2, VirtualGL). Each
//!   frame (its pixels, or the CUDA array its surface writes) is copied into pinned host memory
//!   in bands (asynchronously, a buffer per band: a small first one, so that GL starts soon,
//!   then larger ones), and GL uploads each band straight from that memory as soon as its
//!   copy has finished, while the next bands are copied (on NVIDIA's GL each band is written
//!   into a pixel buffer of its own and uploaded from it): the present waits for
//!   the frame's kernel and copies, and the texture holds the frame when it returns. (A copy straight
//!   into a persistently mapped GL buffer registered with CUDA would save the CPU copy, but GL
//!   owns that memory and frees it with its context, whenever the application destroys it,
//!   while CUDA's registration of it would live on: not done.)
//! - [`Mode::Stream`] (forced only): each frame is copied on the GPU into a slot of CUDA memory
//!   that GL imported, and GL copies finished slots into the texture; CUDA and GL never hand
//!   over per frame (no map), so frames flow at the rate of the slower API, and the texture
//!   shows a frame up to two presents late until [`DisplayTarget::flush`]. Needs NVIDIA's GL on
//!   the CUDA GPU with `GL_EXT_memory_object_fd`.
//!
//! [`DisplayTarget::new`] with `None` tries them in that order ("auto"); `Some(mode)` forces
//! one. [`DisplayTarget::show`] puts any device memory, an image of a [`Layout`], on screen in
//! one call, resizing the target to it. [`DisplayTarget::resize`] re-creates the texture and what CUDA holds of it, in
//! the order that leaks nothing.
//!
//! ```no_run
//! use cuda_gl::display::{DisplayTarget, Format, Layout};
//! use cuda_gl::{Context, Device, Stream, StreamFlags};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A GL context is current (a window's, or a HeadlessContext); CUDA on the GPU of your choice.
//! let ctx = Context::new(&Device::get(0)?)?;
//! let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
//! let layout = Layout::packed((1280, 720), Format::Rgba8)?;
//! let (mut target, report) = DisplayTarget::new(&ctx, layout, None)?;
//! println!("{report}"); // e.g. "display: interop; GL: NVIDIA ...; CUDA: ..."
//! for _ in 0..3 {
//!     let frame = target.frame(&stream)?;
//!     let surface = frame.surface()?; // for your kernel on `stream`: surf2Dwrite(.., x * 4, y)
//!     # let _ = surface;
//!     frame.present()?;
//!     // ... draw target.texture() with GL ...
//! }
//! // Or plain device memory: frame.pixels() gives the address and layout (pitch) of rows for
//! // a kernel that writes them.
//! # Ok(())
//! # }
//! ```
//!
//! Queue every frame's kernel on the frame's stream, or order it before the frame's present:
//! in interop mode the texture is mapped for CUDA only until the present, and in the copying
//! modes the present's copy reads what the kernel wrote. (The launch is `unsafe` for this: a
//! kernel on another stream, unordered, races the copy or writes an unmapped texture.) A frame
//! on another stream than the last one first waits for the last present's copy. A kernel
//! writes every texel of the surface: in interop mode its contents are undefined at each
//! frame.
//!
//! One-channel formats ([`Format::R8`], [`Format::R32F`]) are shown grey unless the target has
//! a [`ColorMap`] ([`DisplayTarget::set_color_map`]: a [`Palette`], viridis say, spread from a
//! `min` to a `max` of your data, applied on the GPU to what [`DisplayTarget::show`] is given,
//! which then shows as RGBA8). Grey: the texture's
//! swizzle reads red into red, green and blue, and alpha is 1. `R8` maps 0 to black and 255 to
//! white; `R32F` maps 0.0 to black and 1.0 to white, and a shader that writes the sample to an
//! 8-bit framebuffer clamps what lies outside and rounds the rest to one of 256 levels (GL
//! lets a driver round either way: expect `round(v * 255)` within one).
//!
//! **Rows.** Row 0 of a frame (`y = 0` of its surface, the first row of its pixels or of the
//! memory given to [`DisplayTarget::show`]) is the texture's row 0, GL's first row: drawn with
//! texture coordinate `t = 0` at the bottom (GL's convention, and the examples'), it is the
//! bottom row on screen. An image stored top row first shows upside down unless the draw
//! flips `t`.
//!
//! **Reading the texture back** (tests, screenshots): [`DisplayTarget::read_pixels`] gives the
//! texture's pixels as stored, in its format (a one-channel target's one channel, before the
//! grey swizzle), row 0 first. What a draw shows (the swizzle applied) is read by drawing it,
//! for example into an [`egl::Offscreen`] read back with [`read_rgba8`].
//!
// The `egl` module exists with that feature only: without it, the links go to docs.rs.
#![cfg_attr(feature = "egl", doc = "[`egl::Offscreen`]: crate::egl::Offscreen")]
#![cfg_attr(
    feature = "egl",
    doc = "[`read_rgba8`]: crate::egl::Offscreen::read_rgba8"
)]
#![cfg_attr(
    not(feature = "egl"),
    doc = "[`egl::Offscreen`]: https://docs.rs/cuda-gl/latest/cuda_gl/egl/struct.Offscreen.html"
)]
#![cfg_attr(
    not(feature = "egl"),
    doc = "[`read_rgba8`]: https://docs.rs/cuda-gl/latest/cuda_gl/egl/struct.Offscreen.html#method.read_rgba8"
)]

mod colormap;
#[cfg(all(test, feature = "egl", feature = "cudarc"))]
mod cudarc_event_tests;
mod gl_buffer;
mod interop;
mod mode;
mod present;
pub(crate) mod show;
mod staged;
mod stream;
mod target;
mod texture;

pub use crate::error::DisplayError;
// For wgpu's modes (feature `wgpu`), which implement the same interface.
pub use crate::image::{DeviceImage, Format, Layout};
pub use crate::mode_choice::{Mode, Report};
pub use crate::source::ShowSource;
pub use colormap::{ColorMap, Palette};
#[cfg(feature = "wgpu-gl")]
pub(crate) use interop::map_failed;
pub use mode::Frame;
#[cfg_attr(not(feature = "wgpu"), allow(unused_imports))]
pub(crate) use present::{Canvas, CopyOut, CopyingFrame, Present, PresentFrame, Source};
#[cfg_attr(not(feature = "wgpu"), allow(unused_imports))]
pub(crate) use show::{CheckedStream, Kernels, ShowTarget};
#[cfg(feature = "wgpu")]
pub(crate) use staged::{Band, bands_for_client_upload};
pub use target::DisplayTarget;
#[cfg(feature = "wgpu-gl")]
pub(crate) use texture::TextureObject;
