//! OpenGL objects the benchmark needs, each created with a readable error instead of a panic and
//! deleted on drop, plus the few GL operations the cases time.
//!
//! Every function here must run on the thread whose headless context is current (the bench's
//! only thread) after `HeadlessContext` loaded the `gl` function pointers.

use anyhow::{Context as _, Result, bail, ensure};
use std::ffi::CString;

/// `impl Drop` for a struct owning one GL object: `self.$field` is deleted with `gl::$delete`
/// (`DeleteBuffers`, `DeleteTextures`, ...). The name came from the matching `glGen*` call in the
/// struct's constructor and the struct is its only owner, so it is deleted once.
macro_rules! delete_on_drop {
    ($ty:ty, $field:tt, $delete:ident) => {
        impl Drop for $ty {
            fn drop(&mut self) {
                // SAFETY: the name came from the matching glGen* call and is deleted once.
                unsafe { gl::$delete(1, &self.$field) };
            }
        }
    };
}
pub(crate) use delete_on_drop;

/// Returns every pending GL error as one error naming `what`, or `Ok` when there is none.
pub fn check(what: &str) -> Result<()> {
    let mut codes = Vec::new();
    loop {
        // SAFETY: glGetError has no preconditions beyond a current context.
        let code = unsafe { gl::GetError() };
        if code == gl::NO_ERROR || codes.len() >= 8 {
            break;
        }
        codes.push(format!("{} (0x{code:04x})", cuda_gl::gl_error_name(code)));
    }
    if codes.is_empty() {
        Ok(())
    } else {
        bail!("{what}: OpenGL reported {}", codes.join(", "))
    }
}

/// Fails unless the current context is OpenGL 4.3 or newer (`glClearBufferSubData`,
/// `glTexStorage2D`).
pub fn require_version(major: i32, minor: i32) -> Result<()> {
    let (mut have_major, mut have_minor) = (0, 0);
    // SAFETY: both out-pointers are valid i32s; the queries exist since OpenGL 3.0.
    unsafe {
        gl::GetIntegerv(gl::MAJOR_VERSION, &mut have_major);
        gl::GetIntegerv(gl::MINOR_VERSION, &mut have_minor);
    }
    check("querying the OpenGL version")?;
    ensure!(
        (have_major, have_minor) >= (major, minor),
        "the benchmark needs OpenGL {major}.{minor}, but the context is {have_major}.{have_minor}"
    );
    Ok(())
}

fn gl_size(bytes: usize, what: &str) -> Result<isize> {
    isize::try_from(bytes).with_context(|| format!("{what}: {bytes} bytes is too large for GL"))
}

fn gl_dim(value: u32, what: &str) -> Result<i32> {
    i32::try_from(value).with_context(|| format!("{what}: {value} is too large for GL"))
}

/// A buffer object with `size` bytes of uninitialised storage (`GL_DYNAMIC_DRAW`).
#[derive(Debug)]
pub struct Buffer {
    name: u32,
    size: usize,
}

impl Buffer {
    /// Creates the buffer; `what` names it in errors.
    pub fn new(size: usize, what: &str) -> Result<Buffer> {
        let bytes = gl_size(size, what)?;
        let mut name = 0;
        // SAFETY: `name` is a valid out-pointer for one name.
        unsafe { gl::GenBuffers(1, &mut name) };
        ensure!(name != 0, "{what}: glGenBuffers returned no name");
        // Owned from here on, so an error below still deletes it.
        let buffer = Buffer { name, size };
        // SAFETY: `name` is a fresh buffer name; a null data pointer asks for uninitialised
        // storage of `bytes` bytes. COPY_WRITE_BUFFER is a binding nothing else uses.
        unsafe {
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, name);
            gl::BufferData(
                gl::COPY_WRITE_BUFFER,
                bytes,
                std::ptr::null(),
                gl::DYNAMIC_DRAW,
            );
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
        }
        check(&format!("{what}: creating a {size}-byte buffer"))?;
        Ok(buffer)
    }

    /// The GL name.
    pub fn name(&self) -> u32 {
        self.name
    }

    /// Replaces the first `data.len()` bytes (`glBufferSubData`).
    pub fn write(&self, data: &[u8]) -> Result<()> {
        ensure!(
            data.len() <= self.size,
            "writing {} bytes into a {}-byte buffer",
            data.len(),
            self.size
        );
        let bytes = gl_size(data.len(), "glBufferSubData")?;
        // SAFETY: the buffer is live and at least `bytes` long; `data` is readable for `bytes`.
        unsafe {
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, self.name);
            gl::BufferSubData(gl::COPY_WRITE_BUFFER, 0, bytes, data.as_ptr().cast());
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
        }
        Ok(())
    }

    /// Clears the first 64 bytes to a constant (`glClearBufferSubData`): the "tiny GL op".
    pub fn clear_64_bytes(&self, value: u32) -> Result<()> {
        ensure!(self.size >= 64, "the buffer is smaller than 64 bytes");
        // SAFETY: the buffer is live and at least 64 bytes long; `value` is one GL_UNSIGNED_INT
        // of GL_RED_INTEGER data, as the R32UI internal format takes.
        unsafe {
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, self.name);
            gl::ClearBufferSubData(
                gl::COPY_WRITE_BUFFER,
                gl::R32UI,
                0,
                64,
                gl::RED_INTEGER,
                gl::UNSIGNED_INT,
                (&raw const value).cast(),
            );
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
        }
        Ok(())
    }
}

