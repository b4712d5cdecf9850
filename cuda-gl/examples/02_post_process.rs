//! 02: OpenGL renders, CUDA post-processes (NVIDIA's postProcessGL).
//!
//! GL renders a scene of shaded triangles into a texture. CUDA reads that texture through a
//! texture object, runs a Sobel edge filter, and writes the result into a second texture through
//! a surface object; GL then shows (and reads back) the second texture. Both textures stay on the
//! GPU: CUDA reads and writes GL's own memory.
//!
//! This is the GL -> CUDA direction: mapping the scene texture orders GL's rendering before the
//! kernel, and unmapping the output orders the kernel before GL's next use. No glFinish, no
//! stream synchronization.
//!
//! The check: both textures are read back with glGetTexImage, and the output must equal, byte for
//! byte, a Sobel filter computed on the CPU from the read-back input (the kernel uses integer
//! arithmetic only).
//!
//! Run: `cargo run --release -p cuda-gl --example 02_post_process --features egl`
//! (`-- --window` to watch it, `-- --screenshot 02.png` to keep the filtered image).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::{Framebuffer, Gpu, Mesh, Outcome};
use cuda_gl::{
    ArrayFormat, ImageTarget, LaunchConfig, Module, RegisterFlags, RegisteredImage, Stream, TexDesc,
};
use std::process::ExitCode;

const WIDTH: u32 = 640;
const HEIGHT: u32 = 480;
/// Frames to render and filter; the scene turns a little every frame.
const FRAMES: u32 = 60;

const VERTEX_SHADER: &str = "#version 450 core
layout(location = 0) in vec2 position;
layout(location = 1) in vec3 colour;
uniform float angle;
out vec3 shade;
void main() {
    mat2 turn = mat2(cos(angle), sin(angle), -sin(angle), cos(angle));
    gl_Position = vec4(turn * position, 0.0, 1.0);
    shade = colour;
}";

const FRAGMENT_SHADER: &str = "#version 450 core
in vec3 shade;
out vec4 colour;
void main() { colour = vec4(shade, 1.0); }";

/// Three overlapping triangles, one colour per corner (x, y, r, g, b), shaded smoothly by GL.
#[rustfmt::skip]
const TRIANGLES: [f32; 45] = [
    -0.8, -0.6,   1.0, 0.2, 0.1,    0.1, -0.7,   1.0, 0.8, 0.1,   -0.3,  0.6,   0.6, 0.1, 0.1,
    -0.2, -0.3,   0.1, 0.9, 0.3,    0.8, -0.1,   0.1, 0.4, 0.9,    0.2,  0.8,   0.1, 0.9, 0.9,
    -0.6,  0.2,   0.9, 0.9, 0.9,    0.0,  0.1,   0.5, 0.2, 0.8,   -0.4,  0.9,   0.9, 0.3, 0.7,
];

