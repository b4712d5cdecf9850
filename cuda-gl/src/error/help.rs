//! The long `help:` texts of [`Error`](super::Error)'s messages, and the names they use (GL
//! targets, GL error codes), kept apart so that the enum fits on a few screens.

use crate::result::CudaError;
use cuda_gl_sys::CUresult;

pub(super) fn context_unusable_help(source: &CudaError) -> String {
    if source.code == CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED {
        "the CUDA context was reset or destroyed behind cuda-gl's back (cuDevicePrimaryCtxReset, \
         cudaDeviceReset), so every handle made in it is gone. Drop them all (mapping guards, \
         registered resources, streams, modules, device buffers and each Arc<Context>; their \
         drops skip the driver and log), then create a new Context, stream and module and \
         register the GL objects again: the GL context and its objects are unaffected. Do not \
         reset the device while cuda-gl handles live"
            .to_string()
    } else {
        format!(
            "a kernel faulted ({}), which leaves CUDA unusable in this whole process: every \
             later call fails the same way, a new Context too, and cuDevicePrimaryCtxReset does \
             not clear it (NVIDIA: the process must be terminated and relaunched). The fault \
             (Xid 31 in the kernel log) can also leave the GPU unable to switch graphics \
             contexts until the GPU is reset, so OpenGL drawing on this GPU may hang, in this \
             process and in later ones (Xid 109). Save what you need without drawing, drop the \
             cuda-gl handles and exit the process; if GL programs on this GPU hang afterwards, \
             reset it (nvidia-smi -r) or use another GPU. Find the bad access with \
             compute-sanitizer",
            source.name
        )
    }
}

pub(super) fn gl_target_name(target: u32) -> String {
    match crate::gl_object::ImageTarget::from_gl(target) {
        Some(t) => format!("{t:?} ({})", t.describe()),
        None => format!("GL target {target:#x}"),
    }
}

pub(super) fn target_help(actual: u32) -> String {
    match crate::gl_object::ImageTarget::from_gl(actual) {
        Some(t) => format!("register it with ImageTarget::{t:?}"),
        None => "CUDA registers only GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_2D_ARRAY, \
                 GL_TEXTURE_3D and GL_TEXTURE_CUBE_MAP textures and renderbuffers: copy the data \
                 into one of those"
            .to_string(),
    }
}

pub(super) fn unsupported_image_help(
    name: u32,
    kind: &str,
    flags: crate::gl_object::RegisterFlags,
    flags_only: bool,
) -> String {
    const FORMATS: &str = "1, 2 or 4 channels of 8-, 16- or 32-bit integers or of 16- or 32-bit \
                           floats (GL_RGBA8, GL_RGBA16F, GL_R32F, GL_RG32UI, ...); driver 580 \
                           also takes GL_RGB8, GL_RGB32F and GL_SRGB8_ALPHA8";
    const REFUSED: &str = "depth and stencil formats, packed formats such as \
                           GL_R11F_G11F_B10F and GL_RGB9_E5, compressed and multisampled images";
    if flags_only {
        format!(
            "CUDA registers GL {kind} {name} without SURFACE_LOAD_STORE and TEXTURE_GATHER, but \
             not with {flags:?}: its internal format cannot be a CUDA surface. Create it with a \
             format CUDA surfaces take, {FORMATS}; not {REFUSED}. Or register it without \
             SURFACE_LOAD_STORE and copy to and from `MappedImage::array`"
        )
    } else {
        format!(
            "GL {kind} {name} exists, but CUDA does not register it as a {kind}. Either it was \
             created with another target (register a texture with the ImageTarget it was first \
             bound to), or its internal format is not one CUDA registers: CUDA takes {FORMATS}; \
             not {REFUSED}. Copy the data into a texture of such a format"
        )
    }
}

/// The name of an OpenGL error code (`glGetError`), such as `"GL_INVALID_OPERATION"` for
/// `0x0502`; `"(unknown)"` for a code that is not one of the eight core error codes.
///
/// cuda-gl's [`Error::GlCall`](crate::Error::GlCall) messages name GL errors with it; GL
/// programs can use it for their own `glGetError` checks.
pub fn gl_error_name(code: u32) -> &'static str {
    match code {
        0x0500 => "GL_INVALID_ENUM",
        0x0501 => "GL_INVALID_VALUE",
        0x0502 => "GL_INVALID_OPERATION",
        0x0503 => "GL_STACK_OVERFLOW",
        0x0504 => "GL_STACK_UNDERFLOW",
        0x0505 => "GL_OUT_OF_MEMORY",
        0x0506 => "GL_INVALID_FRAMEBUFFER_OPERATION",
        0x0507 => "GL_CONTEXT_LOST",
        _ => "(unknown)",
    }
}

pub(super) fn jit_log(log: &str) -> String {
    if log.trim().is_empty() {
        String::new()
    } else {
        // The log is the JIT compiler's, or that of cuda-gl's checks before the driver (whose
        // source then names `cuModuleLoadDataEx (not called)`).
        format!(":\n{}", log.trim())
    }
}

/// The help of [`Error::NvrtcUnavailable`](super::Error::NvrtcUnavailable), with every library
/// tried.
pub(super) fn nvrtc_help(tried: &[String]) -> String {
    format!(
        "install CUDA's NVRTC (the CUDA toolkit, or `pip install nvidia-cuda-nvrtc-cu12`) and put \
         libnvrtc.so.12 on the loader's path, or set CUDA_GL_NVRTC_PATH to its full path; or \
         compile the kernel to PTX at build time (`nvcc -ptx`) and use Module::from_ptx. \
         Tried:{}",
        tried.iter().map(|t| format!("\n  {t}")).collect::<String>()
    )
}

/// The log of [`Error::Compile`](super::Error::Compile), with its help, when NVRTC wrote one.
pub(super) fn nvrtc_log(log: &str) -> String {
    if log.trim().is_empty() {
        String::new()
    } else {
        format!(
            "\nNVRTC log:\n{}\nhelp: fix the source at the lines the log names",
            log.trim_end()
        )
    }
}

/// The message of [`Error::GlNoErrorContext`](super::Error::GlNoErrorContext) after the call.
pub(super) fn no_error_context_help() -> &'static str {
    "the current OpenGL context was created without error checking (KHR_no_error), where a GL \
     call that would fail is undefined behaviour and no failure is reported.\nhelp: create the \
     context without the no-error flag (EGL_CONTEXT_OPENGL_NO_ERROR_KHR, \
     GLX_CONTEXT_OPENGL_NO_ERROR_ARB, GLFW_CONTEXT_NO_ERROR, SDL_GL_CONTEXT_NO_ERROR, glutin's \
     Robustness::NoError)"
}
