//! The one table of GL entry points that cuda-gl calls, resolved by cuda-gl itself through the
//! platform (see [`platform`](super::platform)), never through the `gl` crate's global pointers
//! (which any safe code can overwrite with `gl::load_with`).

use crate::error::{Error, Result};
use std::ffi::{CStr, c_void};

/// `GL_CONTEXT_FLAG_NO_ERROR_BIT_KHR` (`KHR_no_error`), absent from the `gl` crate's bindings.
const CONTEXT_FLAG_NO_ERROR_BIT: i32 = 0x8;

/// A `GLsync`.
pub(crate) type GlSync = *const c_void;

/// Declares [`GlFns`] from two lists, each entry written once as its field name, its GL name and
/// its C signature (from the Khronos registry): the entry points every OpenGL 3.2 context has,
/// which the table needs to load at all, and those of later versions and extensions, which are
/// `None` where the platform resolves no address. (A resolved address says nothing of the
/// current context: the callers ask the context's version or extensions first.)
macro_rules! gl_fns {
    (
        required { $($field:ident: $name:literal = fn($($arg:ty),*) $(-> $ret:ty)?;)* }
        optional { $($ofield:ident: $oname:literal = fn($($oarg:ty),*) $(-> $oret:ty)?;)* }
    ) => {
        /// The GL entry points cuda-gl calls.
        #[derive(Clone, Copy)]
        // The offscreen target's entry points (texture, framebuffer, read-back) are called with
        // the `egl` feature only, `glCopyImageSubData` with `egui` only, `glMemoryBarrier` with
        // `wgpu-gl` only (every entry point is used with all features, which CI's clippy builds).
        #[cfg_attr(
            not(all(feature = "egl", feature = "egui", feature = "wgpu-gl")),
            allow(dead_code)
        )]
        pub(crate) struct GlFns {
            $(
                #[doc = concat!("`", $name, "`.")]
                pub(crate) $field: unsafe extern "system" fn($($arg),*) $(-> $ret)?,
            )*
            $(
                #[doc = concat!("`", $oname, "`, where the platform has it.")]
                pub(crate) $ofield: Option<unsafe extern "system" fn($($oarg),*) $(-> $oret)?>,
            )*
        }

        impl GlFns {
            /// Resolves every entry point through `resolve`; `Err` names the first required
            /// one it has no address for.
            ///
            /// # Safety
            /// 1. Every non-null address `resolve` returns for a name is that GL entry point,
            ///    with the signature the Khronos registry gives it.
            /// 2. The entry points stay callable for the life of the process.
            pub(super) unsafe fn load(
                resolve: &mut dyn FnMut(&'static str) -> *const c_void,
            ) -> Result<GlFns, &'static str> {
                Ok(GlFns {
                    $($field: {
                        let ptr = resolve($name);
                        if ptr.is_null() {
                            return Err($name);
                        }
                        // SAFETY: (1): the address of `$name`, whose C signature is the
                        // field's type; function and data pointers have one size on every
                        // platform GL runs on.
                        unsafe {
                            std::mem::transmute::<
                                *const c_void,
                                unsafe extern "system" fn($($arg),*) $(-> $ret)?,
                            >(ptr)
                        }
                    },)*
                    $($ofield: {
                        let ptr = resolve($oname);
                        // SAFETY: as above, for a non-null address.
                        (!ptr.is_null()).then(|| unsafe {
                            std::mem::transmute::<
                                *const c_void,
                                unsafe extern "system" fn($($oarg),*) $(-> $oret)?,
                            >(ptr)
                        })
                    },)*
                })
            }
        }
    };
}

