//! 01: CUDA animates a vertex buffer, OpenGL draws it (NVIDIA's simpleGL).
//!
//! Every frame a CUDA kernel writes the positions of a sine-wave mesh straight into an OpenGL
//! vertex buffer object (VBO), and OpenGL draws the vertices as points. The positions never
//! visit the host: the buffer is registered with CUDA once, then mapped (CUDA may use it), written
//! and unmapped (GL may use it) each frame.
//!
//! The check: the last frame is read back from the framebuffer, and every pixel that one of its
//! vertices lands in (computed on the CPU from the same formula as the kernel) must be lit, give
//! or take one pixel of rasterization, and nothing may be lit away from a vertex.
//!
//! Run: `cargo run --release -p cuda-gl --example 01_vertex_buffer --features egl`
//! (`-- --window` to watch it, `-- --screenshot 01.png` to keep the last frame).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::{Framebuffer, Gpu, Mesh, Outcome};
use cuda_gl::{LaunchConfig, Module, RegisterFlags, RegisteredBuffer, Stream};
use std::process::ExitCode;

/// Mesh points per side (simpleGL uses 256; fewer points keep them apart on screen, so a wrong
/// position cannot hide behind a right one).
const MESH: u32 = 96;
/// The framebuffer is SIZE x SIZE pixels.
const SIZE: u32 = 768;
/// Frames to animate, 1/60 s apart.
const FRAMES: u32 = 120;

/// How a vertex (u, w, v) lands on the screen: an orthographic view of the mesh tilted towards
/// the viewer, so that the wave's height `w` moves points up and down. The CPU check uses the
/// same numbers ([`to_pixel`]).
const VERTEX_SHADER: &str = "#version 450 core
layout(location = 0) in vec4 position; // (u, w, v, 1), written by the kernel
out float height;
void main() {
    gl_Position = vec4(0.9 * position.x, 0.9 * (0.8 * position.z + 0.6 * position.y), 0.0, 1.0);
    height = position.y + 0.5; // 0..1
}";

/// Green is always 0.8 (204), so a lit pixel is told from the black background by its green.
const FRAGMENT_SHADER: &str = "#version 450 core
in float height;
out vec4 color;
void main() { color = vec4(0.2 + 0.8 * height, 0.8, 1.0 - 0.8 * height, 1.0); }";

