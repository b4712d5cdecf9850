//! Zero-copy CUDA <-> OpenGL interop.
//!
//! Register a GL buffer or image with CUDA, map it on a stream, let a kernel read or write it in
//! place, and let ownership unmap and unregister it in the right order:
//!
//! ```text
//! MappedBuffer / MappedImage / MappedAll     (borrow the resource and the stream)
//!   -> unmap on the stream of the map
//! RegisteredBuffer / RegisteredImage         (hold Arc<Context>)
//!   -> unregister
//! Context                                    (retained primary context)
//!   -> release
//! driver                                     (libcuda, opened once per process)
//! ```
//!
//! # Why not cudarc?
//!
//! cudarc is Rust's general CUDA crate (memory, kernels, cuBLAS, NVRTC and more), and cuda-gl
//! works with it: feature `cudarc` maps on a cudarc stream, registers in a cudarc context and
//! lends a mapped buffer as a cudarc slice ([cudarc guide]). But cudarc has no OpenGL interop
//! (its driver bindings have no `cuGraphicsGL*` call), and safe interop needs more of the CUDA
//! layer under it than handles, so cuda-gl has its own: the drops above run in that order, since
//! each borrows or holds the next; every map, unmap and drop first checks that the GL context
//! owning the object is current ([`Error::WrongGlContext`]); each GL object is claimed, so it
//! cannot be registered twice ([`Error::AlreadyRegistered`]); a stream capturing a CUDA graph is
//! refused by every call whose safety needs its work to run when queued
//! ([`Error::StreamCapturing`]); and libcuda is opened at run time, no toolkit needed, with
//! [`Error::Load`] when there is no driver (cudarc also loads it at run time by default, but
//! panics when it cannot). Errors that a `Drop` cannot return are recorded on the context
//! ([`Context::check_drop_errors`]), as cudarc's `CudaContext::check_err` does.
//!
//! # The whole cycle
//!
//! Register a pixel buffer, map it, let a kernel write it, unmap, and draw from it. A GL context
//! must be current (a GLFW window's, or [`egl::HeadlessContext`] with the `egl` feature); the
//! `gl` crate is loaded for this program's own GL calls (cuda-gl needs no loader):
//!
//! ```no_run
//! use cuda_gl::{Context, LaunchConfig, Module, RegisterFlags, RegisteredBuffer, Stream, StreamFlags};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let ptx = String::new();
//! let ctx = Context::for_current_gl()?; // the CUDA device behind the current GL context
//! let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
//! let module = Module::from_ptx(&ctx, &ptx)?; // e.g. plasma-demo/kernels/plasma.ptx
//! let plasma = module.function("plasma_pbo")?;
//!
//! let (w, h) = (1280u32, 720u32);
//! let (mut pbo, mut tex) = (0, 0);
//! // SAFETY: a GL context is current and its function pointers are loaded.
//! unsafe {
//!     gl::GenBuffers(1, &mut pbo);
//!     gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, pbo);
//!     let bytes = (w * h * 4) as isize;
//!     gl::BufferData(gl::PIXEL_UNPACK_BUFFER, bytes, std::ptr::null(), gl::STREAM_DRAW);
//!     gl::GenTextures(1, &mut tex);
//!     gl::BindTexture(gl::TEXTURE_2D, tex);
//!     gl::TexStorage2D(gl::TEXTURE_2D, 1, gl::RGBA8, w as i32, h as i32);
//! }
//! let mut frame = RegisteredBuffer::register(&ctx, pbo, RegisterFlags::WRITE_DISCARD)?;
//!
//! for i in 0..100 {
//!     let mapped = frame.map(&stream)?; // map on the stream
//!     // SAFETY: the kernel writes w * h RGBA8 pixels, which is the size of the mapped PBO.
//!     unsafe {
//!         plasma.launch(
//!             LaunchConfig::for_image(w, h),
//!             &stream,
//!             (mapped.device_ptr(), w as i32, h as i32, i as f32 / 60.0),
//!         )?;
//!     }
//!     mapped.unmap()?; // unmaps on the same stream; dropping the guard does it too
//!     // SAFETY: as above; the PBO is bound to GL_PIXEL_UNPACK_BUFFER, so the pointer is an offset.
//!     unsafe {
//!         gl::TexSubImage2D(
//!             gl::TEXTURE_2D, 0, 0, 0, w as i32, h as i32,
//!             gl::RGBA, gl::UNSIGNED_BYTE, std::ptr::null(),
//!         );
//!         // ... draw a fullscreen triangle that samples `tex`, swap buffers ...
//!     }
//! }
//! frame.unregister()?; // or let it drop
//! # Ok(())
//! # }
//! ```
//!
//! # Where to go next
//!
//! The guide, page by page ([index]), with its examples compiled as this crate's doctests:
//! - [the fast path]: a texture written in place through [`MappedImage::surface`] (register it
//!   with [`RegisterFlags::SURFACE_LOAD_STORE`]; no PBO, no copy), K frames per handoff, frames
//!   in flight;
//! - [API at a glance]: registering, mapping, surfaces and textures, copies in and out of a
//!   [`MappedArray`], and a kernel of your own ([`Module::from_ptx`], NVRTC);
//! - [the GL context]: what cuda-gl needs from it, headless contexts, and any GL crate (cuda-gl
//!   resolves the GL functions it calls itself, so nothing needs loading for its sake);
//! - [streaming]: [`external::FrameStream`] and [`external::ExternalRing`], no map or unmap;
//! - [`display::DisplayTarget`]: frames on screen on any GL, device memory shown in one call
//!   ([its guide page](https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/display.md));
//! - [`video`]: decoded NV12 and P010 frames (NVDEC's output) converted to RGBA8 on the GPU,
//!   with a CPU reference that gives the same bytes;
//! - [troubleshooting]: every error with its cause and fix; [benchmarks]: the figures.
//!
//! # Safety model
//!
//! Safe code cannot cause undefined behaviour through this crate. The compiler keeps pointers,
//! arrays, surfaces and textures from outliving their mapping and a resource from being mapped
//! twice or unregistered while mapped; run-time checks, each with a typed error, keep what types
//! cannot (the owning GL context, one registration per GL object, graph captures, leaked
//! guards, kernel arguments, copy sizes, objects destroyed only after the GPU work that uses
//! them); what the caller vouches for is `unsafe`, with numbered `# Safety` preconditions
//! ([`Function::launch`], [`Module::from_cubin`], raw handles and loaders). The whole list, its
//! costs and its known limits: [safety model].
//!
//! # Failures in `Drop`
//!
//! `Drop` never panics. A failed unmap or unregister is logged through the `log` crate, and when
//! the failure carries a driver code it is also recorded on the context:
//! [`Context::synchronize`] and [`Context::check_drop_errors`] report it as
//! [`Error::DeferredDrop`]. Failures without one (another GL context current, a wait that timed
//! out) are only logged. Call `unmap()` or `unregister()` to get every error directly
//! ([faults and recovery]).
//!
//! [cudarc guide]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/cudarc.md
//! [index]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/README.md
//! [the fast path]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/fast-path.md
//! [API at a glance]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/api.md
//! [the GL context]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/gl-context.md
//! [streaming]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/streaming.md
//! [troubleshooting]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/troubleshooting.md
//! [benchmarks]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/benchmarks.md
//! [safety model]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/safety.md
//! [faults and recovery]: https://github.com/cuda-gl/cuda-gl/blob/main/docs/guide/faults.md
// Links into the `egl` module, which exists with that feature only: without it, to docs.rs.
#![cfg_attr(
    feature = "egl",
    doc = "[`egl::HeadlessContext`]: crate::egl::HeadlessContext"
)]
#![cfg_attr(
    not(feature = "egl"),
    doc = "[`egl::HeadlessContext`]: https://docs.rs/cuda-gl/latest/cuda_gl/egl/struct.HeadlessContext.html"
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod context;
mod device;
pub mod display;
mod error;
mod fresh;
mod gl_name;
mod gl_object;
mod glapi;
mod graphics;
mod image;
mod memory;
mod mode_choice;
mod module;
mod queue;
mod result;
mod source;
mod stream;
pub mod video;
mod wait;
mod wait_limit;

