//! The GL objects the examples draw with and read back: shader programs, a mesh, an offscreen
//! framebuffer, textures and buffers, pixel read-back and PNG writing.

use super::gl_check;
use anyhow::{Context as _, Result, bail};
use std::ffi::{CString, c_void};
use std::path::Path;

/// Compiles and links a vertex and a fragment shader into a program; the error carries GL's log.
pub fn program(vertex: &str, fragment: &str) -> Result<u32> {
    let shader = |kind: u32, source: &str| -> Result<u32> {
        let source = CString::new(source)?;
        // SAFETY: a GL context is current; the source is NUL-terminated and outlives the call.
        unsafe {
            let shader = gl::CreateShader(kind);
            gl::ShaderSource(shader, 1, &source.as_ptr(), std::ptr::null());
            gl::CompileShader(shader);
            succeeded(
                shader,
                gl::COMPILE_STATUS,
                gl::GetShaderiv,
                gl::GetShaderInfoLog,
            )
            .inspect_err(|_| gl::DeleteShader(shader))
            .context("the shader does not compile")?;
            Ok(shader)
        }
    };
    let vs = shader(gl::VERTEX_SHADER, vertex)?;
    let fs = shader(gl::FRAGMENT_SHADER, fragment)?;
    // SAFETY: a GL context is current; `vs` and `fs` are compiled shaders.
    unsafe {
        let program = gl::CreateProgram();
        gl::AttachShader(program, vs);
        gl::AttachShader(program, fs);
        gl::LinkProgram(program);
        // The program keeps what it needs; the shader objects can go.
        gl::DeleteShader(vs);
        gl::DeleteShader(fs);
        succeeded(
            program,
            gl::LINK_STATUS,
            gl::GetProgramiv,
            gl::GetProgramInfoLog,
        )
        .inspect_err(|_| gl::DeleteProgram(program))
        .context("the program does not link")?;
        Ok(program)
    }
}

/// `Ok` when the shader's or program's `status` (compile or link) is true, else its info log.
///
/// # Safety
/// A GL context must be current, and `object` a shader or program that the functions accept.
unsafe fn succeeded(
    object: u32,
    status: u32,
    get_iv: unsafe fn(u32, u32, *mut i32),
    get_log: unsafe fn(u32, i32, *mut i32, *mut gl::types::GLchar),
) -> Result<()> {
    let mut ok = 0;
    // SAFETY: the caller's contract; `ok` receives one integer.
    unsafe { get_iv(object, status, &mut ok) };
    if ok != 0 {
        return Ok(());
    }
    let mut log = vec![0u8; 4096];
    let mut len = 0;
    // SAFETY: the caller's contract; `log` has room for the 4096 bytes GL may write.
    unsafe { get_log(object, log.len() as i32, &mut len, log.as_mut_ptr().cast()) };
    log.truncate(usize::try_from(len).unwrap_or(0));
    bail!("{}", String::from_utf8_lossy(&log).trim())
}

/// What an example draws: a shader program and a vertex array over one vertex buffer. The GL
/// objects are deleted on drop (the GL context must still be current, see [`Gpu`]).
#[derive(Debug)]
pub struct Mesh {
    /// The linked program.
    pub program: u32,
    /// The vertex array object.
    pub vao: u32,
    /// The vertex buffer: CUDA can register it.
    pub vbo: u32,
    /// `GL_POINTS`, `GL_TRIANGLES`, ...
    pub mode: u32,
    /// Vertices drawn.
    pub vertices: usize,
}

impl Mesh {
    /// Compiles `shaders` (vertex, fragment) and creates a buffer of `vertices` vertices of
    /// `stride` floats each, filled from `data` when given (else left for CUDA to write), with one
    /// float attribute per `(location, components, offset in floats)`.
    pub fn new(
        shaders: (&str, &str),
        mode: u32,
        vertices: usize,
        stride: usize,
        data: Option<&[f32]>,
        attributes: &[(u32, i32, usize)],
    ) -> Result<Mesh> {
        let float = size_of::<f32>();
        let bytes = vertices * stride * float;
        if data.is_some_and(|d| size_of_val(d) != bytes) {
            bail!("the vertex data is not {vertices} vertices of {stride} floats");
        }
        let mut mesh = Mesh {
            program: program(shaders.0, shaders.1)?,
            vao: 0,
            vbo: 0,
            mode,
            vertices,
        };
        // SAFETY: a GL context is current; `data`, when given, holds the `bytes` bytes GL copies
        // (checked above); the attribute offsets are byte offsets into the bound buffer.
        unsafe {
            gl::GenVertexArrays(1, &mut mesh.vao);
            gl::BindVertexArray(mesh.vao);
            gl::GenBuffers(1, &mut mesh.vbo);
            gl::BindBuffer(gl::ARRAY_BUFFER, mesh.vbo);
            // The buffer must have its size before CUDA registers it. DYNAMIC_DRAW: written often.
            let pointer = data.map_or(std::ptr::null(), |d| d.as_ptr().cast());
            gl::BufferData(gl::ARRAY_BUFFER, bytes as isize, pointer, gl::DYNAMIC_DRAW);
            for &(location, components, offset) in attributes {
                let (stride, offset) = ((stride * float) as i32, (offset * float) as *const c_void);
                gl::VertexAttribPointer(location, components, gl::FLOAT, gl::FALSE, stride, offset);
                gl::EnableVertexAttribArray(location);
            }
            gl::BindVertexArray(0);
            gl::BindBuffer(gl::ARRAY_BUFFER, 0);
        }
        gl_check("creating the vertex array")?;
        Ok(mesh)
    }

