//! What the examples draw with: a mesh (a shader program and a vertex array over one vertex
//! buffer) and the offscreen framebuffer. The GL boilerplate (textures, buffers, shaders,
//! read-back, PNG files, error checks) is gl-kit's, the workspace's GL helpers: the examples call
//! it as `gl_kit::...`, so what is cuda-gl's stays in view.

use anyhow::{Result, bail};
use cuda_gl::display::{Format, Frame};
use cuda_gl::{Context, Function, LaunchConfig, Module, Stream, StreamFlags};
use gl_kit::Kind;
use std::ffi::c_void;
use std::sync::Arc;

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
            program: gl_kit::shader::program(shaders.0, shaders.1)?,
            vao: 0,
            vbo: 0,
            mode,
            vertices,
        };
        // The buffer must have its size before CUDA registers it. DYNAMIC_DRAW: written often.
        let data = data.map(gl_kit::plain::bytes_of);
        mesh.vbo = gl_kit::buffer::create(bytes, gl::DYNAMIC_DRAW, data)?;
        // SAFETY: a GL context is current; the attribute offsets are byte offsets into the
        // vertex buffer, bound to GL_ARRAY_BUFFER while they are set.
        unsafe {
            gl::GenVertexArrays(1, &mut mesh.vao);
            gl::BindVertexArray(mesh.vao);
            gl::BindBuffer(gl::ARRAY_BUFFER, mesh.vbo);
            for &(location, components, offset) in attributes {
                let (stride, offset) = ((stride * float) as i32, (offset * float) as *const c_void);
                gl::VertexAttribPointer(location, components, gl::FLOAT, gl::FALSE, stride, offset);
                gl::EnableVertexAttribArray(location);
            }
            gl::BindVertexArray(0);
            gl::BindBuffer(gl::ARRAY_BUFFER, 0);
        }
        gl_kit::check("creating the vertex array")?;
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
        gl_kit::check("drawing")
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // The GL context is current: it outlives every mesh (see `Gpu`).
        Kind::VertexArray.delete(self.vao);
        Kind::Buffer.delete(self.vbo);
        Kind::Program.delete(self.program);
    }
}

/// The colour target the examples draw into and read back: cuda-gl's own
/// [`Offscreen`](cuda_gl::egl::Offscreen) (an RGBA8 texture attached to a framebuffer, read
/// back bottom row first).
pub use cuda_gl::egl::Offscreen as Framebuffer;

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

/// `stripes_rgba8` (kernels/examples.cu), loaded, and the stream that the frames it draws are
/// opened on: what 09, 11 and 12 draw their display targets' frames with.
pub struct Stripes {
    kernel: Function,
    /// The stream to open the frames on: the kernel runs there, before their present.
    pub stream: Stream,
}

impl Stripes {
    /// The kernel, loaded from [`PTX`](super::PTX) in `ctx`, and a non-blocking stream there.
    pub fn new(ctx: &Arc<Context>) -> Result<Stripes> {
        Ok(Stripes {
            kernel: Module::from_ptx(ctx, super::PTX)?.function("stripes_rgba8")?,
            stream: Stream::new(ctx, StreamFlags::NonBlocking)?,
        })
    }

    /// Draws frame `number` of the pattern ([`stripes_texel`]) into every texel of `frame`, an
    /// RGBA8 frame opened on [`Stripes::stream`], through its surface (the kernel queued on that
    /// stream), and presents it.
    ///
    /// # Safety
    /// `frame` was opened on [`Stripes::stream`], so that its present is ordered after the
    /// kernel.
    pub unsafe fn present(&self, frame: Frame<'_, Stream>, number: u32) -> Result<()> {
        if frame.format() != Format::Rgba8 {
            bail!("stripes_rgba8 draws RGBA8, not {:?}", frame.format());
        }
        let (width, height) = frame.size();
        // SAFETY: stripes_rgba8(cudaSurfaceObject_t, int, int, unsigned) writes width x height
        // RGBA8 texels through the surface, which has that size and format (the frame's,
        // checked), on the stream the frame was opened on (the caller's contract), so before
        // its present.
        unsafe {
            self.kernel.launch(
                LaunchConfig::for_image(width, height),
                &self.stream,
                (frame.surface()?, width as i32, height as i32, number),
            )?;
        }
        frame.present()?;
        Ok(())
    }
}

/// A pixel that differs from the pattern: where it is, `(x, y)`, and what it holds.
pub type WrongPixel = ((u32, u32), [u8; 4]);

/// The pixels of `pixels` (`width` x `height` RGBA8, row 0 first, as GL reads them back) that
/// differ from what `stripes_rgba8` writes at `frame`: how many, and the first one.
pub fn stripes_mismatches(pixels: &[u8], width: u32, frame: u32) -> (usize, Option<WrongPixel>) {
    let height = (pixels.len() / 4).checked_div(width as usize).unwrap_or(0) as u32;
    stripes_mismatches_in(pixels, width, (0, 0), (width, height), frame)
}

/// [`stripes_mismatches`] for an image of `size` drawn at `origin` in a larger picture
/// (`pixels`, RGBA8 rows of `stride` pixels, row 0 first): how many of the image's pixels differ
/// from what `stripes_rgba8` writes at `frame`, and the first one, in the image's coordinates. A
/// pixel outside `pixels` counts as differing (and reads as zeros).
pub fn stripes_mismatches_in(
    pixels: &[u8],
    stride: u32,
    (left, top): (u32, u32),
    (width, height): (u32, u32),
    frame: u32,
) -> (usize, Option<WrongPixel>) {
    let mut wrong = 0;
    let mut first = None;
    for y in 0..height {
        for x in 0..width {
            let at = ((top + y) as usize * stride as usize + (left + x) as usize) * 4;
            let got = pixels
                .get(at..at + 4)
                .map_or([0; 4], |p| [p[0], p[1], p[2], p[3]]);
            if got != stripes_texel(x, y, frame) {
                wrong += 1;
                first.get_or_insert(((x, y), got));
            }
        }
    }
    (wrong, first)
}