gl_fns! {
    required {
        get_error: "glGetError" = fn() -> u32;
        get_integerv: "glGetIntegerv" = fn(u32, *mut i32);
        get_string: "glGetString" = fn(u32) -> *const u8;
        get_stringi: "glGetStringi" = fn(u32, u32) -> *const u8;
        is_buffer: "glIsBuffer" = fn(u32) -> u8;
        is_texture: "glIsTexture" = fn(u32) -> u8;
        is_renderbuffer: "glIsRenderbuffer" = fn(u32) -> u8;
        is_program: "glIsProgram" = fn(u32) -> u8;
        create_program: "glCreateProgram" = fn() -> u32;
        gen_vertex_arrays: "glGenVertexArrays" = fn(i32, *mut u32);
        bind_vertex_array: "glBindVertexArray" = fn(u32);
        is_vertex_array: "glIsVertexArray" = fn(u32) -> u8;
        bind_texture: "glBindTexture" = fn(u32, u32);
        gen_buffers: "glGenBuffers" = fn(i32, *mut u32);
        delete_buffers: "glDeleteBuffers" = fn(i32, *const u32);
        bind_buffer: "glBindBuffer" = fn(u32, u32);
        buffer_data: "glBufferData" = fn(u32, isize, *const c_void, u32);
        copy_buffer_sub_data: "glCopyBufferSubData" = fn(u32, u32, isize, isize, isize);
        get_buffer_sub_data: "glGetBufferSubData" = fn(u32, isize, isize, *mut c_void);
        fence_sync: "glFenceSync" = fn(u32, u32) -> GlSync;
        client_wait_sync: "glClientWaitSync" = fn(GlSync, u32, u64) -> u32;
        delete_sync: "glDeleteSync" = fn(GlSync);
        flush: "glFlush" = fn();
        finish: "glFinish" = fn();
        gen_textures: "glGenTextures" = fn(i32, *mut u32);
        delete_textures: "glDeleteTextures" = fn(i32, *const u32);
        tex_image_2d: "glTexImage2D" = fn(u32, i32, i32, i32, i32, i32, u32, u32, *const c_void);
        tex_parameteri: "glTexParameteri" = fn(u32, u32, i32);
        get_tex_parameteriv: "glGetTexParameteriv" = fn(u32, u32, *mut i32);
        tex_sub_image_2d: "glTexSubImage2D" = fn(u32, i32, i32, i32, i32, i32, u32, u32, *const c_void);
        buffer_sub_data: "glBufferSubData" = fn(u32, isize, isize, *const c_void);
        gen_framebuffers: "glGenFramebuffers" = fn(i32, *mut u32);
        delete_framebuffers: "glDeleteFramebuffers" = fn(i32, *const u32);
        bind_framebuffer: "glBindFramebuffer" = fn(u32, u32);
        framebuffer_texture_2d: "glFramebufferTexture2D" = fn(u32, u32, u32, u32, i32);
        check_framebuffer_status: "glCheckFramebufferStatus" = fn(u32) -> u32;
        viewport: "glViewport" = fn(i32, i32, i32, i32);
        read_pixels: "glReadPixels" = fn(i32, i32, i32, i32, u32, u32, *mut c_void);
        read_buffer: "glReadBuffer" = fn(u32);
        pixel_storei: "glPixelStorei" = fn(u32, i32);
        get_floatv: "glGetFloatv" = fn(u32, *mut f32);
        is_enabled: "glIsEnabled" = fn(u32) -> u8;
        enable: "glEnable" = fn(u32);
        disable: "glDisable" = fn(u32);
    }
    optional {
        // Compatibility-profile state of a pixel transfer (pixel_state.rs), and the read clamp.
        pixel_transferf: "glPixelTransferf" = fn(u32, f32);
        pixel_transferi: "glPixelTransferi" = fn(u32, i32);
        matrix_mode: "glMatrixMode" = fn(u32);
        load_identity: "glLoadIdentity" = fn();
        load_matrixf: "glLoadMatrixf" = fn(*const f32);
        clamp_color: "glClampColor" = fn(u32, u32);
        // A bounded read of a display target's texture (OpenGL 4.5, or GL_ARB_robustness):
        // through `GlFns::bounded_tex_image`, which picks the one the context has.
        get_n_tex_image: "glGetnTexImage" = fn(u32, i32, u32, u32, i32, *mut c_void);
        get_n_tex_image_arb: "glGetnTexImageARB" = fn(u32, i32, u32, u32, i32, *mut c_void);
        object_label: "glObjectLabel" = fn(u32, u32, i32, *const u8);
        tex_storage_2d: "glTexStorage2D" = fn(u32, i32, u32, i32, i32);
        get_object_label: "glGetObjectLabel" = fn(u32, u32, i32, *mut i32, *mut u8);
        // OpenGL ES 3.1 (the table also loads on ES 3.0 contexts, which lack it): asked only
        // by `query::texture_2d_storage`.
        get_tex_level_parameteriv: "glGetTexLevelParameteriv" = fn(u32, i32, u32, *mut i32);
        // A display target's texture copied into a texture an egui painter owns (egui_interop.rs):
        // OpenGL 4.3 or GL_ARB_copy_image.
        copy_image_sub_data: "glCopyImageSubData" =
            fn(u32, u32, i32, i32, i32, i32, u32, u32, i32, i32, i32, i32, i32, i32, i32);
        get_texture_parameteriv: "glGetTextureParameteriv" = fn(u32, u32, *mut i32);
        get_texture_level_parameteriv: "glGetTextureLevelParameteriv" =
            fn(u32, i32, u32, *mut i32);
        get_named_buffer_parameteri64v: "glGetNamedBufferParameteri64v" = fn(u32, u32, *mut i64);
        get_unsigned_bytei_v: "glGetUnsignedBytei_vEXT" = fn(u32, u32, *mut u8);
        // After the wgpu GL route's compute blit (OpenGL 4.2, ES 3.1): wgpu_interop/gl_mode.rs.
        memory_barrier: "glMemoryBarrier" = fn(u32);
        create_memory_objects: "glCreateMemoryObjectsEXT" = fn(i32, *mut u32);
        delete_memory_objects: "glDeleteMemoryObjectsEXT" = fn(i32, *const u32);
        import_memory_fd: "glImportMemoryFdEXT" = fn(u32, u64, u32, i32);
        buffer_storage_mem: "glBufferStorageMemEXT" = fn(u32, isize, u32, u64);
    }
}

