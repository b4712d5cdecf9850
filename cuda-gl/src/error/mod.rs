//! Errors: one enum for every failure, with the call that failed, the driver's code and what to
//! do (a `help:` line). [`CudaError`] is the driver layer's (`crate::result`, converted in
//! `convert.rs`); refusals before the driver are [`UsageError`]s (`usage.rs`), the display's
//! [`DisplayError`]s (`display.rs`) and the video's [`VideoError`]s (`video.rs`); `egl.rs` and
//! `wgpu.rs` hold those features' errors here, so that no module this one uses depends on them;
//! [`ErrorKind`] (`kind.rs`) classes each variant.

use crate::result::CudaError;
use cuda_gl_sys::LoadError;

mod convert;
mod display;
#[cfg(feature = "egl")]
pub(crate) mod egl;
mod help;
mod kind;
mod label;
mod usage;
mod video;
#[cfg(feature = "wgpu")]
pub(crate) mod wgpu;

pub use display::DisplayError;
pub use help::gl_error_name;
use help::{context_unusable_help, gl_target_name, jit_log, target_help, unsupported_image_help};
pub use kind::ErrorKind;
pub use label::DeviceLabel;
use label::labels;
pub use usage::UsageError;
pub use video::VideoError;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error cuda-gl returns.
///
/// The variants for the failures users meet most end with a `help:` line that says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library could not be opened or is too old.
    #[error(transparent)]
    Load(#[from] LoadError),

    /// A driver call failed in a way with no more specific variant. Converting a [`CudaError`]
    /// gives this variant, except for the codes that leave the context unusable, which give
    /// [`Error::ContextUnusable`].
    #[error(transparent)]
    Cuda(CudaError),

    /// No OpenGL context is current on this thread. The driver reports this as
    /// `CUDA_ERROR_INVALID_GRAPHICS_CONTEXT`, or, when registering, as `CUDA_ERROR_INVALID_VALUE`;
    /// cuda-gl asks EGL/GLX which context is current to tell it apart from a bad name.
    #[error(
        "{source}\nhelp: no OpenGL context is current on this thread. Make the GL context that \
         owns the object current on the calling thread (GLFW: `window.make_current()`; \
         headless: `cuda_gl::egl::HeadlessContext::make_current`) before registering, \
         mapping, unmapping, unregistering or dropping GL resources, or asking for the GL \
         devices. If that GL context was destroyed, its objects are lost to CUDA: drop their \
         registrations (failures are logged) and register the objects of a live GL context"
    )]
    NoGlContext {
        /// The driver's error.
        source: CudaError,
    },

    /// The GL name does not name an object of the kind that was registered, or the object has
    /// no storage (e.g. a buffer whose size is 0).
    #[error(
        "{source}\nhelp: GL name {name} is not a {kind} in the current OpenGL context. Create \
         it with glGen*/glCreate* and give it storage of a non-zero size (glBufferData / \
         glTexImage* / glTexStorage*) before registering, check the image target matches how the texture was \
         created, and check that the context that owns it is current"
    )]
    NotAGlObject {
        /// The GL name that was passed.
        name: u32,
        /// What it was registered as, e.g. `buffer` or `GL_TEXTURE_2D texture`.
        kind: String,
        /// The driver's error.
        source: CudaError,
    },

    /// The GL context and the CUDA context are on different GPUs.
    ///
    /// Checked with `cuGLGetDevices` before registering: the driver itself accepts such a
    /// registration (seen on driver 580), and the GL object is then not the memory CUDA maps.
    #[error(
        "the current OpenGL context runs on {gl}, but the CUDA context is on {cuda}.\nhelp: \
         interop needs both on one GPU: create the CUDA context with \
         `Context::for_current_gl()` (or on a device from `cuda_gl::gl_devices()`), or create the \
         GL context on the CUDA device (`egl::HeadlessContext::for_cuda_device`)",
        gl = labels(.gl_devices)
    )]
    WrongDevice {
        /// The CUDA devices behind the current GL context.
        gl_devices: Vec<DeviceLabel>,
        /// The device of the CUDA context that tried to register.
        cuda: Box<DeviceLabel>,
    },

    /// The GL object is already registered with CUDA by this process, or held by cuda-gl
    /// (staged [`VideoPlanes`](crate::video::VideoPlanes)): two registrations could be mapped
    /// and written at once, and GL must not write a texture CUDA has mapped.
    #[error(
        "GL {kind} {name} is already registered with CUDA, or held by cuda-gl's video planes, in \
         this GL share group.\nhelp: register each GL object once, and keep it registered (or \
         the planes) while it lives; drop or `unregister()` the first, or the planes, first"
    )]
    AlreadyRegistered {
        /// The GL name.
        name: u32,
        /// What it was registered as.
        kind: String,
    },

    /// The PTX targets a newer ISA than this driver can compile
    /// (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`).
    #[error(
        "{source}\nhelp: this PTX was produced by a newer CUDA compiler than the installed driver \
         (CUDA {}.{}) supports. Update the NVIDIA driver, or compile the kernel for an older PTX \
         ISA (e.g. with CUDA 12.0's NVRTC, as `cargo xtask ptx` does)",
        .driver_version / 1000, (.driver_version % 1000) / 10
    )]
    PtxTooNew {
        /// The driver API version (e.g. 12020 for 12.2).
        driver_version: i32,
        /// The driver's error.
        source: CudaError,
    },

    /// The module image is not valid PTX or cubin: the driver refused it, or cuda-gl's checks
    /// did before the driver was called (the source's call is then
    /// `cuModuleLoadDataEx (not called)`).
    #[error(
        "{source}\nhelp: the bytes are not a valid PTX or cubin module, or (with \
         CUDA_ERROR_NO_BINARY_FOR_GPU) a cubin built for another GPU architecture: build it for \
         this GPU's sm_XY, or load PTX{}",
        jit_log(.log)
    )]
    InvalidModule {
        /// The JIT compiler's error log, if it wrote one, or what cuda-gl's checks found.
        log: String,
        /// The driver's error.
        source: CudaError,
    },

    /// The GL context is not an NVIDIA one (a software renderer such as Mesa llvmpipe, or WSL
    /// without the NVIDIA OpenGL driver), so CUDA cannot see its objects.
    #[error(
        "{source}\nhelp: the current OpenGL context is not provided by the NVIDIA driver (for \
         example Mesa's llvmpipe software renderer, or WSL without NVIDIA's OpenGL). CUDA can \
         only register objects of an NVIDIA GL context: run on the NVIDIA GPU (on Linux with \
         GLVND: __GLX_VENDOR_LIBRARY_NAME=nvidia or __EGL_VENDOR_LIBRARY_FILENAMES pointing at \
         10_nvidia.json), or use the host staging path"
    )]
    NotNvidiaGl {
        /// The driver's error.
        source: CudaError,
    },

    /// A mapped image has no sub-resource at this (array index, mip level).
    #[error(
        "{source}\nhelp: the mapped image has no array at index {index}, mip level {level}. \
         Index counts layers of a 2D array texture (or cube map faces, 0..6) and must be 0 \
         otherwise; level must be below the texture's mip level count"
    )]
    InvalidSubresource {
        /// The array index asked for.
        index: u32,
        /// The mip level asked for.
        level: u32,
        /// The driver's error.
        source: CudaError,
    },

    /// A call refused before the driver saw it, because of its arguments or the state of the
    /// objects it was given: a GL name 0, an index out of range, a stream of another CUDA
    /// context, and the others of [`UsageError`]. Match `Error::Usage(_)` for any of them.
    #[error(transparent)]
    Usage(#[from] UsageError),

    /// A display call refused before it did anything
    /// ([`DisplayError`](crate::display::DisplayError): bad input, or a target whose GL objects
    /// the application deleted). Of kind [`ErrorKind::Usage`].
    #[error(transparent)]
    Display(#[from] DisplayError),

    /// A [`video`](crate::video) call refused before it did anything
    /// ([`VideoError`](crate::video::VideoError): a frame layout, memory or destination that
    /// does not fit). Of kind [`ErrorKind::Usage`].
    #[error(transparent)]
    Video(#[from] VideoError),

    /// An argument was rejected before the driver was called, for a reason rare enough to have
    /// no [`UsageError`] of its own (e.g. unknown [`RegisterFlags`](crate::RegisterFlags) bits).
    /// The message ends with a `help:` line.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// cuda-gl or the driver broke one of cuda-gl's own invariants (e.g. a driver call succeeded
    /// but returned an impossible value). The call was refused; nothing was left half done.
    #[error(
        "internal error: {what}.\nhelp: this is a bug of cuda-gl or of the driver; please \
         report it with the driver version and the calls that led to it"
    )]
    Internal {
        /// What went wrong.
        what: String,
    },

    /// The device lacks a feature that [`external`](crate::external) memory needs (virtual
    /// memory management, or POSIX file descriptor handles).
    #[error(
        "{device} does not support {feature}, which external memory needs.\nhelp: use the \
         map/unmap path (RegisteredBuffer) instead"
    )]
    ExternalMemoryUnsupported {
        /// The device.
        device: Box<DeviceLabel>,
        /// The missing feature, e.g. `virtual memory management`.
        feature: &'static str,
    },

    /// cuda-gl's CUDA driver and the library that shares a context with it (cudarc, say) see
    /// that context on different devices: the two loaded different driver libraries.
    #[error(
        "cuda-gl's CUDA driver sees the shared context on device {cuda_gl_device}, but the \
         library that owns it reports device {owner_device}: the two loaded different CUDA \
         driver libraries.\nhelp: make sure only the NVIDIA driver's libcuda.so.1 is found (no \
         stub libcuda.so on LD_LIBRARY_PATH), or set CUDA_GL_DRIVER_PATH to the library the \
         other one loads"
    )]
    DriverLibraryMismatch {
        /// The device cuda-gl's driver reports (`cuCtxGetDevice`).
        cuda_gl_device: i32,
        /// The device the owning library reports.
        owner_device: i32,
    },

    /// A kernel was launched with arguments that do not match its parameters.
    #[error(
        "kernel `{kernel}` takes {expected} parameter(s) of {expected_sizes:?} bytes, but was \
         launched with {given} argument(s) of {given_sizes:?} bytes"
    )]
    KernelArguments {
        /// The kernel's name.
        kernel: String,
        /// How many parameters its PTX declares.
        expected: usize,
        /// The declared parameter sizes in bytes.
        expected_sizes: Vec<usize>,
        /// How many arguments were passed.
        given: usize,
        /// Their sizes in bytes.
        given_sizes: Vec<usize>,
    },

    /// A mapped buffer cannot be viewed as a slice of the element type asked for: its size is not
    /// a whole number of elements, or its address is not aligned for them.
    #[error(
        "a mapped buffer of {bytes} bytes at address {address:#x} cannot be viewed as a slice of \
         `{type_name}` ({type_size} bytes, alignment {type_align}).\nhelp: the buffer's size must \
         be a multiple of the element size and its address a multiple of the alignment; give the \
         GL buffer a whole number of elements (glBufferData size = count * {type_size}), or view \
         it as bytes (`u8`)"
    )]
    SliceLayout {
        /// The element type asked for.
        type_name: &'static str,
        /// Its size in bytes.
        type_size: usize,
        /// Its alignment in bytes.
        type_align: usize,
        /// The size of the mapped buffer in bytes.
        bytes: usize,
        /// The mapped buffer's device address.
        address: u64,
    },

    /// A copy into or out of a mapped array was given memory of another size than the array.
    #[error(
        "a copy {direction} a mapped array of {array} ({array_bytes} bytes) was given \
         {given_bytes} bytes of {other}; nothing was copied.\nhelp: copies move the whole array: \
         give width * height * max(depth, 1) elements of channels * bytes-per-channel bytes each \
         (e.g. a `[u32]` of width * height for an RGBA8 texture); a layer of an array texture is \
         `array(layer, level)`, a mip level is `array(index, level)`"
    )]
    CopySize {
        /// `"into"` or `"out of"`.
        direction: &'static str,
        /// The array's shape and format.
        array: String,
        /// The array's size in bytes, tightly packed.
        array_bytes: usize,
        /// What the other end is (host slice, device buffer, mapped buffer, array).
        other: &'static str,
        /// The other end's size in bytes.
        given_bytes: usize,
    },

    /// NVRTC (the `nvrtc` feature's run-time compiler) could not be opened.
    #[error("the NVRTC library could not be opened.\nhelp: {}", help::nvrtc_help(.tried))]
    NvrtcUnavailable {
        /// Every library tried, with the loader's reason.
        tried: Vec<String>,
    },

    /// NVRTC refused CUDA source (the `nvrtc` feature): a compile error, with its log, or a
    /// failed NVRTC call.
    #[error("{call} failed: {message} ({code}){}", help::nvrtc_log(.log))]
    Compile {
        /// The NVRTC call that failed, e.g. `nvrtcCompileProgram`.
        call: &'static str,
        /// Its `nvrtcResult`.
        code: i32,
        /// NVRTC's name for the code, e.g. `NVRTC_ERROR_COMPILATION`.
        message: String,
        /// The compiler's log (errors and warnings, with line numbers); empty when none.
        log: String,
    },

    /// One or more drops failed earlier; they were logged then and are reported here.
    #[error("{} earlier drop(s) failed: {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    DeferredDrop(Vec<CudaError>),

    /// Creating or using a headless EGL context failed.
    #[cfg(feature = "egl")]
    #[cfg_attr(docsrs, doc(cfg(feature = "egl")))]
    #[error(transparent)]
    Egl(#[from] egl::EglError),

    /// The wgpu/Vulkan side of [`wgpu_interop`](crate::wgpu_interop) refused or failed.
    #[cfg(feature = "wgpu")]
    #[cfg_attr(docsrs, doc(cfg(feature = "wgpu")))]
    #[error(transparent)]
    Wgpu(#[from] wgpu::WgpuError),

    /// The current OpenGL context does not offer an extension that this call needs, such as
    /// `GL_EXT_memory_object_fd` for [`external`](crate::external) memory.
    #[error(
        "the current OpenGL context ({renderer}) does not support {extension}.\nhelp: external \
         memory needs GL_EXT_memory_object and GL_EXT_memory_object_fd, which NVIDIA's OpenGL \
         driver offers on Linux; make a context of the NVIDIA driver current (not Mesa's \
         software renderer), or use the map/unmap path (`RegisteredBuffer`), which needs no \
         extension"
    )]
    MissingGlExtension {
        /// The extension, e.g. `GL_EXT_memory_object_fd`.
        extension: &'static str,
        /// `GL_RENDERER` of the current context.
        renderer: String,
    },

    /// The OpenGL loader returned no address for an entry point.
    #[error(
        "the OpenGL loader returned no address for {function}.\nhelp: pass the loader of the GL \
         context you use (e.g. `|name| headless.get_proc_address(name)` or GLFW's \
         `window.get_proc_address`), with that context current"
    )]
    MissingGlFunction {
        /// The entry point, e.g. `glImportMemoryFdEXT`.
        function: &'static str,
    },

    /// An OpenGL call raised an error (reported by `glGetError` right after it).
    #[error("{call} raised OpenGL error {} (0x{code:04x})", gl_error_name(*.code))]
    GlCall {
        /// The call, e.g. `glImportMemoryFdEXT`.
        call: &'static str,
        /// The `glGetError` code.
        code: u32,
    },

    /// A call that needs the GL context owning an object ran with another GL context current.
    ///
    /// Registered resources and external-memory objects remember the EGL or GLX context that
    /// was current when they were created; map, unmap, unregister, drop and the external ring's
    /// GL calls check it against the current one. Neither EGL nor GLX tells whether two contexts
    /// share objects, so a context of the same share group is refused too.
    #[error(
        "{call} needs the GL context that owns the object ({owner:#x}), but another GL context \
         ({current:#x}) is current on this thread.\nhelp: make the owning context current \
         (eglMakeCurrent, glfwMakeContextCurrent) before this call; a context that merely shares \
         objects with it is not accepted, because the platform cannot tell share groups apart"
    )]
    WrongGlContext {
        /// What was refused, e.g. `cuGraphicsUnregisterResource (not called)`.
        call: &'static str,
        /// The handle of the context that owns the object (`EGLContext` or `GLXContext`).
        owner: usize,
        /// The handle of the context current on this thread.
        current: usize,
    },

    /// The GL context that owns an object was destroyed, and the context current now got its
    /// handle value (NVIDIA's EGL hands a destroyed context's handle to the next one).
    ///
    /// cuda-gl tells them apart with a canary object that each context gets at its first use;
    /// objects of a destroyed context are never mapped, waited on, relabelled or deleted
    /// through another one.
    #[error(
        "{call}: the GL context that owned the object ({handle:#x}) was destroyed, and the \
         context now current merely has the same handle value.\nhelp: the object's GL side died \
         with its context; drop the cuda-gl object (its GL names are left alone) and create \
         new ones with the live context current"
    )]
    GlContextGone {
        /// What was refused, e.g. `cuGraphicsMapResources (not called)`.
        call: &'static str,
        /// The handle value both contexts had.
        handle: usize,
    },

    /// Neither EGL nor GLX is loaded in this process, so cuda-gl can neither call GL nor tell
    /// which context is current.
    #[error(
        "{call} was not made: neither libEGL nor libGLX is loaded in this process, so cuda-gl \
         cannot ask which OpenGL context is current.\nhelp: create the GL context through EGL or \
         GLX (GLFW, glutin, SDL and winit with glutin do, on X11 and Wayland) before using \
         cuda-gl's GL calls; other platforms are not supported"
    )]
    GlPlatformUnknown {
        /// What was refused.
        call: &'static str,
    },

    /// The current GL context was made without error checking (`KHR_no_error`), where a call
    /// GL would refuse is undefined behaviour and no failure is reported: cuda-gl, which relies
    /// on GL's refusals, makes no call there.
    #[error("{call} was not made: {}", help::no_error_context_help())]
    GlNoErrorContext {
        /// What was refused.
        call: &'static str,
    },

    /// A safety check needs a GL feature the current context lacks, so the call is refused
    /// rather than made unchecked.
    #[error(
        "{check} cannot be checked: {why}.\nhelp: create an OpenGL 4.3 context (or one with \
         GL_KHR_debug), as NVIDIA's and Mesa's drivers offer"
    )]
    GlCheckUnavailable {
        /// The check, e.g. `which GL context owns an object`.
        check: &'static str,
        /// Why it cannot run.
        why: String,
    },

    /// A stream-ordered call was made on a stream that is capturing a CUDA graph: captured,
    /// the work would not run now but whenever the graph is launched, after the memory or the
    /// mapping it touches may be gone.
    #[error(
        "{call} was not queued: the stream is capturing a CUDA graph \
         (cuStreamIsCapturing).\nhelp: end the capture (cudarc: `stream.end_capture(..)`) \
         first, or use another stream; cuda-gl's copies, memsets, maps and hand-offs must run \
         when they are queued"
    )]
    #[doc(alias = "cuStreamIsCapturing")]
    StreamCapturing {
        /// What was refused.
        call: &'static str,
    },

    /// A wait for the GPU did not end within its timeout.
    #[error(
        "waiting for {what} did not end within {timeout:?}.\nhelp: the GPU work before it has \
         not finished: look for a kernel or GL command that never ends; for work that is only \
         long, raise the timeout where the call takes one (set_timeout, Event::wait_for), \
         else raise cuda_gl::set_wait_limit (or CUDA_GL_WAIT_LIMIT_MS), the limit of \
         cuda-gl's other waits (10 s by default), or wait for your own stream first"
    )]
    Timeout {
        /// What was waited for, e.g. `the GL fence of ring slot 1`.
        what: String,
        /// How long it waited.
        timeout: std::time::Duration,
    },

    /// CUDA refused to register a GL texture or renderbuffer that exists: the image target does
    /// not match the one it was created with, its internal format is one CUDA cannot register,
    /// or (`flags_only`) its format cannot be used with `SURFACE_LOAD_STORE`/`TEXTURE_GATHER`.
    ///
    /// Told apart from [`Error::NotAGlObject`] by asking GL whether the name is a texture
    /// (`glIsTexture`/`glIsRenderbuffer`, through cuda-gl's own GL entry points) and by registering again
    /// without the surface and gather flags.
    #[error("{source}\nhelp: {}", unsupported_image_help(*.name, .kind, *.flags, *.flags_only))]
    UnsupportedImage {
        /// The GL name.
        name: u32,
        /// What it was registered as, e.g. `GL_TEXTURE_2D texture`.
        kind: String,
        /// The flags it was registered with.
        flags: crate::gl_object::RegisterFlags,
        /// Whether CUDA accepts the image without `SURFACE_LOAD_STORE` and `TEXTURE_GATHER`.
        flags_only: bool,
        /// The driver's error.
        source: CudaError,
    },

    /// The CUDA context can no longer be used: a kernel faulted (an illegal address, a misaligned
    /// access, an illegal instruction, a launch failure or timeout), or the context was reset or
    /// destroyed behind cuda-gl's back (`cuDevicePrimaryCtxReset`, `cudaDeviceReset`).
    ///
    /// What to do depends on the code, and the message says which:
    /// - after a kernel fault the error is sticky for the whole process: every later call fails
    ///   the same way, a new [`Context`](crate::Context) too, and on driver 580 even
    ///   `cuDevicePrimaryCtxReset` does not clear it (NVIDIA documents that the process must be
    ///   restarted). The fault (Xid 31 in the kernel log) can also leave the GPU unable to
    ///   switch graphics contexts until the GPU is reset, so OpenGL drawing on that GPU may hang,
    ///   in this process and in later ones (Xid 109). Save what you need without drawing, drop
    ///   the handles and exit the process; if GL programs on that GPU hang afterwards, reset it
    ///   (`nvidia-smi -r`) or use another GPU.
    /// - after a reset (`CUDA_ERROR_CONTEXT_IS_DESTROYED`, detected by
    ///   [`Context::bind`](crate::Context::bind) before any dangling handle reaches the
    ///   driver), drop every handle of the context
    ///   (mapping guards, registered resources, streams, events, modules, device buffers and each
    ///   `Arc<Context>`; their `Drop`s skip the driver and log), then create a new `Context` and
    ///   register the GL objects again. The GL context and its objects are not affected.
    #[error("{source}\nhelp: {}", context_unusable_help(.source))]
    ContextUnusable {
        /// The driver's error.
        source: CudaError,
    },

    /// A texture was registered with another [`ImageTarget`](crate::ImageTarget) than the target
    /// it was created with.
    ///
    /// The driver registers it anyway (seen on driver 580: a `GL_TEXTURE_2D` texture registers as
    /// `GL_TEXTURE_2D_ARRAY` or `GL_TEXTURE_RECTANGLE`), so cuda-gl asks GL for the texture's
    /// target first (`glGetTextureParameteriv(GL_TEXTURE_TARGET)`, when the context is OpenGL
    /// 4.5 or newer; a bind probe before).
    #[error(
        "GL texture {name} was created as {}, but was registered as {target:?}.\nhelp: {}",
        gl_target_name(*.actual),
        target_help(*.actual)
    )]
    WrongImageTarget {
        /// The GL name.
        name: u32,
        /// The target it was registered with.
        target: crate::gl_object::ImageTarget,
        /// The GL enum of the target it was created with (`GL_TEXTURE_TARGET`).
        actual: u32,
    },

    /// [`RegisteredImage::register_texture`](crate::RegisteredImage::register_texture) could not
    /// learn from GL which [`ImageTarget`](crate::ImageTarget) the texture has, or CUDA cannot
    /// register that target.
    #[error(
        "cannot register GL texture {name} without a target: {reason}.\nhelp: call \
         RegisteredImage::register(ctx, {name}, ImageTarget::..., flags) with the target the \
         texture was created with; register_texture asks GL (glGetTextureParameteriv, OpenGL \
         4.5) through cuda-gl's own GL entry points, with the texture's context current"
    )]
    UnknownTextureTarget {
        /// The GL name.
        name: u32,
        /// Why the target is not known or not usable.
        reason: String,
    },

    /// CUDA's mapping state of a registered GL object no longer matches the registration: the
    /// driver answers `CUDA_ERROR_ALREADY_MAPPED` to a registration that was unmapped. Seen when
    /// the owning GL context is destroyed while the object is mapped (the unmap then fails with
    /// [`Error::NoGlContext`]); the message says what to do.
    #[error(
        "{source}\nhelp: CUDA's mapping state of GL {kind} {name} no longer matches its \
         registration. This happens when the GL context that owns the object is destroyed while \
         the object is mapped. The registration cannot be mapped or released any more: drop it \
         (the driver frees it with the CUDA context) and register the objects of a live GL \
         context. To avoid it, end every mapping and unregister before destroying the GL \
         context (or closing its window)"
    )]
    MappingStateLost {
        /// The GL name.
        name: u32,
        /// What it was registered as.
        kind: String,
        /// The driver's error.
        source: CudaError,
    },

    /// A GL import of CUDA memory did not show CUDA's bytes: a marker written by CUDA was not
    /// what GL read back through the imported buffer, at every attempt.
    ///
    /// NVIDIA's driver 580 was seen to do this for the 32nd memory object of a GL context
    /// (every time, in every process): cuda-gl checks each import and imports again, keeping the
    /// failed memory object, so this error means that several attempts in a row failed.
    #[error(
        "{attempts} GL imports of a CUDA allocation in a row did not show CUDA's bytes (a marker \
         written by CUDA read back differently through the GL buffer).\nhelp: GL would read \
         other memory than CUDA writes; check that the GL context runs on the allocation's GPU \
         and that the driver is NVIDIA's; please report it with the driver version"
    )]
    ImportNotShared {
        /// How many imports were tried.
        attempts: usize,
    },
}
