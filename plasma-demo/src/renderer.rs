//! The OpenGL side (3.3 core): the frame's texture, the pixel buffer that feeds it, an offscreen
//! framebuffer for headless runs, and the fullscreen-triangle program that shows the texture.
//!
//! Every method needs the GL context that created the [`Renderer`] to be current on the calling
//! thread, and the `gl` function pointers loaded (the window or the headless context does both).
//! The renderer must be dropped while that context is still current.

use crate::cli::Size;
use anyhow::{Context as _, Result, anyhow, bail};
use gl::types::{GLenum, GLint, GLsizei, GLsizeiptr, GLuint};
use std::ffi::CStr;

/// How the frame's pixels reach the texture; decides what the renderer allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upload {
    /// Through a pixel buffer object: `glTexSubImage2D` from the bound `GL_PIXEL_UNPACK_BUFFER`.
    PixelBuffer,
    /// Written into the texture in place (CUDA surface); no pixel buffer.
    InPlace,
}

/// Where the frame is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The default framebuffer of a window.
    Window,
    /// An offscreen framebuffer with an RGBA8 renderbuffer of the frame's size (headless
    /// contexts have no default framebuffer).
    Offscreen,
}

/// `GL_VENDOR`, `GL_RENDERER` and `GL_VERSION` of the current context.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GlInfo {
    /// `GL_VENDOR`, e.g. `NVIDIA Corporation` or `Mesa`.
    pub vendor: String,
    /// `GL_RENDERER`, e.g. `NVIDIA H200/PCIe/SSE2` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub renderer: String,
    /// `GL_VERSION`.
    pub version: String,
}

impl GlInfo {
    /// Reads the strings of the current context.
    pub fn current() -> GlInfo {
        GlInfo {
            vendor: gl_string(gl::VENDOR),
            renderer: gl_string(gl::RENDERER),
            version: gl_string(gl::VERSION),
        }
    }
}

fn gl_string(name: GLenum) -> String {
    // SAFETY: a context is current (module contract); glGetString returns null or a static
    // NUL-terminated string, copied out at once.
    unsafe {
        let s = gl::GetString(name);
        if s.is_null() {
            String::new()
        } else {
            CStr::from_ptr(s.cast()).to_string_lossy().into_owned()
        }
    }
}

/// Fails with the pending GL error, if any, naming `what` was being done.
///
/// # Errors
/// The GL error code and its name.
pub fn check_gl(what: &str) -> Result<()> {
    // SAFETY: a context is current (module contract).
    let err = unsafe { gl::GetError() };
    if err == gl::NO_ERROR {
        return Ok(());
    }
    let name = cuda_gl::gl_error_name(err);
    bail!("OpenGL error {name} ({err:#06x}) while {what}")
}