#[cfg(feature = "egl")]
#[cfg_attr(docsrs, doc(cfg(feature = "egl")))]
pub mod egl;

#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub mod cudarc_interop;

#[cfg(feature = "nvrtc")]
#[cfg_attr(docsrs, doc(cfg(feature = "nvrtc")))]
pub mod nvrtc;

#[cfg(feature = "wgpu")]
#[cfg_attr(docsrs, doc(cfg(feature = "wgpu")))]
pub mod wgpu_interop;

#[cfg(any(feature = "egui", feature = "egui-wgpu"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "egui", feature = "egui-wgpu"))))]
pub mod egui_interop;

/// The cudarc crate that the `cudarc` feature builds against, re-exported so that its version
/// always matches.
#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub use cudarc;

#[cfg(unix)]
#[cfg_attr(docsrs, doc(cfg(unix)))]
pub mod external;

pub use context::Context;
pub use device::{Device, GlDeviceList, gl_devices};
pub use error::{DeviceLabel, Error, ErrorKind, Result, UsageError, gl_error_name};
#[cfg(feature = "glow")]
pub use gl_name::ZeroName;
pub use gl_name::{BufferName, ImageName, RenderbufferName, TextureName};
/// glow 0.18, the version whose handles feature `glow` converts (a handle of another glow
/// version is another type, and does not convert).
#[cfg(feature = "glow")]
#[cfg_attr(docsrs, doc(cfg(feature = "glow")))]
pub use glow;
pub use graphics::{
    ArrayFormat, BufferMapping, GlBuffer, GlImage, ImageTarget, MapFlags, MapSet, Mapped,
    MappedAll, MappedArray, MappedBuffer, MappedImage, MappedMipmappedArray, RegisterFlags,
    Registered, RegisteredBuffer, RegisteredImage, ResourceKind, Surface, SurfaceObject, Tex,
    TexDesc, TexObject, ViewSet, map_all,
};
pub use memory::{DeviceBuffer, DeviceCopy, DevicePtr, PinnedBuffer};
pub use module::{Function, KernelArgs, KernelParam, LaunchConfig, Module};
pub use result::CudaError;
pub use stream::{AsStream, Event, Stream, StreamFlags};
pub use wait_limit::{set_wait_limit, wait_limit};

