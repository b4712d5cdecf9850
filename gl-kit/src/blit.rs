//! The full-screen triangle: a program and an empty vertex array that draw a texture over all
//! of a framebuffer, one fragment per pixel.

use crate::object::Kind;
use anyhow::{Context as _, Result, ensure};
use gl::types::{GLenum, GLsizei, GLuint};

/// The vertex shader of one triangle that covers the viewport: draw 3 vertices with no vertex
/// attributes. It passes `vec2 uv`, 0..1 across the viewport, to the fragment shader.
pub const VERTEX_SHADER: &str = "#version 330 core
out vec2 uv;
void main() {
    // Vertices 0, 1, 2 at (0,0), (2,0), (0,2) in uv: one triangle that covers the screen.
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    uv = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
";

/// The fragment shader that samples `sampler2D frame` at `uv`.
pub const FRAGMENT_SHADER: &str = "#version 330 core
in vec2 uv;
uniform sampler2D frame;
out vec4 color;
void main() {
    color = texture(frame, uv);
}
";

/// A program that draws one full-screen triangle, and the empty vertex array it draws with.
/// Both are deleted on drop (the context must still be current).
#[derive(Debug)]
pub struct Blit {
    program: GLuint,
    vao: GLuint,
}

impl Blit {
    /// The blit of [`VERTEX_SHADER`] and [`FRAGMENT_SHADER`]: a 2D texture drawn over the whole
    /// viewport.
    ///
    /// # Errors
    /// A shader that does not compile or link (the context is older than OpenGL 3.3).
    pub fn new() -> Result<Blit> {
        let program = crate::shader::program(VERTEX_SHADER, FRAGMENT_SHADER)
            .context("the full-screen texture program")?;
        Blit::with_program(program)
    }

    /// A blit through `program`: a linked program that draws one full-screen triangle with no
    /// vertex attributes (as [`VERTEX_SHADER`] does) and samples `frame`, if it has it, from
    /// texture unit 0. The blit owns the program.
    ///
    /// # Errors
    /// A GL error (then the program is deleted too).
    pub fn with_program(program: GLuint) -> Result<Blit> {
        let mut blit = Blit { program, vao: 0 };
        // SAFETY: a context is current (the crate's contract); `vao` receives one name.
        unsafe { gl::GenVertexArrays(1, &mut blit.vao) };
        ensure!(blit.vao != 0, "glGenVertexArrays returned no name");
        crate::shader::set_int(program, "frame", 0);
        crate::check("creating the full-screen triangle")?;
        Ok(blit)
    }

    /// The program, to set its other uniforms.
    pub fn program(&self) -> GLuint {
        self.program
    }

    /// Draws the triangle into `framebuffer` (0: the window's) over a viewport of `width` x
    /// `height` at the origin, with texture `source` bound to `binding` (`gl::TEXTURE_2D`,
    /// `gl::TEXTURE_BUFFER`, ...) of texture unit 0. Leaves everything it bound at 0 and reads
    /// no GL error (a timed loop may call it).
    pub fn draw(
        &self,
        (binding, source): (GLenum, GLuint),
        framebuffer: GLuint,
        (width, height): (u32, u32),
    ) {
        let (w, h) = (width as GLsizei, height as GLsizei);
        // SAFETY: a context is current; the program is linked and the vertex array empty, which
        // is all a vertex shader that reads only gl_VertexID needs; the names are the caller's
        // live objects (GL records an error for any that is not).
        unsafe {
            gl::BindFramebuffer(gl::DRAW_FRAMEBUFFER, framebuffer);
            gl::Viewport(0, 0, w, h);
            gl::UseProgram(self.program);
            gl::BindVertexArray(self.vao);
            gl::ActiveTexture(gl::TEXTURE0);
            gl::BindTexture(binding, source);
            gl::DrawArrays(gl::TRIANGLES, 0, 3);
            gl::BindTexture(binding, 0);
            gl::BindVertexArray(0);
            gl::UseProgram(0);
            gl::BindFramebuffer(gl::DRAW_FRAMEBUFFER, 0);
        }
    }
}

impl Drop for Blit {
    fn drop(&mut self) {
        Kind::VertexArray.delete(self.vao);
        Kind::Program.delete(self.program);
    }
}