/// The first `major.minor` of a `GL_VERSION` string ("4.6.0 NVIDIA 580.159.04",
/// "4.5 (Core Profile) Mesa 24.0.5", "OpenGL ES 3.2 ..."); 0 for a part that is not a number.
pub(super) fn parse_version(text: &str) -> (i32, i32) {
    let mut parts = text
        .trim_start_matches("OpenGL ES ")
        .split(|c: char| !c.is_ascii_digit());
    let mut number = || parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    (number(), number())
}

impl std::fmt::Debug for GlFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GlFns")
    }
}

/// `glGetnTexImage`'s signature (and `glGetnTexImageARB`'s).
pub(crate) type GetnTexImage = unsafe extern "system" fn(u32, i32, u32, u32, i32, *mut c_void);

/// An optional entry point, or [`Error::MissingGlFunction`] naming it.
pub(crate) fn have<T>(f: Option<T>, function: &'static str) -> Result<T> {
    f.ok_or(Error::MissingGlFunction { function })
}

// Every method calls GL, so each needs a GL context current on this thread, of the platform the
// table was resolved through: the callers get the table from `GlOwner::check` or `current_gl`,
// which asked the platform just before.
impl GlFns {
    /// Discards the errors of cuda-gl's own calls just made (a binding that did not take, a
    /// probe, a failed call already reported). Logged at debug level.
    pub(crate) fn drain_errors(&self) {
        for _ in 0..16 {
            // SAFETY: no arguments; a context is current (see above).
            let code = unsafe { (self.get_error)() };
            if code == gl::NO_ERROR {
                return;
            }
            log::debug!("cuda-gl: discarding an OpenGL error 0x{code:04x} of its own calls");
        }
    }

    /// Before cuda-gl's calls for `call`: takes the errors the application's earlier GL calls
    /// left pending, so that the next check reports only cuda-gl's own. GL keeps one flag per
    /// error code and offers no way to set one again, so each is logged as a warning naming
    /// it: the application's own `glGetError` no longer returns it.
    pub(crate) fn take_pending_errors(&self, call: &'static str) {
        for _ in 0..16 {
            // SAFETY: no arguments; a context is current (see above).
            let code = unsafe { (self.get_error)() };
            if code == gl::NO_ERROR {
                return;
            }
            log::warn!(
                "cuda-gl: {call}: OpenGL error 0x{code:04x} was pending from the application's \
                 earlier GL calls; cuda-gl took it (glGetError will not return it) so that it \
                 reports only its own call's errors. help: call glGetError after your own GL \
                 calls, before cuda-gl's"
            );
        }
    }