/// The vertex shader of one triangle that covers the viewport: draw 3 vertices with no vertex
/// attributes. It passes `vec2 uv`, 0..1 across the viewport, to the fragment shader.
pub const VERTEX_SHADER: &CStr = c"#version 330 core
out vec2 uv;
void main() {
    // Vertices 0, 1, 2 at (0,0), (2,0), (0,2) in uv: one triangle that covers the screen.
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    uv = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
";

const FRAGMENT_SHADER: &CStr = c"#version 330 core
in vec2 uv;
uniform sampler2D frame;
out vec4 color;
void main() {
    color = texture(frame, uv);
}
";

/// The GL objects of one frame size.
#[derive(Debug)]
struct SizedObjects {
    texture: GLuint,
    /// Whether the texture has immutable storage (`glTexStorage2D`).
    immutable: bool,
    /// The pixel buffer, for [`Upload::PixelBuffer`].
    pbo: Option<GLuint>,
    /// The offscreen framebuffer and its renderbuffer, for [`Target::Offscreen`].
    offscreen: Option<(GLuint, GLuint)>,
}

/// The GL objects of the demo: program, vertex array, and the frame-sized texture, pixel buffer
/// and offscreen framebuffer.
#[derive(Debug)]
pub struct Renderer {
    size: Size,
    upload: Upload,
    target: Target,
    program: GLuint,
    vao: GLuint,
    objects: SizedObjects,
}

impl Renderer {
    /// Creates the program, the vertex array and the frame-sized objects.
    ///
    /// # Errors
    /// When the context is older than OpenGL 3.3, the size exceeds `GL_MAX_TEXTURE_SIZE`, a
    /// shader does not compile, or a GL call fails.
    pub fn new(size: Size, upload: Upload, target: Target) -> Result<Renderer> {
        if !gl::CreateShader::is_loaded() || !gl::GenVertexArrays::is_loaded() {
            bail!("the OpenGL context lacks OpenGL 3.3 core functions (shaders, vertex arrays)");
        }
        // Clear any error left by context creation.
        // SAFETY: a context is current (module contract).
        unsafe { gl::GetError() };
        let program = link_program()?;
        let mut vao = 0;
        // SAFETY: a context is current; `vao` is a valid out-pointer for one name.
        unsafe {
            gl::GenVertexArrays(1, &mut vao);
            gl::UseProgram(program);
            let name = c"frame";
            gl::Uniform1i(gl::GetUniformLocation(program, name.as_ptr()), 0);
            gl::Disable(gl::DEPTH_TEST);
            gl::Disable(gl::BLEND);
        }
        let mut renderer = Renderer {
            size,
            upload,
            target,
            program,
            vao,
            objects: SizedObjects {
                texture: 0,
                immutable: false,
                pbo: None,
                offscreen: None,
            },
        };
        renderer.objects = renderer.create_sized(size)?;
        check_gl("creating the renderer")?;
        Ok(renderer)
    }

    /// Replaces the texture, pixel buffer and offscreen framebuffer with ones of `size`. Any
    /// CUDA registration of the old objects must have been dropped before.
    ///
    /// # Errors
    /// As [`Renderer::new`].
    pub fn resize(&mut self, size: Size) -> Result<()> {
        self.delete_sized();
        self.objects = self.create_sized(size)?;
        self.size = size;
        check_gl(&format!("resizing the frame to {size}"))
    }

    /// The frame size.
    pub fn size(&self) -> Size {
        self.size
    }

    /// How pixels reach the texture.
    pub fn upload(&self) -> Upload {
        self.upload
    }

    /// Where the frame is drawn.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The frame's `GL_TEXTURE_2D` (RGBA8, one level).
    pub fn texture(&self) -> GLuint {
        self.objects.texture
    }

    /// Whether the texture has immutable storage (`glTexStorage2D`, GL 4.2 or
    /// `ARB_texture_storage`); otherwise it was made with `glTexImage2D`.
    pub fn texture_is_immutable(&self) -> bool {
        self.objects.immutable
    }

    /// The pixel buffer object (`size.width * size.height * 4` bytes), for
    /// [`Upload::PixelBuffer`].
    pub fn pixel_buffer(&self) -> Option<GLuint> {
        self.objects.pbo
    }

    fn create_sized(&self, size: Size) -> Result<SizedObjects> {
        let mut max: GLint = 0;
        // SAFETY: a context is current; `max` is a valid out-pointer for one integer.
        unsafe { gl::GetIntegerv(gl::MAX_TEXTURE_SIZE, &mut max) };
        let limit = u32::try_from(max).unwrap_or(0);
        if size.width > limit || size.height > limit {
            bail!("the frame size {size} exceeds this OpenGL's GL_MAX_TEXTURE_SIZE of {max}");
        }
        let (w, h) = (size.width as GLsizei, size.height as GLsizei);
        let immutable = gl::TexStorage2D::is_loaded();
        let mut texture = 0;
        // SAFETY: a context is current; the out-pointers are valid; a null data pointer with
        // no bound unpack buffer only allocates.
        unsafe {
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
            gl::GenTextures(1, &mut texture);
            gl::BindTexture(gl::TEXTURE_2D, texture);
            if immutable {
                gl::TexStorage2D(gl::TEXTURE_2D, 1, gl::RGBA8, w, h);
            } else {
                gl::TexImage2D(
                    gl::TEXTURE_2D,
                    0,
                    gl::RGBA8 as GLint,
                    w,
                    h,
                    0,
                    gl::RGBA,
                    gl::UNSIGNED_BYTE,
                    std::ptr::null(),
                );
            }
            for (param, value) in [
                (gl::TEXTURE_MIN_FILTER, gl::NEAREST),
                (gl::TEXTURE_MAG_FILTER, gl::NEAREST),
                (gl::TEXTURE_WRAP_S, gl::CLAMP_TO_EDGE),
                (gl::TEXTURE_WRAP_T, gl::CLAMP_TO_EDGE),
            ] {
                gl::TexParameteri(gl::TEXTURE_2D, param, value as GLint);
            }
            gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_BASE_LEVEL, 0);
            gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MAX_LEVEL, 0);
        }
        let pbo = (self.upload == Upload::PixelBuffer).then(|| {
            let mut pbo = 0;
            // SAFETY: a context is current; a null data pointer only allocates the storage.
            unsafe {
                gl::GenBuffers(1, &mut pbo);
                gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, pbo);
                gl::BufferData(
                    gl::PIXEL_UNPACK_BUFFER,
                    size.rgba_bytes() as GLsizeiptr,
                    std::ptr::null(),
                    gl::STREAM_DRAW,
                );
                gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
            }
            pbo
        });
        let offscreen = match self.target {
            Target::Window => None,
            Target::Offscreen => Some(create_offscreen(w, h)?),
        };
        check_gl(&format!("allocating the {size} texture and buffers"))
            .context("out of GPU memory, or a size the driver refuses")?;
        Ok(SizedObjects {
            texture,
            immutable,
            pbo,
            offscreen,
        })
    }

    fn delete_sized(&mut self) {
        let o = &mut self.objects;
        // SAFETY: a context is current; deleting names this renderer created (0 is ignored).
        unsafe {
            gl::DeleteTextures(1, &o.texture);
            if let Some(pbo) = o.pbo.take() {
                gl::DeleteBuffers(1, &pbo);
            }
            if let Some((fbo, rbo)) = o.offscreen.take() {
                gl::DeleteFramebuffers(1, &fbo);
                gl::DeleteRenderbuffers(1, &rbo);
            }
        }
        o.texture = 0;
    }

    /// Copies `pixels` (RGBA8, `size` bytes) into the pixel buffer with `glBufferSubData`.
    ///
    /// # Errors
    /// Without a pixel buffer, or when `pixels` is not exactly one frame.
    pub fn write_pixel_buffer(&self, pixels: &[u8]) -> Result<()> {
        let Some(pbo) = self.objects.pbo else {
            bail!("this renderer has no pixel buffer (the surface path writes the texture)");
        };
        if pixels.len() != self.size.rgba_bytes() {
            bail!(
                "{} bytes of pixels for a {} frame of {} bytes",
                pixels.len(),
                self.size,
                self.size.rgba_bytes()
            );
        }
        // SAFETY: a context is current; `pixels` is valid for its length, which is exactly the
        // buffer's size.
        unsafe {
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, pbo);
            gl::BufferSubData(
                gl::PIXEL_UNPACK_BUFFER,
                0,
                pixels.len() as GLsizeiptr,
                pixels.as_ptr().cast(),
            );
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        }
        Ok(())
    }

    /// `glTexSubImage2D` of the whole texture from the pixel buffer (a copy on the GPU).
    ///
    /// # Errors
    /// Without a pixel buffer.
    pub fn upload_from_pixel_buffer(&self) -> Result<()> {
        let Some(pbo) = self.objects.pbo else {
            bail!("this renderer has no pixel buffer (the surface path writes the texture)");
        };
        self.upload_from(pbo);
        Ok(())
    }

    /// Copies one RGBA8 frame of the texture's size from GL buffer `buffer` (a pixel buffer, or
    /// a frame stream's slot) into the texture with `glTexSubImage2D`, on the GPU.
    ///
    /// `buffer` must be a live buffer of at least `size().rgba_bytes()` bytes.
    pub fn upload_from(&self, buffer: GLuint) {
        // SAFETY: a context is current; with `buffer` bound to GL_PIXEL_UNPACK_BUFFER the null
        // pointer is offset 0 into it, and the buffer holds at least one RGBA8 frame of the
        // texture's size (the caller's contract; GL reports a smaller one as an error).
        unsafe {
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, buffer);
            gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
            gl::BindTexture(gl::TEXTURE_2D, self.objects.texture);
            gl::TexSubImage2D(
                gl::TEXTURE_2D,
                0,
                0,
                0,
                self.size.width as GLsizei,
                self.size.height as GLsizei,
                gl::RGBA,
                gl::UNSIGNED_BYTE,
                std::ptr::null(),
            );
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        }
    }

    /// Draws the texture over the whole `viewport` (the window's framebuffer size, or the
    /// offscreen framebuffer).
    pub fn draw(&self, viewport: Size) {
        let fbo = self.objects.offscreen.map_or(0, |(fbo, _)| fbo);
        let viewport = match self.target {
            Target::Window => viewport,
            Target::Offscreen => self.size,
        };
        // SAFETY: a context is current; every name belongs to this renderer; the empty vertex
        // array is valid for a draw whose vertex shader reads only gl_VertexID.
        unsafe {
            gl::BindFramebuffer(gl::DRAW_FRAMEBUFFER, fbo);
            gl::Viewport(0, 0, viewport.width as GLsizei, viewport.height as GLsizei);
            gl::UseProgram(self.program);
            gl::ActiveTexture(gl::TEXTURE0);
            gl::BindTexture(gl::TEXTURE_2D, self.objects.texture);
            gl::BindVertexArray(self.vao);
            gl::DrawArrays(gl::TRIANGLES, 0, 3);
        }
    }

    /// Reads the texture back as RGBA8 rows, bottom row first (texture row 0 first, as the
    /// kernels and `render_cpu` lay out a frame).
    ///
    /// # Errors
    /// On a GL error.
    pub fn read_texture(&self) -> Result<Vec<u8>> {
        let mut pixels = vec![0u8; self.size.rgba_bytes()];
        // SAFETY: a context is current; no pack buffer is bound, so GL writes the texture's
        // level 0 (exactly `pixels.len()` bytes at pack alignment 4) into `pixels`.
        unsafe {
            gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
            gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
            gl::BindTexture(gl::TEXTURE_2D, self.objects.texture);
            gl::GetTexImage(
                gl::TEXTURE_2D,
                0,
                gl::RGBA,
                gl::UNSIGNED_BYTE,
                pixels.as_mut_ptr().cast(),
            );
        }
        check_gl("reading the texture back")?;
        Ok(pixels)
    }

    /// Reads back what [`Renderer::draw`] drew into the offscreen framebuffer: RGBA8, bottom
    /// row first. `None` for a window (read its pixels with the window system's tools).
    ///
    /// # Errors
    /// On a GL error.
    pub fn read_drawn(&self) -> Result<Option<Vec<u8>>> {
        let Some((fbo, _)) = self.objects.offscreen else {
            return Ok(None);
        };
        let mut pixels = vec![0u8; self.size.rgba_bytes()];
        // SAFETY: a context is current; no pack buffer is bound, so GL writes the framebuffer's
        // `size` RGBA8 pixels (exactly `pixels.len()` bytes at pack alignment 4) into `pixels`.
        unsafe {
            gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
            gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
            gl::BindFramebuffer(gl::READ_FRAMEBUFFER, fbo);
            gl::ReadBuffer(gl::COLOR_ATTACHMENT0);
            gl::ReadPixels(
                0,
                0,
                self.size.width as GLsizei,
                self.size.height as GLsizei,
                gl::RGBA,
                gl::UNSIGNED_BYTE,
                pixels.as_mut_ptr().cast(),
            );
            gl::BindFramebuffer(gl::READ_FRAMEBUFFER, 0);
        }
        check_gl("reading the offscreen framebuffer back")?;
        Ok(Some(pixels))
    }

    /// Waits until OpenGL has finished every command (`glFinish`).
    pub fn finish(&self) {
        // SAFETY: a context is current.
        unsafe { gl::Finish() };
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        self.delete_sized();
        // SAFETY: the GL context is still current (module contract); the names are ours.
        unsafe {
            gl::DeleteVertexArrays(1, &self.vao);
            gl::DeleteProgram(self.program);
        }
    }
}