delete_on_drop!(Buffer, name, DeleteBuffers);

/// An immutable RGBA8 2D texture with one level, linear filtering.
#[derive(Debug)]
pub struct Texture {
    name: u32,
    width: u32,
    height: u32,
}

impl Texture {
    /// Creates the texture; `what` names it in errors.
    pub fn new(width: u32, height: u32, what: &str) -> Result<Texture> {
        let (w, h) = (gl_dim(width, what)?, gl_dim(height, what)?);
        let mut name = 0;
        // SAFETY: `name` is a valid out-pointer for one name.
        unsafe { gl::GenTextures(1, &mut name) };
        ensure!(name != 0, "{what}: glGenTextures returned no name");
        let texture = Texture {
            name,
            width,
            height,
        };
        // SAFETY: `name` is a fresh texture name, bound to TEXTURE_2D before use; the storage
        // call allocates one RGBA8 level of the given size.
        unsafe {
            gl::BindTexture(gl::TEXTURE_2D, name);
            gl::TexStorage2D(gl::TEXTURE_2D, 1, gl::RGBA8, w, h);
            gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MIN_FILTER, gl::LINEAR as i32);
            gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MAG_FILTER, gl::LINEAR as i32);
            gl::BindTexture(gl::TEXTURE_2D, 0);
        }
        check(&format!(
            "{what}: creating a {width}x{height} RGBA8 texture"
        ))?;
        Ok(texture)
    }

    /// The GL name.
    pub fn name(&self) -> u32 {
        self.name
    }

    fn byte_len(&self) -> usize {
        self.width as usize * self.height as usize * 4
    }

    /// Uploads the whole texture from `pbo` at offset 0 (`glTexSubImage2D` with a bound
    /// `GL_PIXEL_UNPACK_BUFFER`): a GPU-side copy.
    pub fn upload_from_pbo(&self, pbo: &Buffer) -> Result<()> {
        ensure!(
            pbo.size >= self.byte_len(),
            "the PBO ({} bytes) is smaller than the texture ({} bytes)",
            pbo.size,
            self.byte_len()
        );
        // SAFETY: both objects are live; with a PIXEL_UNPACK_BUFFER bound the null pointer is
        // offset 0 into the PBO, which holds the whole image (checked above) (1).
        unsafe {
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, pbo.name);
            self.sub_image(std::ptr::null());
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        }
        Ok(())
    }

    /// Uploads the whole texture from host memory (`glTexSubImage2D`, no PBO bound).
    pub fn upload_from_host(&self, pixels: &[u8]) -> Result<()> {
        ensure!(
            pixels.len() >= self.byte_len(),
            "{} bytes of pixels for a texture of {} bytes",
            pixels.len(),
            self.byte_len()
        );
        // SAFETY: (1) no PIXEL_UNPACK_BUFFER is bound (every user unbinds it), so GL reads
        // width * height * 4 bytes from `pixels`, which is at least that long.
        unsafe { self.sub_image(pixels.as_ptr().cast()) };
        Ok(())
    }

    /// `glTexSubImage2D` of the whole texture (RGBA, unsigned bytes) from `pixels`.
    ///
    /// # Safety
    /// 1. `pixels` is valid for `width * height * 4` bytes: an offset into the bound
    ///    `PIXEL_UNPACK_BUFFER`, or host memory when none is bound.
    unsafe fn sub_image(&self, pixels: *const std::ffi::c_void) {
        // SAFETY: the texture is live (owned by `self`) and its dimensions fit i32 (checked at
        // creation); the source is valid (1).
        unsafe {
            gl::BindTexture(gl::TEXTURE_2D, self.name);
            gl::TexSubImage2D(
                gl::TEXTURE_2D,
                0,
                0,
                0,
                self.width as i32,
                self.height as i32,
                gl::RGBA,
                gl::UNSIGNED_BYTE,
                pixels,
            );
            gl::BindTexture(gl::TEXTURE_2D, 0);
        }
    }
}