    /// `Err(GlCall)` when `call` raised an error.
    pub(crate) fn check(&self, call: &'static str) -> Result<()> {
        // SAFETY: as in `drain_errors`.
        let code = unsafe { (self.get_error)() };
        if code == gl::NO_ERROR {
            Ok(())
        } else {
            self.drain_errors();
            Err(Error::GlCall { call, code })
        }
    }

    /// `glGetString(name)`, `None` when GL returns null.
    pub(crate) fn string(&self, name: u32) -> Option<String> {
        // SAFETY: glGetString returns null or a static NUL-terminated string.
        let ptr = unsafe { (self.get_string)(name) };
        (!ptr.is_null()).then(|| {
            // SAFETY: non-null: a NUL-terminated string owned by the GL implementation.
            unsafe { CStr::from_ptr(ptr.cast()) }
                .to_string_lossy()
                .into_owned()
        })
    }

    /// The context's extensions (`glGetStringi(GL_EXTENSIONS, i)`).
    pub(crate) fn extensions(&self) -> Vec<String> {
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer for one integer.
        unsafe { (self.get_integerv)(gl::NUM_EXTENSIONS, &mut count) };
        (0..count.max(0) as u32)
            .filter_map(|i| {
                // SAFETY: `i` is below GL_NUM_EXTENSIONS; the result is null or a static
                // NUL-terminated string.
                let ptr = unsafe { (self.get_stringi)(gl::EXTENSIONS, i) };
                (!ptr.is_null()).then(|| {
                    // SAFETY: non-null, NUL-terminated (above).
                    unsafe { CStr::from_ptr(ptr.cast()) }
                        .to_string_lossy()
                        .into_owned()
                })
            })
            .collect()
    }

    /// Whether the context has extension `name`, asked by index (`glGetStringi`, OpenGL 3.0
    /// and later) without copying the list.
    pub(crate) fn has_extension(&self, name: &str) -> bool {
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer for one integer.
        unsafe { (self.get_integerv)(gl::NUM_EXTENSIONS, &mut count) };
        (0..count.max(0) as u32).any(|i| {
            // SAFETY: `i` is below GL_NUM_EXTENSIONS; the result is null or a static string.
            let ptr = unsafe { (self.get_stringi)(gl::EXTENSIONS, i) };
            // SAFETY: non-null: NUL-terminated.
            !ptr.is_null() && unsafe { CStr::from_ptr(ptr.cast()) }.to_bytes() == name.as_bytes()
        })
    }

    /// The context's OpenGL version, `(major, minor)`, read from `GL_VERSION` (the first
    /// `major.minor` in it, after "OpenGL ES " on ES), which every context answers without a GL
    /// error; `(0, 0)` when it cannot be read.
    pub(crate) fn version_string(&self) -> (i32, i32) {
        self.string(gl::VERSION)
            .map_or((0, 0), |text| parse_version(&text))
    }

    /// The bounded texture read of the current context: `glGetnTexImageARB` where it has
    /// `GL_ARB_robustness`, else OpenGL 4.5's `glGetnTexImage` in a context of 4.5 or later
    /// (OpenGL ES, at most 3.2, has neither). The extension's first, because an address says
    /// nothing of the context (see [`GlFns`]): Mesa 22.3's dispatch has no `glGetnTexImage`
    /// though its llvmpipe reports OpenGL 4.5, and libglvnd still resolves the name, to a stub
    /// that writes nothing and raises no error (a display target read back through it read all
    /// zeros: Mesa 22.3.6 beside an H200, 2026-12-06). llvmpipe and NVIDIA's GL both have
    /// `GL_ARB_robustness`.
    ///
    /// # Errors
    /// [`Error::MissingGlFunction`] naming `glGetnTexImage` in a context with neither (before
    /// OpenGL 4.5 without the extension, OpenGL ES), or where the platform resolved neither.
    pub(crate) fn bounded_tex_image(&self) -> Result<GetnTexImage> {
        let chosen = if self.has_extension("GL_ARB_robustness") {
            self.get_n_tex_image_arb
        } else if self.version() >= (4, 5) {
            self.get_n_tex_image
        } else {
            None
        };
        have(chosen, "glGetnTexImage")
    }