/// The README's examples, compiled as doctests.
#[cfg(all(doctest, feature = "egl"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The guide's examples (`docs/guide/`), compiled as doctests, so that what users copy builds.
#[cfg(doctest)]
mod guide_doctests {
    #[cfg(feature = "egl")]
    #[doc = include_str!("../../docs/guide/gl-context.md")]
    pub struct GlContext;
    #[doc = include_str!("../../docs/guide/fast-path.md")]
    pub struct FastPath;
    #[cfg(unix)]
    #[doc = include_str!("../../docs/guide/streaming.md")]
    pub struct Streaming;
    #[doc = include_str!("../../docs/guide/api.md")]
    pub struct Api;
    #[doc = include_str!("../../docs/guide/cudarc.md")]
    pub struct Cudarc;
    #[doc = include_str!("../../docs/guide/display.md")]
    pub struct Display;
    #[doc = include_str!("../../docs/guide/troubleshooting.md")]
    pub struct Troubleshooting;
    #[doc = include_str!("../../docs/guide/safety.md")]
    pub struct Safety;
    #[doc = include_str!("../../docs/guide/video.md")]
    pub struct Video;
    #[cfg(feature = "wgpu")]
    #[doc = include_str!("../../docs/guide/wgpu.md")]
    pub struct Wgpu;
}

/// wgpu 30, the version feature `wgpu` builds against: `find_adapter`, `open_device`,
/// `WgpuTarget` and `SharedTexture` take and give its `Adapter`, `Device`, `Queue` and
/// `Texture`, which are other types in another major version. Depend on `wgpu = "30"`
/// yourself, or name it as `cuda_gl::wgpu`.
#[cfg(feature = "wgpu")]
#[cfg_attr(docsrs, doc(cfg(feature = "wgpu")))]
pub use wgpu;

/// egui 0.37, the version features `egui` and `egui-wgpu` build against (`EguiImage` and
/// `EguiWgpuImage` give egui's `SizedTexture` and `TextureId`). egui 0.37 needs Rust 1.95.
#[cfg(any(feature = "egui", feature = "egui-wgpu"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "egui", feature = "egui-wgpu"))))]
pub use egui;

/// egui-wgpu 0.37, the version feature `egui-wgpu` builds against (`EguiWgpuImage::update`
/// takes its `Renderer`).
#[cfg(feature = "egui-wgpu")]
#[cfg_attr(docsrs, doc(cfg(feature = "egui-wgpu")))]
pub use egui_wgpu;

/// egui_glow 0.37, the version feature `egui` builds against (`EguiImage::update` hands your
/// closure a texture of its glow, `egui_glow::glow`, 0.17: not the `glow` feature's 0.18).
#[cfg(feature = "egui")]
#[cfg_attr(docsrs, doc(cfg(feature = "egui")))]
pub use egui_glow;

/// The raw bindings, re-exported for calls this crate does not wrap.
pub use cuda_gl_sys as sys;

/// The driver API version of the loaded driver (e.g. 13000 for CUDA 13.0).
///
/// # Errors
/// [`Error::Load`] when the driver cannot be opened or is older than 12.0.
#[doc(alias = "cuDriverGetVersion")]
pub fn driver_version() -> Result<i32> {
    Ok(cuda_gl_sys::driver_version()?)
}
