//! The GL consumer of the frames-in-flight and streaming groups: a full-screen triangle into a
//! framebuffer of the frame's size that reads every pixel of the frame from a texture buffer
//! (`samplerBuffer`, `texelFetch`), straight from the buffer CUDA wrote, with no copy.

use crate::glres::{self, Texture};
use anyhow::{Result, bail, ensure};
use std::ffi::CString;

/// A `GL_TEXTURE_BUFFER` texture over a buffer (RGBA8 texels), deleted on drop.
pub struct TexBuffer(u32);

impl TexBuffer {
    /// A texture buffer over the whole of GL buffer `buffer`.
    pub fn new(buffer: u32, what: &str) -> Result<TexBuffer> {
        let mut name = 0;
        // SAFETY: `name` is a valid out-pointer for one name.
        unsafe { gl::GenTextures(1, &mut name) };
        ensure!(name != 0, "{what}: glGenTextures returned no name");
        let tex = TexBuffer(name);
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

glres::delete_on_drop!(TexBuffer, 0, DeleteTextures);

const VS: &str = "#version 330 core
void main() {
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
";

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
    size: (u32, u32),
    program: u32,
    vao: u32,
    fbo: u32,
    _color: Texture,
}

fn compile(kind: u32, source: &str) -> Result<u32> {
    let text = CString::new(source)?;
    // SAFETY: creates a shader (0 on failure, checked); one NUL-terminated source string; `ok`
    // is a valid out-pointer.
    unsafe {
        let shader = gl::CreateShader(kind);
        ensure!(shader != 0, "glCreateShader failed");
        gl::ShaderSource(shader, 1, &text.as_ptr(), std::ptr::null());
        gl::CompileShader(shader);
        let mut ok = 0;
        gl::GetShaderiv(shader, gl::COMPILE_STATUS, &mut ok);
        if ok == 0 {
            let mut log = vec![0u8; 4096];
            let mut len = 0;
            gl::GetShaderInfoLog(shader, 4096, &mut len, log.as_mut_ptr().cast());
            gl::DeleteShader(shader);
            log.truncate(usize::try_from(len).unwrap_or(0));
            bail!(
                "compiling the texel-fetch shader failed: {}",
                String::from_utf8_lossy(&log)
            );
        }
        Ok(shader)
    }
}

impl TexelDraw {
    /// The draw for frames of `width` x `height`.
    pub fn new((w, h): (u32, u32)) -> Result<TexelDraw> {
        let color = Texture::new(w, h, "the draw's target")?;
        let vs = compile(gl::VERTEX_SHADER, VS)?;
        let fs = compile(gl::FRAGMENT_SHADER, FS)?;
        let mut draw = TexelDraw {
            size: (w, h),
            program: 0,
            vao: 0,
            fbo: 0,
            _color: color,
        };
        let names = (CString::new("frame")?, CString::new("width")?);
        // SAFETY: both shaders compiled; every out-pointer is valid; the uniform names are
        // NUL-terminated; the colour texture has storage (one RGBA8 level).
        let (linked, status) = unsafe {
            draw.program = gl::CreateProgram();
            gl::AttachShader(draw.program, vs);
            gl::AttachShader(draw.program, fs);
            gl::LinkProgram(draw.program);
            gl::DeleteShader(vs);
            gl::DeleteShader(fs);
            let mut linked = 0;
            gl::GetProgramiv(draw.program, gl::LINK_STATUS, &mut linked);
            gl::UseProgram(draw.program);
            gl::Uniform1i(gl::GetUniformLocation(draw.program, names.0.as_ptr()), 0);
            gl::Uniform1i(
                gl::GetUniformLocation(draw.program, names.1.as_ptr()),
                w as i32,
            );
            gl::UseProgram(0);
            gl::GenVertexArrays(1, &mut draw.vao);
            gl::GenFramebuffers(1, &mut draw.fbo);
            gl::BindFramebuffer(gl::FRAMEBUFFER, draw.fbo);
            gl::FramebufferTexture2D(
                gl::FRAMEBUFFER,
                gl::COLOR_ATTACHMENT0,
                gl::TEXTURE_2D,
                draw._color.name(),
                0,
            );
            let status = gl::CheckFramebufferStatus(gl::FRAMEBUFFER);
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
            (linked, status)
        };
        ensure!(linked != 0, "linking the texel-fetch program failed");
        ensure!(
            status == gl::FRAMEBUFFER_COMPLETE,
            "the {w}x{h} framebuffer is incomplete (0x{status:04x})"
        );
        glres::check("creating the texel-fetch draw")?;
        Ok(draw)
    }

    /// Draws the frame in `source` over the whole target.
    pub fn draw(&self, source: &TexBuffer) {
        let (w, h) = self.size;
        // SAFETY: every name is live; the program is linked, the VAO empty (the vertex shader
        // needs no attributes), the framebuffer complete (checked at creation).
        unsafe {
            gl::BindFramebuffer(gl::FRAMEBUFFER, self.fbo);
            gl::Viewport(0, 0, w as i32, h as i32);
            gl::UseProgram(self.program);
            gl::BindVertexArray(self.vao);
            gl::ActiveTexture(gl::TEXTURE0);
            gl::BindTexture(gl::TEXTURE_BUFFER, source.0);
            gl::DrawArrays(gl::TRIANGLES, 0, 3);
            gl::BindTexture(gl::TEXTURE_BUFFER, 0);
            gl::BindVertexArray(0);
            gl::UseProgram(0);
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        }
    }
}

impl Drop for TexelDraw {
    fn drop(&mut self) {
        // SAFETY: the names came from `new` (0 is ignored by GL) and are deleted once.
        unsafe {
            gl::DeleteFramebuffers(1, &self.fbo);
            gl::DeleteVertexArrays(1, &self.vao);
            gl::DeleteProgram(self.program);
        }
    }
}