/// An offscreen framebuffer with an RGBA8 renderbuffer of `w` x `h`.
fn create_offscreen(w: GLsizei, h: GLsizei) -> Result<(GLuint, GLuint)> {
    let (mut fbo, mut rbo) = (0, 0);
    // SAFETY: a context is current; the out-pointers are valid for one name each.
    let status = unsafe {
        gl::GenRenderbuffers(1, &mut rbo);
        gl::BindRenderbuffer(gl::RENDERBUFFER, rbo);
        gl::RenderbufferStorage(gl::RENDERBUFFER, gl::RGBA8, w, h);
        gl::GenFramebuffers(1, &mut fbo);
        gl::BindFramebuffer(gl::FRAMEBUFFER, fbo);
        gl::FramebufferRenderbuffer(
            gl::FRAMEBUFFER,
            gl::COLOR_ATTACHMENT0,
            gl::RENDERBUFFER,
            rbo,
        );
        let status = gl::CheckFramebufferStatus(gl::FRAMEBUFFER);
        gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        status
    };
    if status != gl::FRAMEBUFFER_COMPLETE {
        // SAFETY: a context is current; the names were just created.
        unsafe {
            gl::DeleteFramebuffers(1, &fbo);
            gl::DeleteRenderbuffers(1, &rbo);
        }
        bail!("the offscreen framebuffer ({w}x{h} RGBA8) is incomplete (status {status:#06x})");
    }
    Ok((fbo, rbo))
}

