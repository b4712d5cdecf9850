//! The glow examples' (08, 09) GL boilerplate, with glow: read-back of a texture's pixels
//! through a framebuffer, and a full-screen triangle that draws a texture.
//! Not part of `common/mod.rs`, which builds without the `glow` feature: an example that draws
//! with glow includes it on its own (`#[path = "common/glow_kit.rs"] mod glow_kit;`).

// Each example uses a part of the kit.
#![allow(dead_code)]

use anyhow::{Context as _, Result, bail};
use glow::HasContext;

/// The `width` x `height` RGBA8 pixels of level 0 of `texture` (`GL_TEXTURE_2D`), row 0 first
/// (GL's first row, the one a surface writes at y = 0), read through a framebuffer of its own.
pub fn read_texture(
    gl: &glow::Context,
    texture: glow::NativeTexture,
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    // SAFETY: a GL context is current (the callers'), with `texture` one of its textures; the
    // framebuffer gets it as its colour attachment, and is deleted after the read.
    unsafe {
        let framebuffer = gl
            .create_framebuffer()
            .map_err(anyhow::Error::msg)
            .context("glow: create_framebuffer")?;
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(framebuffer));
        gl.framebuffer_texture_2d(
            glow::READ_FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::TEXTURE_2D,
            Some(texture),
            0,
        );
        let pixels = read_framebuffer(gl, Some(framebuffer), width, height);
        gl.delete_framebuffer(framebuffer);
        pixels
    }
}

/// The `width` x `height` RGBA8 pixels of `framebuffer`'s colour (`None`: the window's back
/// buffer, what the next swap shows), bottom row first. The read framebuffer binding is left at
/// the default (0).
pub fn read_framebuffer(
    gl: &glow::Context,
    framebuffer: Option<glow::NativeFramebuffer>,
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    let mut pixels = vec![0u8; width as usize * height as usize * 4];
    // SAFETY: a GL context is current (the callers'), of which `framebuffer` is a complete
    // framebuffer of at least `width` x `height` pixels (or the default one, at least that
    // size); no pixel pack buffer is bound in these examples, so `pixels` receives the
    // `width` x `height` RGBA8 pixels, rows of `width * 4` bytes, which pack alignment 4 leaves
    // tight.
    unsafe {
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, framebuffer);
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
        gl.read_pixels(
            0,
            0,
            width as i32,
            height as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut pixels)),
        );
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
        match gl.get_error() {
            glow::NO_ERROR => Ok(pixels),
            code => anyhow::bail!("reading pixels back with glow: GL error {code:#06x}"),
        }
    }
}

/// A program that draws a texture over the whole viewport with one triangle (no vertex data:
/// the corners come from `gl_VertexID`), sampled at the pixel centres, so that a texture of the
/// viewport's size is drawn texel for pixel.
pub struct Triangle {
    program: glow::NativeProgram,
    vertex_array: glow::NativeVertexArray,
}

const VERTEX_SHADER: &str = "#version 330 core
out vec2 uv;
void main() {
    vec2 corner = vec2(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0);
    uv = corner * 0.5 + 0.5;
    gl_Position = vec4(corner, 0.0, 1.0);
}
";

const FRAGMENT_SHADER: &str = "#version 330 core
uniform sampler2D image;
in vec2 uv;
out vec4 colour;
void main() {
    colour = texture(image, uv);
}
";

impl Triangle {
    pub fn new(gl: &glow::Context) -> Result<Triangle> {
        // SAFETY: a GL context is current (3.3 core or later: the window's asks for 3.3, the
        // headless one for 4.5 or 3.3); the shaders are deleted once linked (or on failure).
        unsafe {
            let program = gl.create_program().map_err(anyhow::Error::msg)?;
            let mut shaders = Vec::new();
            for (kind, source) in [
                (glow::VERTEX_SHADER, VERTEX_SHADER),
                (glow::FRAGMENT_SHADER, FRAGMENT_SHADER),
            ] {
                let shader = gl.create_shader(kind).map_err(anyhow::Error::msg)?;
                gl.shader_source(shader, source);
                gl.compile_shader(shader);
                gl.attach_shader(program, shader);
                shaders.push(shader);
                if !gl.get_shader_compile_status(shader) {
                    let log = gl.get_shader_info_log(shader);
                    shaders.into_iter().for_each(|s| gl.delete_shader(s));
                    gl.delete_program(program);
                    bail!("compiling the triangle's shader: {log}");
                }
            }
            gl.link_program(program);
            for shader in shaders {
                gl.detach_shader(program, shader);
                gl.delete_shader(shader);
            }
            if !gl.get_program_link_status(program) {
                let log = gl.get_program_info_log(program);
                gl.delete_program(program);
                bail!("linking the triangle's program: {log}");
            }
            // Core profile: drawing needs a vertex array object, even an empty one.
            let vertex_array = gl.create_vertex_array().map_err(anyhow::Error::msg)?;
            Ok(Triangle {
                program,
                vertex_array,
            })
        }
    }

    /// Draws `texture` over all of `framebuffer` (`None`: the window's), `width` x `height`.
    pub fn draw(
        &self,
        gl: &glow::Context,
        framebuffer: Option<glow::NativeFramebuffer>,
        texture: glow::NativeTexture,
        (width, height): (u32, u32),
    ) -> Result<()> {
        // SAFETY: a GL context is current, of which the program, the vertex array, the texture
        // and the framebuffer are objects; the bindings it changes are set back to none.
        unsafe {
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, framebuffer);
            gl.viewport(0, 0, width as i32, height as i32);
            gl.use_program(Some(self.program));
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            gl.bind_vertex_array(Some(self.vertex_array));
            gl.draw_arrays(glow::TRIANGLES, 0, 3);
            gl.bind_vertex_array(None);
            gl.bind_texture(glow::TEXTURE_2D, None);
            gl.use_program(None);
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, None);
            match gl.get_error() {
                glow::NO_ERROR => Ok(()),
                code => bail!("drawing the target's texture: GL error {code:#06x}"),
            }
        }
    }

    pub fn delete(self, gl: &glow::Context) {
        // SAFETY: a GL context is current, of which both are objects, deleted once.
        unsafe {
            gl.delete_vertex_array(self.vertex_array);
            gl.delete_program(self.program);
        }
    }
}