fn main() -> ExitCode {
    common::main_with_kernels(WIDTH, HEIGHT, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let sobel = module.function("sobel_rgba8")?;

    // GL draws the scene into `scene`; CUDA writes the filtered image into `output`'s texture.
    let scene = Framebuffer::new(WIDTH, HEIGHT)?;
    let output = Framebuffer::new(WIDTH, HEIGHT)?;
    // Attribute 0: the position (2 floats), attribute 1: the colour (3 floats).
    let shaders = (VERTEX_SHADER, FRAGMENT_SHADER);
    let attributes = [(0, 2, 0), (1, 3, 2)];
    let mesh = Mesh::new(shaders, gl::TRIANGLES, 9, 5, Some(&TRIANGLES), &attributes)?;
    // SAFETY: a GL context is current; the name is NUL-terminated.
    let angle = unsafe { gl::GetUniformLocation(mesh.program, c"angle".as_ptr()) };
    // A sentinel in the output (alpha 4, where the kernel writes 255): a pixel the kernel
    // missed cannot pass the check.
    // SAFETY: a GL context is current; the data is one RGBA8 texel, as format and type say.
    unsafe {
        let sentinel = [1u8, 2, 3, 4];
        gl::ClearTexImage(
            output.texture().0,
            0,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            sentinel.as_ptr().cast(),
        );
    }
    gl_kit::check("filling the output with a sentinel")?;

    // Register both textures once. The scene is READ_ONLY for CUDA (GL's contents are kept, and
    // the driver need not copy anything back). The output is written through a surface
    // (SURFACE_LOAD_STORE), and completely (WRITE_DISCARD: GL's old contents need not be kept).
    let mut input = RegisteredImage::register(
        &gpu.ctx,
        scene.texture(),
        ImageTarget::Texture2D,
        RegisterFlags::READ_ONLY,
    )?;
    let mut filtered = RegisteredImage::register(
        &gpu.ctx,
        output.texture(),
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
    )?;
    // The default: point sampling at texel coordinates, clamped at the borders, bytes read as
    // integers (uchar4).
    let point = TexDesc::default();

    for frame in 0..FRAMES {
        // GL draws the scene, turned a little more each frame.
        // SAFETY: a GL context is current; `angle` is a float uniform of the program.
        unsafe { gl::ProgramUniform1f(mesh.program, angle, frame as f32 * 0.01) };
        mesh.draw(&scene, [0.1, 0.1, 0.15, 1.0])?;
        // Map the scene: CUDA's work on `stream` waits for GL's rendering above.
        let scene_map = input.map(&stream)?;
        let output_map = filtered.map(&stream)?;
        {
            // The CUDA array behind level 0 of the scene texture, and a texture object over it.
            let array = scene_map.array(0, 0)?;
            if array.format() != ArrayFormat::UNSIGNED_INT8 || array.channels() != 4 {
                bail!("the scene is not RGBA8 to CUDA: {array:?}");
            }
            let texture = scene_map.create_tex(&array, &point)?;
            // The output's surface object (cached on the registration: created once).
            let surface = output_map.surface()?;
            // SAFETY: sobel_rgba8(cudaTextureObject_t, cudaSurfaceObject_t, int, int) reads and
            // writes WIDTH x HEIGHT texels, the size of both textures; it runs on the stream both
            // are mapped on.
            unsafe {
                sobel.launch(
                    LaunchConfig::for_image(WIDTH, HEIGHT),
                    &stream,
                    (texture.handle(), surface, WIDTH as i32, HEIGHT as i32),
                )?;
            }
            // The texture object drops here, before the unmap (its borrow demands it); cuda-gl
            // destroys it once the kernel is done.
        }
        // Unmap: GL commands from now on see the kernel's output.
        output_map.unmap()?;
        scene_map.unmap()?;
        if !gpu.present(&output)? {
            break;
        }
    }

    // Read both textures back through GL, and filter the input on the CPU.
    let input_pixels = scene.read_rgba8()?;
    let output_pixels = output.read_rgba8()?;
    let expected = sobel_cpu(&input_pixels, WIDTH as usize, HEIGHT as usize);
    let differ = expected
        .chunks_exact(4)
        .zip(output_pixels.chunks_exact(4))
        .filter(|(e, o)| e != o)
        .count();
    // A filter of a blank scene is blank too: make sure there was something to find.
    let edges = expected
        .chunks_exact(4)
        .filter(|p| p[..3].iter().any(|&c| c >= 64))
        .count();
    let pixels = (WIDTH * HEIGHT) as usize;
    let summary = format!(
        "CUDA filtered the {WIDTH}x{HEIGHT} GL-rendered scene (texture object in, surface out); \
         {} of {pixels} pixels equal the CPU Sobel of the read-back input ({edges} of them edges, a channel >= 64)",
        pixels - differ
    );

    gpu.finish(&output)?;
    // Unregister before the textures are deleted (the framebuffers drop after this function).
    filtered.unregister()?;
    input.unregister()?;
    gpu.ctx.check_drop_errors()?;

    Ok(if differ == 0 && edges >= pixels / 100 {
        Outcome::Ok(summary)
    } else {
        Outcome::Mismatch(summary)
    })
}

/// What `sobel_rgba8` in `kernels/examples.cu` computes, on RGBA8 pixels (rows in GL's order):
/// per channel (|gx| + |gy|) / 2 capped at 255, the borders clamped, alpha 255.
fn sobel_cpu(rgba: &[u8], width: usize, height: usize) -> Vec<u8> {
    let at = |x: isize, y: isize, c: usize| -> i32 {
        let x = x.clamp(0, width as isize - 1) as usize;
        let y = y.clamp(0, height as isize - 1) as usize;
        i32::from(rgba[(y * width + x) * 4 + c])
    };
    let mut out = Vec::with_capacity(rgba.len());
    for y in 0..height as isize {
        for x in 0..width as isize {
            for c in 0..3 {
                let p = |dx: isize, dy: isize| at(x + dx, y + dy, c);
                let gx = (p(1, -1) + 2 * p(1, 0) + p(1, 1)) - (p(-1, -1) + 2 * p(-1, 0) + p(-1, 1));
                let gy = (p(-1, 1) + 2 * p(0, 1) + p(1, 1)) - (p(-1, -1) + 2 * p(0, -1) + p(1, -1));
                out.push(((gx.abs() + gy.abs()) / 2).min(255) as u8);
            }
            out.push(255);
        }
    }
    out
}