fn compile(kind: GLenum, source: &CStr, label: &str) -> Result<GLuint> {
    // SAFETY: a context is current; `source` is NUL-terminated, so a null length array is
    // allowed; the out-pointers are valid.
    unsafe {
        let shader = gl::CreateShader(kind);
        gl::ShaderSource(shader, 1, &source.as_ptr(), std::ptr::null());
        gl::CompileShader(shader);
        checked(shader, gl::COMPILE_STATUS, SHADER_FNS)
            .map_err(|log| anyhow!("the {label} shader does not compile: {log}"))
    }
}

/// Compiles and links the program that draws a texture over the whole viewport: one
/// full-screen triangle (no vertex attributes: bind an empty vertex array and draw 3 vertices)
/// sampling the `sampler2D frame` (texture unit 0 unless set otherwise). The caller owns the
/// program and deletes it with `glDeleteProgram`.
///
/// # Errors
/// A shader that does not compile or a program that does not link, with GL's info log.
pub fn link_program() -> Result<GLuint> {
    link_shaders(VERTEX_SHADER, FRAGMENT_SHADER)
}

/// Compiles `vertex` and `fragment` (GLSL sources) and links them into a program, which the
/// caller owns and deletes with `glDeleteProgram`. The shaders are deleted either way.
///
/// # Errors
/// A shader that does not compile or a program that does not link, with GL's info log.
pub fn link_shaders(vertex: &CStr, fragment: &CStr) -> Result<GLuint> {
    let vs = compile(gl::VERTEX_SHADER, vertex, "vertex")?;
    let fs = match compile(gl::FRAGMENT_SHADER, fragment, "fragment") {
        Ok(fs) => fs,
        Err(e) => {
            // SAFETY: a context is current; `vs` was just created.
            unsafe { gl::DeleteShader(vs) };
            return Err(e);
        }
    };
    // SAFETY: a context is current; the shaders compiled; the out-pointer is valid.
    unsafe {
        let program = gl::CreateProgram();
        gl::AttachShader(program, vs);
        gl::AttachShader(program, fs);
        gl::LinkProgram(program);
        gl::DeleteShader(vs);
        gl::DeleteShader(fs);
        checked(program, gl::LINK_STATUS, PROGRAM_FNS)
            .map_err(|log| anyhow!("the shader program does not link: {log}"))
    }
}

