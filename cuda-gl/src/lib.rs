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
//! For a kernel that writes a texture in place with no PBO and no copy, register the texture as a
//! [`RegisteredImage`] with [`RegisterFlags::SURFACE_LOAD_STORE`] and pass
//! [`MappedImage::surface`] to the kernel.
//!
//! # The fast path
//!
//! The fastest interactive frame skips the PBO: register the texture itself with
//! [`RegisterFlags::SURFACE_LOAD_STORE`], map it, and let the kernel write it in place through
//! [`MappedImage::surface`] (`surf2Dwrite` in CUDA C). There is no `glTexSubImage2D` copy, so a
//! frame costs about one CUDA ⇄ GL handoff: the same as a kernel, a stream sync and a tiny GL
//! operation with no interop at all (see `docs/benchmarks.md`).
//!
//! ```no_run
//! use cuda_gl::{ImageTarget, LaunchConfig, RegisterFlags, RegisteredImage};
//! # fn demo(ctx: &std::sync::Arc<cuda_gl::Context>, stream: &cuda_gl::Stream,
//! #         plasma_surface: &cuda_gl::Function, tex: u32) -> cuda_gl::Result<()> {
//! let (w, h) = (1920u32, 1080u32); // `tex`: a w x h GL_RGBA8 texture (glTexStorage2D)
//! let flags = RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD;
//! let mut image = RegisteredImage::register(ctx, tex, ImageTarget::Texture2D, flags)?;
//! for frame in 0..600 {
//!     let mapped = image.map(stream)?;
//!     let surface = mapped.surface()?; // cached: no driver call to create it after frame 0
//!     // SAFETY: plasma_surface(cudaSurfaceObject_t, int, int, float) writes w x h texels.
//!     unsafe {
//!         plasma_surface.launch(
//!             LaunchConfig::for_image(w, h),
//!             stream,
//!             (surface, w as i32, h as i32, frame as f32 / 60.0),
//!         )?;
//!     }
//!     mapped.unmap()?; // GL commands issued after this see the kernel's writes
//!     // ... draw with `tex` ...
//! }
//! # Ok(())
//! # }
//! ```
//!
//! - The surface object is cached on the registration, one per array index and mip level, and
//!   reused while the driver returns the same CUDA array for that sub-resource (it does, map
//!   after map, for an unchanged texture); when the array changes, the old object is destroyed
//!   and a new one created; all are destroyed when the image is unregistered.
//!   [`MappedImage::create_surface`] is the uncached alternative, destroyed before the unmap.
//! - A [`Surface`] borrows the mapping guard, so using it after the unmap does not
//!   compile, just like a buffer's device pointer.
//! - **Several frames per handoff.** The handoff, not the kernel, is most of a frame's cost. For
//!   headless rendering, video or offline work, register a `GL_TEXTURE_2D_ARRAY` of K layers
//!   ([`ImageTarget::Texture2DArray`]), map it once, write layer `i` through
//!   [`MappedImage::surface_at`]`(i, 0)`, unmap once, and let GL consume all K: one handoff for K
//!   frames. [`MappedImage::layer_surfaces`]`::<K>(0, 0)` gives all K surfaces as one kernel
//!   argument (`struct { cudaSurfaceObject_t s[K]; }`).
//! - **Frames in flight.** Map/unmap order CUDA and GL on the GPU, so no `glFinish` or stream
//!   sync is needed between frames: with 2 or 3 registered textures in a ring, wait only for a
//!   GL fence of the frame that last used a texture before mapping it again.
//!
//! # Copies in and out of a mapped image
//!
//! The [`MappedArray`] of [`MappedImage::array`]`(layer, level)` (also of a batch's image
//! view) copies the whole array on the stream of the map, with its size checked
//! ([`Error::CopySize`]): [`MappedArray::copy_to_host`] and [`MappedArray::copy_from_host`] wait for the stream (the
//! slice is only borrowed); [`MappedArray::copy_to_device`], [`MappedArray::copy_from_device`],
//! [`MappedArray::copy_to_buffer`], [`MappedArray::copy_from_buffer`] and
//! [`MappedArray::copy_to_array`] are only queued.
//!
//! # A kernel of your own
//!
//! [`Module::from_ptx`] loads PTX text. Compile your kernels (`extern "C"`, so that their names
//! are not mangled) at build time with `nvcc -ptx -arch=compute_75 -o $OUT_DIR/kernels.ptx
//! kernels.cu` in a `build.rs` and `include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"))`
//! (the README shows the whole `build.rs`), or at run time with the `nvrtc` feature:
//! `Module::from_cuda_source(&ctx, src, &["--std=c++17"])`, which opens NVRTC at run time
//! (`$CUDA_GL_NVRTC_PATH`, else `libnvrtc.so.12`, `libnvrtc.so.13`, `libnvrtc.so`).
//!
//! # The GL crate you draw with
//!
//! Any: cuda-gl calls GL only through entry points it resolves itself from EGL or GLX, so `gl`
//! of any version, glow, or raw bindings all work, and none of them needs loading for cuda-gl's
//! sake. cuda-gl re-exports none of them (with feature `glow`, `cuda_gl::glow` is the glow whose
//! handles convert).
//!
//! # Safety model
//! Safe code cannot cause undefined behaviour through this crate. What that rests on:
//!
//! **Checked by the types** (misuse does not compile; see `tests/ui/`):
//! - a device pointer, array, surface or texture handle borrows its mapping guard, and the guard
//!   borrows the resource mutably and the stream: nothing outlives the unmap, a resource cannot
//!   be mapped twice, unregistered or dropped while mapped, nor its stream dropped;
//! - guards are `#[must_use]` (`buf.map(&s)?;` would unmap at once) and are neither `Send` nor
//!   `Sync`; the external ring's GL-calling types are not `Send` either;
//! - the auto traits of every public type are asserted in `tests/gpu_suite/auto_traits.rs`.
//!
//! **Checked at run time**, each with a typed error that says what to do:
//! - cuda-gl's own GL calls (queries, labels, fences, external memory) go through one table it
//!   resolves itself (`eglGetProcAddress`, `glXGetProcAddressARB`), never through the `gl`
//!   crate's global pointers, which safe code can overwrite; no check switches off because an
//!   application's loader is missing: a check that cannot run refuses the call
//!   ([`Error::GlCheckUnavailable`], [`Error::GlPlatformUnknown`]);
//! - the owning GL context: a registration remembers the EGL or GLX context current when it
//!   was made, and map, unmap, unregister and `Drop` refuse another one
//!   ([`Error::WrongGlContext`]) or none ([`Error::NoGlContext`]) before the driver sees the
//!   call. A handle value is not trusted alone (NVIDIA's EGL reuses a destroyed context's
//!   handle, and contexts of one share group see one another's shared objects): each context
//!   gets a labelled canary vertex array at its first use (vertex arrays are never shared), and
//!   its share group a labelled canary program (programs are shared); a context without its
//!   owner's canary is refused ([`Error::GlContextGone`]), so objects of a destroyed context
//!   are never mapped, waited on, relabelled or deleted through another, its share group's
//!   included. Cost per map and per unmap: one or two `*GetCurrentContext` calls,
//!   `glGetString(GL_VERSION)`, `glIsVertexArray`, `glIsProgram`, two `glGetObjectLabel`, and a
//!   process-wide lock over a list with one entry per context handle value seen (see
//!   `docs/benchmarks.md`);
//! - streams that capture a CUDA graph are refused ([`Error::StreamCapturing`],
//!   `cuStreamIsCapturing`) by every safe call whose safety needs its work to run when queued:
//!   map, unmap, copies in and out of mapped arrays, [`DeviceBuffer`] copies on a stream and
//!   `memset_async`, pinned-buffer copies, [`external::ExternalRing::write`] and its event,
//!   [`external::FrameStream::push_burst`] and its events, and cudarc copies through mapped
//!   views. The work of those calls that move bytes or record cuda-gl's events is queued on a
//!   private stream per context, joined to the caller's stream by events, so that a capture
//!   begun by another thread cannot take it (the private stream waits only for a record its
//!   query shows was not captured); cudarc copies through a view
//!   synchronize their stream when cudarc drops the view's guard, which invalidates a capture
//!   still open then (cudarc queues those copies itself, so a capture begun *and ended* during
//!   one cudarc call cannot be seen: taking a view is `unsafe` for that reason). Cost: a
//!   capture query per call, and two event records, an event query and two waits per call
//!   that queues work (a map costs the query only). (`Function::launch` is `unsafe` and
//!   may be captured; its `# Safety` says what the caller then keeps valid.);
//! - one registration per GL object: a second one is refused ([`Error::AlreadyRegistered`]);
//!   the claim is keyed by the share group's identity (its canary) and the name, so contexts
//!   that share objects see one claim and unrelated contexts their own; no label of the
//!   application's matters, and a claim lasts while the driver may hold the object mapped. cuda-gl's own GL buffers (external-memory imports,
//!   so ring and frame-stream slots) are claimed too and cannot be registered. Cost: at
//!   registration and import only;
//! - overlap is judged by storage, not handle: `array(0, 0)` and level 0 of the mipmapped array
//!   of one texture are one storage, and a copy between them is refused;
//! - external-memory imports check their first bytes one at a time in the process, so two
//!   threads importing one memory never borrow its bytes at once;
//! - leaked guards (`mem::forget`): each registration and each external-ring slot remembers that
//!   it is in use, and the next call waits for the work of the leaked guard before going on;
//! - objects are destroyed only after the GPU work that may use them: surface and texture
//!   objects wait for an event recorded at the unmap (cost: one `cuStreamWaitEvent` and one
//!   `cuEventRecord` per unmap of an image with surface objects), pinned host memory waits for an event recorded after each
//!   asynchronous copy before the host reads, writes or frees it;
//! - streams, events and resources of another CUDA context are refused;
//! - copies in and out of mapped arrays: sizes against the array, a mapped buffer or array at
//!   the other end mapped on the same stream (so neither is unmapped under the copy), host
//!   copies complete before they return;
//! - bytes handed to the driver are checked: kernel arguments against the PTX declaration and
//!   the argument count, sizes and offsets with checked arithmetic, and copies and views refuse
//!   arrays of another mapping and writes into read-only registrations;
//! - the waits cuda-gl adds for safety (pinned memory, retired objects, the external ring's
//!   fences) have a limit and end in [`Error::Timeout`]; a `Drop` that cannot wait leaks the
//!   object (and logs) rather than free it under running work. Copies to and from host slices,
//!   `to_vec`, and the fallback after a leaked guard wait for their stream or context as a
//!   blocking CUDA call does.
//!
//! **Vouched for by the caller** (`unsafe`, each with numbered `# Safety` preconditions):
//! - [`Function::launch`]: the arguments are what the kernel expects, and it runs on the
//!   mapping's stream (or before its unmap) when it uses a mapping;
//! - [`Module::from_cubin`]: the bytes are a whole compiler-written cubin or fatbin (the driver
//!   takes no length; the header checks refuse junk but cannot bound every offset inside);
//! - loaders and raw handles: [`sys::load_from`], [`Stream::from_raw`],
//!   and implementations of [`AsStream`], [`KernelParam`], [`KernelArgs`] and [`DeviceCopy`];
//! - the external ring's `read_unordered`, the one door past its ordering;
//! - with `cudarc`, `as_cudarc_slice[_mut]`: no thread begins and ends a graph capture on the
//!   stream of a cudarc copy through the view while that copy's call runs.
//!
//! **Known limits**, where the checks rest on what the platform promises:
//! - aliasing that GL itself sets up is not seen: two names over one storage (a
//!   `glTextureView`, EGLImage siblings) can be registered once each;
//! - GL entry points come from `eglGetProcAddress` / `glXGetProcAddressARB`, which libglvnd and
//!   EGL 1.5 define for core functions too; a process where EGL and GLX both report a current
//!   context (possible only without libglvnd) has its calls made through EGL's table;
//! - a synchronous GL debug callback that calls back into cuda-gl from inside cuda-gl's own GL
//!   calls deadlocks (the registries are locked across those calls) rather than race;
//! - CUDA graph captures begun by other threads never take cuda-gl's copies, memsets or
//!   ordering events; on a stream it does not own, cuda-gl makes only records and waits, and
//!   queries its own event. The driver itself is not safe against one overlap: on driver 580, a call that
//!   queues anything on a stream (cuda-gl's map or event record, cudarc's own `memset_zeros`)
//!   while another thread is inside `cuStreamBeginCapture` on that stream crashes the process
//!   in the driver (`docs/repro/capture_race.py`). Do not begin a capture of a stream that
//!   another thread is queueing work on. A capture that took cuda-gl's event record or wait is
//!   invalidated (its `end_capture` fails) rather than left holding cuda-gl's work (see the
//!   private stream's docs in `queue.rs`);
//! - a context's identity is a vertex array object cuda-gl labels in it (vertex arrays are never
//!   shared), and a share group's is a program it labels (programs are shared): an application
//!   that deletes or relabels objects it did not create makes cuda-gl refuse that context's
//!   objects, never alias them.
//!
//! The CUDA context is bound by the crate itself before every call, `Drop` included.
//!
//! # Where things live
//! Dependencies run one way, from the driver up (`ci/layering.sh` checks it, with file sizes and
//! import cycles):
//! - `result/`: one function per driver call, and the only code that calls the driver, with
//!   its error type [`CudaError`] (`result/error.rs`); it depends on nothing else of the crate;
//! - `error/`: the [`Error`] enum and the refusals before the driver ([`UsageError`]), their
//!   [`ErrorKind`] and [`Error::is_unsupported_setup`] (`kind`), the conversion from the driver
//!   layer's errors (`convert`), the `help:` texts (`help`) and `egl`'s error types;
//! - the CUDA handles: `context`, `device`, `stream` ([`Stream`], [`Event`]), `module`
//!   ([`Module`], [`Function`], launches; `module/binary` checks cubin and fatbin images),
//!   `memory` ([`DeviceBuffer`], [`PinnedBuffer`]);
//! - `gl_object` (image targets and flags) and `glapi/`, the only code that calls OpenGL: its
//!   own table of entry points (`platform`, `table`), which context owns an object (`current`),
//!   the registry of claimed GL objects (`claim`), fences, labels and queries;
//! - `graphics/`: registrations and their state machine (`registration`, `retire`,
//!   `classify`), the registered types (`buffer`, `image`, and `registered`: the generic
//!   `Registered<K>` and `Mapped<'a, K>` with the methods they share), the mapping views
//!   (`array`, `surface`, `texture`, `copy`) and batches (`batch`);
//! - [`display`]: the display target (`target`), its GL texture and pixel buffer (`gl_side`)
//!   and its `report`;
//! - `external` (Unix): external memory shared with GL: `external_gl` (the checked context),
//!   `exportable` (the CUDA allocation), `import` (the checked GL import), `ring` (`ExternalRing`),
//!   `frame_stream` (`FrameStream`), `frame` (what its closures get), `slot` (their slots);
//! - features: `egl` (module `egl`: headless contexts), `cudarc` (module `cudarc_interop`),
//!   `nvrtc` (module `nvrtc`).
//!
//! # Failures in `Drop`
//! `Drop` never panics. A failed unmap or unregister is logged through the `log` crate, and when
//! the failure carries a driver code it is also recorded on the context:
//! [`Context::synchronize`] and [`Context::check_drop_errors`] report it as
//! [`Error::DeferredDrop`]. Failures without one (another GL context current, a wait that timed
//! out) are only logged. Call `unmap()` or `unregister()` to get every error directly.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod context;
mod device;
pub mod display;
mod error;
mod gl_name;
mod gl_object;
mod glapi;
mod graphics;
mod memory;
mod module;
mod queue;
mod result;
mod stream;

#[cfg(feature = "egl")]
#[cfg_attr(docsrs, doc(cfg(feature = "egl")))]
pub mod egl;

#[cfg(feature = "cudarc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
pub mod cudarc_interop;

#[cfg(feature = "nvrtc")]
#[cfg_attr(docsrs, doc(cfg(feature = "nvrtc")))]
pub mod nvrtc;

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
    #[doc = include_str!("../../docs/guide/troubleshooting.md")]
    pub struct Troubleshooting;
}

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