    /// Clears `frame` to `clear` and draws the mesh into it.
    pub fn draw(&self, frame: &Framebuffer, clear: [f32; 4]) -> Result<()> {
        frame.bind()?;
        // SAFETY: a GL context is current; the vertex array holds `vertices` vertices.
        unsafe {
            gl::ClearColor(clear[0], clear[1], clear[2], clear[3]);
            gl::Clear(gl::COLOR_BUFFER_BIT);
            gl::UseProgram(self.program);
            gl::BindVertexArray(self.vao);
            gl::DrawArrays(self.mode, 0, self.vertices as i32);
            gl::BindVertexArray(0);
            gl::UseProgram(0);
        }
        gl_check("drawing")
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // SAFETY: the GL context is current (it outlives every mesh, see `Gpu`); the names came
        // from glGen* and glCreateProgram.
        unsafe {
            gl::DeleteVertexArrays(1, &self.vao);
            gl::DeleteBuffers(1, &self.vbo);
            gl::DeleteProgram(self.program);
        }
    }
}

/// The colour target the examples draw into and read back: cuda-gl's own
/// [`Offscreen`](cuda_gl::egl::Offscreen) (an RGBA8 texture attached to a framebuffer, read
/// back bottom row first).
pub use cuda_gl::egl::Offscreen as Framebuffer;

/// A `width` x `height` `GL_RGBA8` 2D texture with one level, sampled NEAREST (one texel per
/// pixel when drawn at its size), with no contents yet. Delete it with glDeleteTextures.
pub fn texture_rgba8(width: u32, height: u32) -> Result<u32> {
    texture_rgba8_levels(width, height, 1)
}

/// As [`texture_rgba8`], with `levels` mip levels (level n is `width >> n` x `height >> n`).
pub fn texture_rgba8_levels(width: u32, height: u32, levels: u32) -> Result<u32> {
    let mut texture = 0;
    // SAFETY: a GL context is current; the name comes from glGenTextures.
    unsafe {
        gl::GenTextures(1, &mut texture);
        gl::BindTexture(gl::TEXTURE_2D, texture);
        // Immutable storage (glTexStorage2D): the size and format cannot change while CUDA has
        // the texture registered.
        let (levels, width, height) = (levels as i32, width as i32, height as i32);
        gl::TexStorage2D(gl::TEXTURE_2D, levels, gl::RGBA8, width, height);
        gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MIN_FILTER, gl::NEAREST as i32);
        gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MAG_FILTER, gl::NEAREST as i32);
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    gl_check("creating an RGBA8 texture")?;
    Ok(texture)
}

/// A GL buffer of `bytes` bytes, contents undefined.
pub fn gl_buffer(bytes: usize) -> Result<u32> {
    let mut buffer = 0;
    // SAFETY: a GL context is current; the name comes from glCreateBuffers and gets storage.
    unsafe {
        gl::CreateBuffers(1, &mut buffer);
        gl::NamedBufferData(buffer, bytes as isize, std::ptr::null(), gl::STREAM_COPY);
    }
    gl_check("creating a buffer")?;
    Ok(buffer)
}

/// Copies `bytes` bytes from the start of buffer `from` to byte `at` of buffer `to`, on the
/// GPU, in GL's queue.
pub fn copy_buffer(from: u32, to: u32, at: usize, bytes: usize) -> Result<()> {
    // SAFETY: a GL context is current; GL checks the ranges against both buffers' sizes.
    unsafe { gl::CopyNamedBufferSubData(from, to, 0, at as isize, bytes as isize) };
    gl_check("copying between buffers")
}

/// Copies one `width` x `height` RGBA8 image from the start of buffer `buffer` into level 0 of
/// 2D texture `texture` (`glTexSubImage2D` from a pixel unpack buffer: on the GPU).
pub fn upload_from_buffer(texture: u32, buffer: u32, width: u32, height: u32) -> Result<()> {
    // SAFETY: a GL context is current; with `buffer` bound as the pixel unpack buffer the null
    // pointer is offset 0 into it, and GL checks the image against the buffer's size.
    unsafe {
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, buffer);
        gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
        gl::TextureSubImage2D(
            texture,
            0,
            0,
            0,
            width as i32,
            height as i32,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            std::ptr::null(),
        );
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
    }
    gl_check("uploading a frame from a buffer")
}