fn main() -> ExitCode {
    // A GL context (headless, or a window with --window) and the CUDA context of the same GPU,
    // with a stream and the examples' kernels.
    common::main_with_kernels(SIZE, SIZE, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let sine_wave = module.function("sine_wave")?;

    let frame = Framebuffer::new(SIZE, SIZE)?;
    let vertices = (MESH * MESH) as usize;
    // The VBO holds one vec4 per vertex (attribute 0), with no data yet: the kernel writes it.
    let shaders = (VERTEX_SHADER, FRAGMENT_SHADER);
    let mesh = Mesh::new(shaders, gl::POINTS, vertices, 4, None, &[(0, 4, 0)])?;
    // SAFETY: a GL context is current. Points of 2x2 pixels, to be seen.
    unsafe { gl::PointSize(2.0) };

    // Register the VBO with CUDA once. WRITE_DISCARD: the kernel overwrites every vertex, so the
    // driver need not preserve GL's old contents when it hands the buffer to CUDA.
    let mut positions =
        RegisteredBuffer::register(&gpu.ctx, mesh.vbo, RegisterFlags::WRITE_DISCARD)?;

    let (mut drawn, mut last_time) = (0, 0.0);
    for i in 0..FRAMES {
        let time = i as f32 / 60.0;
        // Map: CUDA owns the buffer from here. The map is ordered after GL's draws that read the
        // buffer in the previous frame, so no glFinish is needed.
        let mapped = positions.map(&stream)?;
        if mapped.size() < vertices * 16 {
            bail!(
                "the mapped VBO has {} bytes, not {}",
                mapped.size(),
                vertices * 16
            );
        }
        // SAFETY: sine_wave(float4*, unsigned, unsigned, float) writes MESH * MESH float4s,
        // which is the mapped buffer's size (checked above); it runs on the mapping's stream.
        unsafe {
            sine_wave.launch(
                LaunchConfig::for_image(MESH, MESH),
                &stream,
                (mapped.device_ptr(), MESH, MESH, time),
            )?;
        }
        // Unmap: GL owns it again, and GL commands issued from now on see the kernel's writes.
        mapped.unmap()?;

        mesh.draw(&frame, [0.0, 0.0, 0.0, 1.0])?;
        (drawn, last_time) = (i + 1, time);
        if !gpu.present(&frame)? {
            break; // the window was closed: check the last frame drawn
        }
    }

    // Read the last frame back and compare it with the CPU's idea of where the vertices are.
    let pixels = frame.read_rgba8()?;
    let lit: Vec<bool> = pixels.chunks_exact(4).map(|p| p[1] > 100).collect();
    let expected = expected_pixels(last_time);
    let (found, strays) = compare(&expected, &lit);
    // How far apart frames are: frame 0's vertices, checked against the same image.
    let first_expected = expected_pixels(0.0);
    let first_found = compare(&first_expected, &lit).0;
    let percent = |n: usize, of: &[(i64, i64)]| 100.0 * n as f64 / of.len() as f64;
    let summary = format!(
        "{drawn} frames of a {MESH}x{MESH} mesh written into a GL VBO by CUDA; in the last frame \
         (t = {last_time:.3} s) {found} of {} vertex pixels lit ({:.2}%, need 99%), {strays} \
         pixels lit away from any vertex (need 0); frame 0's vertices would match {:.1}%",
        expected.len(),
        percent(found, &expected),
        percent(first_found, &first_expected)
    );

    gpu.finish(&frame)?;
    // Unregister before the buffer is deleted (when `mesh` drops); the GL context is current.
    positions.unregister()?;
    gpu.ctx.check_drop_errors()?;

    Ok(if percent(found, &expected) >= 99.0 && strays == 0 {
        Outcome::Ok(summary)
    } else {
        Outcome::Mismatch(summary)
    })
}

/// The vertex of mesh point (x, y) at `time`, as `sine_wave` in `kernels/examples.cu` computes it.
fn sine_wave(x: u32, y: u32, time: f32) -> [f32; 3] {
    let u = x as f32 / MESH as f32 * 2.0 - 1.0;
    let v = y as f32 / MESH as f32 * 2.0 - 1.0;
    let freq = 4.0f32;
    let w = (u * freq + time).sin() * (v * freq + time).cos() * 0.5;
    [u, w, v]
}

/// The pixel (column, row from the bottom) a vertex lands in, as the vertex shader and GL's
/// viewport transform place it.
fn to_pixel([u, w, v]: [f32; 3]) -> (i64, i64) {
    let ndc_x = 0.9 * u;
    let ndc_y = 0.9 * (0.8 * v + 0.6 * w);
    let window = |ndc: f32| ((ndc + 1.0) * 0.5 * SIZE as f32).floor() as i64;
    (window(ndc_x), window(ndc_y))
}

/// Every pixel a vertex of the frame at `time` lands in, once each (a bitmap, SIZE x SIZE).
fn expected_pixels(time: f32) -> Vec<(i64, i64)> {
    let mut seen = vec![false; (SIZE * SIZE) as usize];
    let mut pixels = Vec::new();
    for y in 0..MESH {
        for x in 0..MESH {
            let (px, py) = to_pixel(sine_wave(x, y, time));
            let index = (py * SIZE as i64 + px) as usize;
            if !std::mem::replace(&mut seen[index], true) {
                pixels.push((px, py));
            }
        }
    }
    pixels
}

/// How many `expected` pixels have a lit pixel within one pixel (rasterization may round a point
/// to its neighbour), and how many lit pixels have no expected pixel within one pixel.
fn compare(expected: &[(i64, i64)], lit: &[bool]) -> (usize, usize) {
    let size = SIZE as i64;
    let near = |(x, y): (i64, i64), grid: &dyn Fn(i64, i64) -> bool| {
        (-1..=1).any(|dy| {
            (-1..=1).any(|dx| {
                let (nx, ny) = (x + dx, y + dy);
                (0..size).contains(&nx) && (0..size).contains(&ny) && grid(nx, ny)
            })
        })
    };
    let is_lit = |x: i64, y: i64| lit[(y * size + x) as usize];
    let found = expected.iter().filter(|&&p| near(p, &is_lit)).count();

    let mut is_expected = vec![false; lit.len()];
    for &(x, y) in expected {
        is_expected[(y * size + x) as usize] = true;
    }
    let wanted = |x: i64, y: i64| is_expected[(y * size + x) as usize];
    let strays = (0..size)
        .flat_map(|y| (0..size).map(move |x| (x, y)))
        .filter(|&(x, y)| is_lit(x, y) && !near((x, y), &wanted))
        .count();
    (found, strays)
}