type GetIv = unsafe fn(GLuint, GLenum, *mut GLint);
type GetLog = unsafe fn(GLuint, GLsizei, *mut GLsizei, *mut gl::types::GLchar);
type Delete = unsafe fn(GLuint);

/// The status query, the info log read and the delete of one kind of GL object.
const SHADER_FNS: (GetIv, GetLog, Delete) =
    (gl::GetShaderiv, gl::GetShaderInfoLog, gl::DeleteShader);
const PROGRAM_FNS: (GetIv, GetLog, Delete) =
    (gl::GetProgramiv, gl::GetProgramInfoLog, gl::DeleteProgram);

/// `object` when its `status` (`GL_COMPILE_STATUS` or `GL_LINK_STATUS`) is true; otherwise
/// deletes it and returns its info log.
///
/// # Safety
/// A context is current and `object` is a shader (with [`SHADER_FNS`]) or a program (with
/// [`PROGRAM_FNS`]).
unsafe fn checked(
    object: GLuint,
    status: GLenum,
    (get_iv, get_log, delete): (GetIv, GetLog, Delete),
) -> std::result::Result<GLuint, String> {
    let mut ok = 0;
    // SAFETY: caller's contract; `ok` is a valid out-pointer.
    unsafe { get_iv(object, status, &mut ok) };
    if ok != 0 {
        return Ok(object);
    }
    // SAFETY: caller's contract.
    let log = unsafe { info_log(object, get_iv, get_log) };
    // SAFETY: caller's contract; `object` is not used after this.
    unsafe { delete(object) };
    Err(log)
}

/// # Safety
/// A context is current and `object` is a shader (with the shader functions) or a program (with
/// the program functions).
unsafe fn info_log(object: GLuint, get_iv: GetIv, get_log: GetLog) -> String {
    let mut len: GLint = 0;
    // SAFETY: caller's contract; `len` is a valid out-pointer.
    unsafe { get_iv(object, gl::INFO_LOG_LENGTH, &mut len) };
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0).max(1)];
    let mut written: GLsizei = 0;
    // SAFETY: caller's contract; `buf` holds `buf.len()` bytes.
    unsafe {
        get_log(
            object,
            buf.len() as GLsizei,
            &mut written,
            buf.as_mut_ptr().cast(),
        )
    };
    buf.truncate(usize::try_from(written).unwrap_or(0));
    String::from_utf8_lossy(&buf).trim().to_string()
}