/// Deletes GL buffer `buffer`.
pub fn delete_buffer(buffer: u32) {
    // SAFETY: a GL context is current; deleting a name twice or 0 is ignored by GL.
    unsafe { gl::DeleteBuffers(1, &buffer) };
}

/// Deletes GL texture `texture`.
pub fn delete_texture(texture: u32) {
    // SAFETY: a GL context is current; deleting a name twice or 0 is ignored by GL.
    unsafe { gl::DeleteTextures(1, &texture) };
}

/// Level `level` (`width` x `height`) of 2D texture `texture` read back with glGetTexImage:
/// RGBA8, bottom row first. Any GL work that wrote the texture, and any CUDA work ordered before
/// an unmap, is done before the pixels arrive.
pub fn read_texture_rgba8(texture: u32, level: i32, width: u32, height: u32) -> Result<Vec<u8>> {
    let mut pixels = vec![0u8; width as usize * height as usize * 4];
    // SAFETY: a GL context is current; with no pixel-pack buffer bound and a pack alignment of
    // 4, GL writes width * height * 4 bytes, which is the length of `pixels`.
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        gl::BindTexture(gl::TEXTURE_2D, texture);
        gl::GetTexImage(
            gl::TEXTURE_2D,
            level,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            pixels.as_mut_ptr().cast(),
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    gl_check("reading the texture back")?;
    Ok(pixels)
}

/// Layer `layer` of level 0 of the `side` x `side` array texture `texture`, read back with
/// glGetTextureSubImage as `format`/`kind` into `len` values of `T` (e.g. RGBA / UNSIGNED_BYTE
/// into `side * side` `[u8; 4]`s, or RED / FLOAT into as many `f32`s), bottom row first.
pub fn read_texture_layer<T: Copy + Default>(
    texture: u32,
    layer: usize,
    side: u32,
    (format, kind): (u32, u32),
    len: usize,
) -> Result<Vec<T>> {
    let mut data = vec![T::default(); len];
    // SAFETY: a GL context is current; with no pixel-pack buffer bound GL writes at most
    // `bufSize` bytes, the size of `data` (rows are packed for the sides the examples use: a
    // multiple of the pack alignment 4).
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        gl::GetTextureSubImage(
            texture,
            0,
            0,
            0,
            layer as i32,
            side as i32,
            side as i32,
            1,
            format,
            kind,
            size_of_val(data.as_slice()) as i32,
            data.as_mut_ptr().cast(),
        );
    }
    gl_check("reading a layer back")?;
    Ok(data)
}

/// The first `len` values of type `T` in GL buffer `buffer`, read back with glGetBufferSubData.
/// Any GL work that wrote the buffer, and any CUDA work ordered before an unmap, is done before
/// the data arrive.
pub fn read_buffer<T: cuda_gl::DeviceCopy + Default>(buffer: u32, len: usize) -> Result<Vec<T>> {
    let mut data = vec![T::default(); len];
    // SAFETY: a GL context is current; GL writes exactly the byte size of `data` (or nothing,
    // with GL_INVALID_VALUE, when the buffer is smaller), and any bytes are a valid `T` (plain
    // data, `DeviceCopy`). GL_COPY_READ_BUFFER is a binding point no example draws with.
    unsafe {
        gl::BindBuffer(gl::COPY_READ_BUFFER, buffer);
        gl::GetBufferSubData(
            gl::COPY_READ_BUFFER,
            0,
            size_of_val(data.as_slice()) as isize,
            data.as_mut_ptr().cast(),
        );
        gl::BindBuffer(gl::COPY_READ_BUFFER, 0);
    }
    gl_check("reading a buffer back")?;
    Ok(data)
}

/// Writes an RGBA8 image given bottom row first (GL's order) as a PNG, top row first, creating
/// its folder if needed.
pub fn write_png(path: &Path, width: u32, height: u32, rgba_bottom_up: &[u8]) -> Result<()> {
    let row = width as usize * 4;
    let top_down: Vec<u8> = rgba_bottom_up
        .chunks_exact(row)
        .rev()
        .flatten()
        .copied()
        .collect();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&top_down)?;
    writer.finish()?;
    Ok(())
}

/// What `stripes_rgba8` (kernels/examples.cu) writes at texel (x, y) at `frame`.
pub fn stripes_texel(x: u32, y: u32, frame: u32) -> [u8; 4] {
    let r = (x * 3 + frame) % 256;
    let g = (y * 5 + frame * 2) % 256;
    let b = if (x / 16 + y / 16 + frame) % 2 == 1 {
        230
    } else {
        30
    };
    [r as u8, g as u8, b, 255]
}