delete_on_drop!(Texture, name, DeleteTextures);

/// A framebuffer object with one RGBA8 colour texture: where the frames are drawn.
#[derive(Debug)]
pub struct Framebuffer {
    name: u32,
    color: Texture,
}

impl Framebuffer {
    /// Creates a complete `width` x `height` framebuffer; `what` names it in errors.
    pub fn new(width: u32, height: u32, what: &str) -> Result<Framebuffer> {
        let color = Texture::new(width, height, what)?;
        let mut name = 0;
        // SAFETY: `name` is a valid out-pointer for one name.
        unsafe { gl::GenFramebuffers(1, &mut name) };
        ensure!(name != 0, "{what}: glGenFramebuffers returned no name");
        let fbo = Framebuffer { name, color };
        // SAFETY: both names are live; the colour texture has storage (level 0).
        let status = unsafe {
            gl::BindFramebuffer(gl::FRAMEBUFFER, name);
            gl::FramebufferTexture2D(
                gl::FRAMEBUFFER,
                gl::COLOR_ATTACHMENT0,
                gl::TEXTURE_2D,
                fbo.color.name,
                0,
            );
            let status = gl::CheckFramebufferStatus(gl::FRAMEBUFFER);
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
            status
        };
        check(&format!("{what}: creating a {width}x{height} framebuffer"))?;
        ensure!(
            status == gl::FRAMEBUFFER_COMPLETE,
            "{what}: the {width}x{height} framebuffer is incomplete (status 0x{status:04x})"
        );
        Ok(fbo)
    }
}

// The colour texture is deleted by its own Drop afterwards.
delete_on_drop!(Framebuffer, name, DeleteFramebuffers);

/// A shader program and an empty vertex array that draw a texture over a whole framebuffer with
/// one full-screen triangle: the "draw" step of a frame.
#[derive(Debug)]
pub struct Blit {
    program: u32,
    vao: u32,
}

impl Blit {
    /// Compiles and links the program.
    pub fn new() -> Result<Blit> {
        // The demo's program: the same full-screen triangle sampling `frame`.
        let program = plasma_demo::renderer::link_program().context("the blit program")?;
        Blit::with_program(program)
    }

    /// A blit through `program`: a linked program that draws one full-screen triangle with no
    /// vertex attributes and samples `frame` (if it has it) from texture unit 0. The blit owns
    /// the program and deletes it on drop.
    pub fn with_program(program: u32) -> Result<Blit> {
        let mut blit = Blit { program, vao: 0 };
        // SAFETY: `blit.vao` is a valid out-pointer for one name.
        unsafe { gl::GenVertexArrays(1, &mut blit.vao) };
        ensure!(blit.vao != 0, "glGenVertexArrays returned no name");
        let uniform = CString::new("frame")?;
        // SAFETY: the program is linked; the name is NUL-terminated. Sampler `frame` reads
        // texture unit 0.
        unsafe {
            gl::UseProgram(program);
            let at = gl::GetUniformLocation(program, uniform.as_ptr());
            if at >= 0 {
                gl::Uniform1i(at, 0);
            }
            gl::UseProgram(0);
        }
        check("creating the blit program")?;
        Ok(blit)
    }

    /// Draws `source` over all of `target` (a full-screen triangle sampling the texture).
    pub fn draw(&self, source: &Texture, target: &Framebuffer) -> Result<()> {
        self.draw_from(gl::TEXTURE_2D, source.name, target);
        Ok(())
    }

