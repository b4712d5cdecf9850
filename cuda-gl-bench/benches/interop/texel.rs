//! The GL consumer of the frames-in-flight and streaming groups: a full-screen triangle into a
//! framebuffer of the frame's size that reads every pixel of the frame from a texture buffer
//! (`samplerBuffer`, `texelFetch`), straight from the buffer CUDA wrote, with no copy.

use crate::glres::{self, Blit, Framebuffer};
use anyhow::{Context as _, Result, ensure};
use gl_kit::Owned;
use gl_kit::blit::VERTEX_SHADER;

/// A `GL_TEXTURE_BUFFER` texture over a buffer (RGBA8 texels), deleted on drop.
pub struct TexBuffer(Owned);

impl TexBuffer {
    /// A texture buffer over the whole of GL buffer `buffer`.
    pub fn new(buffer: u32, what: &str) -> Result<TexBuffer> {
        let mut name = 0;
        // SAFETY: `name` is a valid out-pointer for one name.
        unsafe { gl::GenTextures(1, &mut name) };
        ensure!(name != 0, "{what}: glGenTextures returned no name");
        let tex = TexBuffer(Owned::texture(name));
        // SAFETY: a fresh texture name bound to GL_TEXTURE_BUFFER; `buffer` is a live buffer of
        // at most one 3840x2160 frame (8,294,400 RGBA8 texels, below GL_MAX_TEXTURE_BUFFER_SIZE
        // on NVIDIA's driver, which is 2^27).
        unsafe {
            gl::BindTexture(gl::TEXTURE_BUFFER, name);
            gl::TexBuffer(gl::TEXTURE_BUFFER, gl::RGBA8, buffer);
            gl::BindTexture(gl::TEXTURE_BUFFER, 0);
        }
        glres::check(&format!("{what}: creating a texture buffer"))?;
        Ok(tex)
    }
}

impl TexBuffer {
    /// A texture buffer over each buffer `name(i)` for `i` in `0..count`, named `what i` in
    /// errors.
    pub fn over_each(
        count: usize,
        what: &str,
        mut name: impl FnMut(usize) -> Result<u32>,
    ) -> Result<Vec<TexBuffer>> {
        (0..count)
            .map(|i| TexBuffer::new(name(i)?, &format!("{what} {i}")))
            .collect()
    }
}

/// Reads pixel (x, y) of the frame from texel `y * width + x` of the texture buffer; the
/// vertex shader is gl-kit's full-screen triangle (its `uv` goes unused).
const FS: &str = "#version 330 core
uniform samplerBuffer frame;
uniform int width;
out vec4 color;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    color = texelFetch(frame, p.y * width + p.x);
}
";

/// The draw: a full-screen triangle into a framebuffer of the frame's size that reads every
/// pixel of the frame from a texture buffer.
pub struct TexelDraw {
    blit: Blit,
    target: Framebuffer,
}

impl TexelDraw {
    /// The draw for frames of `width` x `height`.
    pub fn new((w, h): (u32, u32)) -> Result<TexelDraw> {
        let target = Framebuffer::new(w, h, "the draw's target")?;
        let program =
            gl_kit::shader::program(VERTEX_SHADER, FS).context("the texel-fetch program")?;
        let blit = Blit::with_program(program)?;
        let width = i32::try_from(w).context("the frame's width")?;
        ensure!(
            gl_kit::shader::set_int(program, "width", width),
            "the texel-fetch program has no uniform `width`"
        );
        glres::check("creating the texel-fetch draw")?;
        Ok(TexelDraw { blit, target })
    }

    /// Draws the frame in `source` over the whole target.
    pub fn draw(&self, source: &TexBuffer) {
        self.target.draw(&self.blit, gl::TEXTURE_BUFFER, *source.0);
    }
}