    /// Whether the current context was made without error checking (`KHR_no_error`): its
    /// `GL_CONTEXT_FLAGS` has `GL_CONTEXT_FLAG_NO_ERROR_BIT_KHR`. Asked only where the query is
    /// valid (OpenGL 3.0, OpenGL ES 3.2), so that it raises no error itself; an older context
    /// cannot have the flag asked, nor (NVIDIA's and Mesa's drivers) be made without errors.
    pub(crate) fn reports_no_errors(&self) -> bool {
        let text = self.string(gl::VERSION).unwrap_or_default();
        let version = parse_version(&text);
        let asked = if text.starts_with("OpenGL ES") {
            version >= (3, 2)
        } else {
            version >= (3, 0)
        };
        let mut flags = 0;
        if asked {
            // SAFETY: GL_CONTEXT_FLAGS is a valid query at these versions; a valid out-pointer.
            unsafe { (self.get_integerv)(gl::CONTEXT_FLAGS, &mut flags) };
        }
        flags & CONTEXT_FLAG_NO_ERROR_BIT != 0
    }

    /// The context's OpenGL version, `(major, minor)`.
    pub(crate) fn version(&self) -> (i32, i32) {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: valid out-pointers; GL_MAJOR_VERSION and GL_MINOR_VERSION are valid queries
        // since OpenGL 3.0.
        unsafe {
            (self.get_integerv)(gl::MAJOR_VERSION, &mut major);
            (self.get_integerv)(gl::MINOR_VERSION, &mut minor);
        }
        (major, minor)
    }

    /// A new buffer object, left bound to `target`, with `bytes` of storage of `usage` and no
    /// data (`glGenBuffers`, `glBindBuffer`, `glBufferData`); 0 when GL gives no name. Shared by
    /// the display's buffers and the tests' buffers, which make theirs alike. The caller puts
    /// `target`'s binding back and checks GL's error.
    pub(crate) fn new_buffer(&self, target: u32, bytes: usize, usage: u32) -> u32 {
        let mut name = 0;
        // SAFETY: a context is current (see above); a valid out-pointer; binding a generated
        // name makes the buffer; a null pointer gives it storage with no data.
        unsafe {
            (self.gen_buffers)(1, &mut name);
            (self.bind_buffer)(target, name);
            (self.buffer_data)(target, bytes as isize, std::ptr::null(), usage);
        }
        name
    }

    /// A new 2-D texture, left bound to `GL_TEXTURE_2D`, whose level 0 is `width` x `height`
    /// RGBA8 texels of mutable storage with no data (`glGenTextures`, `glBindTexture`,
    /// `glTexImage2D`); 0 when GL gives no name. Shared by the offscreen target and the tests'
    /// textures, which want the same storage. The caller puts the binding back and checks
    /// GL's error.
    ///
    /// # Safety
    /// 1. No buffer is bound to `GL_PIXEL_UNPACK_BUFFER`: one would turn the null pixel pointer
    ///    into an offset into it, and GL would read it.
    #[cfg(feature = "egl")]
    pub(crate) unsafe fn new_rgba8_texture(&self, width: i32, height: i32) -> u32 {
        let mut name = 0;
        // SAFETY: a context is current (see above); a valid out-pointer; the name is bound
        // before use; with no unpack buffer bound (1) the null pointer asks for storage only.
        unsafe {
            (self.gen_textures)(1, &mut name);
            (self.bind_texture)(gl::TEXTURE_2D, name);
            (self.tex_image_2d)(
                gl::TEXTURE_2D,
                0,
                gl::RGBA8 as i32,
                width,
                height,
                0,
                gl::RGBA,
                gl::UNSIGNED_BYTE,
                std::ptr::null(),
            );
        }
        name
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn gl_version_strings_parse() {
        use super::parse_version;
        assert_eq!(parse_version("4.6.0 NVIDIA 580.159.04"), (4, 6));
        assert_eq!(parse_version("4.5 (Core Profile) Mesa 24.0.5"), (4, 5));
        assert_eq!(parse_version("OpenGL ES 3.2 Mesa 24.0.5"), (3, 2));
        assert_eq!(parse_version("2.1 Mesa"), (2, 1));
        assert_eq!(parse_version(""), (0, 0));
    }
}