    /// Draws over all of `target` with texture `source` bound to `binding` (`GL_TEXTURE_2D`,
    /// `GL_TEXTURE_BUFFER`, ...) of texture unit 0.
    pub fn draw_from(&self, binding: u32, source: u32, target: &Framebuffer) {
        let (w, h) = (target.color.width as i32, target.color.height as i32);
        // SAFETY: every name is live (`source` is a texture of `binding`'s kind, as the caller
        // passes it); the program is linked and the VAO empty (the vertex shader needs no
        // attributes); the framebuffer is complete and its size fits i32 (both checked at
        // creation).
        unsafe {
            gl::BindFramebuffer(gl::FRAMEBUFFER, target.name);
            gl::Viewport(0, 0, w, h);
            gl::UseProgram(self.program);
            gl::BindVertexArray(self.vao);
            gl::ActiveTexture(gl::TEXTURE0);
            gl::BindTexture(binding, source);
            gl::DrawArrays(gl::TRIANGLES, 0, 3);
            gl::BindTexture(binding, 0);
            gl::BindVertexArray(0);
            gl::UseProgram(0);
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        }
    }
}

impl Drop for Blit {
    fn drop(&mut self) {
        // SAFETY: both names came from this struct's constructor (0 is ignored by GL) and are
        // deleted once.
        unsafe {
            gl::DeleteVertexArrays(1, &self.vao);
            gl::DeleteProgram(self.program);
        }
    }
}

/// `glFlush`: submits the GL commands issued so far without waiting for them.
pub fn flush() {
    // SAFETY: no arguments; a context is current.
    unsafe { gl::Flush() };
}

/// `glFinish`: waits until every GL command issued so far has completed on the GPU.
pub fn finish() {
    // SAFETY: no arguments; a context is current.
    unsafe { gl::Finish() };
}

/// How long a fence wait lasts before giving up (the GPU is hung by then).
const FENCE_TIMEOUT_NS: u64 = 10_000_000_000;

/// An immutable RGBA8 2D array texture with one level, deleted on drop.
#[derive(Debug)]
pub struct ArrayTexture {
    pub name: u32,
}

impl ArrayTexture {
    /// A `w` x `h` texture of `layers` layers; `what` names it in the error.
    pub fn new((w, h): (u32, u32), layers: u32, what: &str) -> Result<ArrayTexture> {
        let (w, h, d) = (i32::try_from(w)?, i32::try_from(h)?, i32::try_from(layers)?);
        let mut name = 0;
        // SAFETY: `name` is a valid out-pointer for one name.
        unsafe { gl::GenTextures(1, &mut name) };
        ensure!(name != 0, "{what}: glGenTextures returned no name");
        let texture = ArrayTexture { name };
        // SAFETY: a fresh texture name, bound before use; one RGBA8 level of w x h x d.
        unsafe {
            gl::BindTexture(gl::TEXTURE_2D_ARRAY, name);
            gl::TexStorage3D(gl::TEXTURE_2D_ARRAY, 1, gl::RGBA8, w, h, d);
            gl::BindTexture(gl::TEXTURE_2D_ARRAY, 0);
        }
        check(&format!(
            "{what}: creating a {w}x{h}x{d} RGBA8 array texture"
        ))?;
        Ok(texture)
    }
}

delete_on_drop!(ArrayTexture, name, DeleteTextures);

/// A GL fence after a frame's commands, deleted on drop.
#[derive(Debug)]
pub struct Fence(gl::types::GLsync);

impl Fence {
    /// Inserts a fence after every GL command issued so far.
    pub fn new() -> Result<Fence> {
        // SAFETY: no pointers; a context is current.
        let sync = unsafe { gl::FenceSync(gl::SYNC_GPU_COMMANDS_COMPLETE, 0) };
        ensure!(!sync.is_null(), "glFenceSync returned no fence");
        Ok(Fence(sync))
    }

    /// Waits until the GPU has passed the fence (flushing first, so it gets there).
    pub fn wait(self) -> Result<()> {
        // SAFETY: the fence is live (deleted only by Drop).
        let status =
            unsafe { gl::ClientWaitSync(self.0, gl::SYNC_FLUSH_COMMANDS_BIT, FENCE_TIMEOUT_NS) };
        match status {
            gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Ok(()),
            gl::TIMEOUT_EXPIRED => bail!("a frame's GL fence did not signal within 10 s"),
            other => bail!("glClientWaitSync failed (0x{other:04x})"),
        }
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        // SAFETY: the fence came from glFenceSync and is deleted once.
        unsafe { gl::DeleteSync(self.0) };
    }
}
