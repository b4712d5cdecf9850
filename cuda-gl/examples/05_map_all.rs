//! 05: several GL resources under one map (`map_all`), each written by its own kernel.
//!
//! A frame here needs three GL objects from CUDA: the vertex buffer (positions), the index
//! buffer (which vertices make each triangle) and a texture. Mapping them one by one would cost
//! three driver calls and three synchronizations with GL; `map_all` maps them with ONE
//! `cuGraphicsMapResources` call, and the batch unmaps them with one call too. The batch hands
//! out one typed view per resource, in the shape of what was mapped: for the tuple
//! `(&mut positions, &mut indices, &mut image)` the views are `(MappedBuffer, MappedBuffer,
//! MappedImage)`, with the methods of a single map (`vertices.device_ptr()`, `image.surface()`,
//! or an owned `image.create_surface`); asking the vertex buffer for a surface does not compile.
//!
//! Every frame, three kernels write them: `wobble_grid` moves the inner vertices of a
//! full-screen grid of 8 x 8 cells, `grid_indices` writes the two triangles of each cell into a
//! slot of the index buffer that changes with the frame (and flips the diagonals), and
//! `stripes_rgba8` writes a moving pattern into the texture through a surface. GL then draws the
//! indexed mesh, textured, into a framebuffer of the texture's size. The vertex shader derives
//! the texture coordinates from the positions, so the moving mesh carries the texture without
//! distorting it.
//!
//! The check, on the last frame: the rendered image must equal the texture pattern computed on
//! the CPU, pixel for pixel (NEAREST filtering, one texel per pixel: any pixel the triangles
//! miss keeps the transparent clear colour and fails), and the vertex and index buffers, read
//! back with glGetBufferSubData, must equal the CPU's formulas exactly (the positions are
//! multiples of 1/64, exact in float).
//!
//! Run: `cargo run --release -p cuda-gl --example 05_map_all --features egl`
//! (`-- --window` to watch it, `-- --screenshot 05.png` to keep the last frame).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::{Framebuffer, Gpu, Mesh, Outcome};
use cuda_gl::{
    LaunchConfig, Module, RegisterFlags, RegisteredBuffer, RegisteredImage, Stream, map_all,
};
use std::process::ExitCode;

/// The texture and the framebuffer are SIZE x SIZE.
const SIZE: u32 = 512;
/// The grid has CELLS x CELLS cells, (CELLS + 1)^2 vertices. CELLS * CELLS must be a power of
/// two (the kernel's slot permutation) and CELLS at most 16 (the wobble stays inside a cell).
const CELLS: u32 = 8;
const VERTICES: usize = ((CELLS + 1) * (CELLS + 1)) as usize;
const INDICES: usize = (CELLS * CELLS * 6) as usize;
/// Frames to animate.
const FRAMES: u32 = 120;

/// The position comes from the VBO; the texture coordinate follows it (NDC -1..1 to 0..1).
const VERTEX_SHADER: &str = "#version 450 core
layout(location = 0) in vec2 position;
out vec2 uv;
void main() {
    gl_Position = vec4(position, 0.0, 1.0);
    uv = position * 0.5 + 0.5;
}";

const FRAGMENT_SHADER: &str = "#version 450 core
in vec2 uv;
layout(binding = 0) uniform sampler2D pattern;
out vec4 colour;
void main() { colour = texture(pattern, uv); }";

fn main() -> ExitCode {
    common::main_with_kernels(SIZE, SIZE, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let wobble_grid = module.function("wobble_grid")?;
    let grid_indices = module.function("grid_indices")?;
    let stripes = module.function("stripes_rgba8")?;

    // The three GL objects. The VBO: one vec2 per vertex (attribute 0), no data yet.
    let frame = Framebuffer::new(SIZE, SIZE)?;
    let shaders = (VERTEX_SHADER, FRAGMENT_SHADER);
    let mesh = Mesh::new(shaders, gl::TRIANGLES, VERTICES, 2, None, &[(0, 2, 0)])?;
    let ibo = index_buffer(mesh.vao)?;
    // The texture: SIZE x SIZE RGBA8, sampled NEAREST (one texel per pixel).
    let texture = gl_kit::texture::rgba8(SIZE, SIZE, 1, gl::NEAREST)?;

    // Register each once. The kernels overwrite all three completely (WRITE_DISCARD); the
    // texture is written through a surface (SURFACE_LOAD_STORE).
    let mut positions =
        RegisteredBuffer::register(&gpu.ctx, mesh.vbo, RegisterFlags::WRITE_DISCARD)?;
    let mut indices = RegisteredBuffer::register(&gpu.ctx, ibo, RegisterFlags::WRITE_DISCARD)?;
    let mut image = RegisteredImage::register_texture(
        &gpu.ctx,
        texture,
        RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
    )?;

    let mut drawn = 0;
    for i in 0..FRAMES {
        // One map for all three: the VBO, the index buffer and the texture, each viewed by its
        // type. CUDA's work on `stream` waits for GL's last draw, which read all three.
        let batch = map_all((&mut positions, &mut indices, &mut image), &stream)?;
        let (vertices, index_buffer, texels) = batch.views();
        let (vertex_ptr, vertex_bytes) = (vertices.device_ptr(), vertices.size());
        let (index_ptr, index_bytes) = (index_buffer.device_ptr(), index_buffer.size());
        if vertex_bytes < VERTICES * 8 || index_bytes < INDICES * 4 {
            bail!("the mapped buffers have {vertex_bytes} and {index_bytes} bytes, too few");
        }
        // The texture is written through a surface: `texels.surface()` is cached on the
        // registration and reused every frame; the last frame instead creates a surface object
        // of its own (`create_surface`), which is retired when it drops and destroyed once the
        // GPU is done with it. Both reach the same texels.
        let owned = if i + 1 == FRAMES {
            Some(texels.create_surface(&texels.array(0, 0)?)?)
        } else {
            None
        };
        let surface = match &owned {
            Some(object) => object.handle(),
            None => texels.surface()?,
        };
        // SAFETY: wobble_grid(float2*, unsigned, unsigned) writes (CELLS + 1)^2 float2s,
        // grid_indices(unsigned*, unsigned, unsigned) writes CELLS^2 * 6 unsigned ints, both
        // within the mapped sizes (checked above); stripes_rgba8(cudaSurfaceObject_t, int, int,
        // unsigned) writes SIZE x SIZE texels, the texture's size. All on the stream of the map.
        unsafe {
            wobble_grid.launch(
                LaunchConfig::for_elements(VERTICES as u32),
                &stream,
                (vertex_ptr, CELLS, i),
            )?;
            grid_indices.launch(
                LaunchConfig::for_elements(CELLS * CELLS),
                &stream,
                (index_ptr, CELLS, i),
            )?;
            stripes.launch(
                LaunchConfig::for_image(SIZE, SIZE),
                &stream,
                (surface, SIZE as i32, SIZE as i32, i),
            )?;
        }
        drop(owned);
        // One unmap for all three: GL commands from now on see the kernels' writes.
        batch.unmap()?;

        draw(&mesh, texture, &frame)?;
        drawn = i + 1;
        if !gpu.present(&frame)? {
            break; // the window was closed: check the last frame drawn
        }
    }
    let last = drawn - 1;

    // The image must be the texture's pattern of the last frame, texel for pixel.
    let pixels = frame.read_rgba8()?;
    let expected: Vec<u8> = (0..SIZE)
        .flat_map(|y| (0..SIZE).flat_map(move |x| common::stripes_texel(x, y, last)))
        .collect();
    let wrong_pixels = pixels
        .chunks_exact(4)
        .zip(expected.chunks_exact(4))
        .filter(|(p, e)| p != e)
        .count();
    // The buffers, read back through GL, must be the CPU's formulas for the last frame.
    let gl_positions = gl_kit::buffer::read::<[f32; 2]>(mesh.vbo, VERTICES)?;
    let gl_indices = gl_kit::buffer::read::<u32>(ibo, INDICES)?;
    let wrong_vertices = gl_positions
        .iter()
        .zip(grid_positions(last))
        .filter(|(g, c)| g.map(f32::to_bits) != c.map(f32::to_bits))
        .count();
    let wrong_indices = gl_indices
        .iter()
        .zip(grid_index_list(last))
        .filter(|(g, c)| **g != *c)
        .count();
    let moved = grid_positions(last) != grid_positions(0);
    let summary = format!(
        "{drawn} frames, each mapping a VBO, an index buffer and a texture with one map_all and \
         writing them with three kernels; the last frame's {SIZE}x{SIZE} image: {} of {} pixels \
         equal the CPU's texture pattern; read back with glGetBufferSubData, {} of {VERTICES} \
         vertices and {} of {INDICES} indices equal the CPU's formulas",
        pixels.len() / 4 - wrong_pixels,
        pixels.len() / 4,
        VERTICES - wrong_vertices,
        INDICES - wrong_indices,
    );

    gpu.finish(&frame)?;
    // Unregister before the GL objects are deleted.
    image.unregister()?;
    indices.unregister()?;
    positions.unregister()?;
    // SAFETY: the GL context is current; the names came from glGen*.
    unsafe {
        gl::DeleteTextures(1, &texture);
        gl::DeleteBuffers(1, &ibo);
    }
    gpu.ctx.check_drop_errors()?;

    Ok(
        if wrong_pixels == 0 && wrong_vertices == 0 && wrong_indices == 0 && moved {
            Outcome::Ok(summary)
        } else {
            Outcome::Mismatch(summary)
        },
    )
}

/// An index buffer of INDICES `u32`s, with no data yet (the kernel writes it), bound as the
/// element array of the vertex array `vao`.
fn index_buffer(vao: u32) -> Result<u32> {
    let ibo = gl_kit::buffer::create(INDICES * size_of::<u32>(), gl::DYNAMIC_DRAW, None)?;
    // SAFETY: a GL context is current; `vao` is a vertex array of it and `ibo` a buffer. The
    // element array binding is part of the vertex array, so the buffer is bound while `vao` is.
    unsafe {
        gl::BindVertexArray(vao);
        gl::BindBuffer(gl::ELEMENT_ARRAY_BUFFER, ibo);
        gl::BindVertexArray(0);
    }
    gl_kit::check("creating the index buffer")?;
    Ok(ibo)
}

/// Clears `frame` to transparent black (alpha 0, which the pattern never has) and draws the
/// indexed mesh with `texture` on unit 0.
fn draw(mesh: &Mesh, texture: u32, frame: &Framebuffer) -> Result<()> {
    frame.bind()?;
    // SAFETY: a GL context is current; the vertex array has the index buffer bound, which holds
    // INDICES indices, each below VERTICES (the kernel's formula).
    unsafe {
        gl::ClearColor(0.0, 0.0, 0.0, 0.0);
        gl::Clear(gl::COLOR_BUFFER_BIT);
        gl::UseProgram(mesh.program);
        gl::BindTextureUnit(0, texture);
        gl::BindVertexArray(mesh.vao);
        gl::DrawElements(
            mesh.mode,
            INDICES as i32,
            gl::UNSIGNED_INT,
            std::ptr::null(),
        );
        gl::BindVertexArray(0);
        gl::BindTextureUnit(0, 0);
        gl::UseProgram(0);
    }
    gl_kit::check("drawing the indexed mesh")
}

/// `wobble` in `kernels/examples.cu`: -4..=4.
fn wobble(a: u32, b: u32, frame: u32, k: [u32; 3]) -> i32 {
    ((a * k[0] + b * k[1] + frame * k[2]) % 9) as i32 - 4
}

/// What `wobble_grid` writes at `frame`: vertex (i, j) at index j * (CELLS + 1) + i.
fn grid_positions(frame: u32) -> Vec<[f32; 2]> {
    let side = CELLS + 1;
    let step = 2.0 / CELLS as f32;
    (0..side * side)
        .map(|v| {
            let (i, j) = (v % side, v / side);
            let mut x = i as f32 * step - 1.0;
            let mut y = j as f32 * step - 1.0;
            if i > 0 && i < CELLS {
                x += wobble(i, j, frame, [7, 13, 5]) as f32 / 64.0;
            }
            if j > 0 && j < CELLS {
                y += wobble(i, j, frame, [11, 3, 7]) as f32 / 64.0;
            }
            [x, y]
        })
        .collect()
}

/// What `grid_indices` writes at `frame`: cell c's two triangles in slot (37 c + frame) mod
/// CELLS^2, the diagonal chosen by the parity of cx + cy + frame.
fn grid_index_list(frame: u32) -> Vec<u32> {
    let (count, side) = (CELLS * CELLS, CELLS + 1);
    let mut list = vec![u32::MAX; INDICES];
    for c in 0..count {
        let (cx, cy) = (c % CELLS, c / CELLS);
        let a = cy * side + cx;
        let (b, d, e) = (a + 1, a + side, a + side + 1);
        let slot = ((c * 37 + frame) % count) as usize;
        let triangles = if (cx + cy + frame).is_multiple_of(2) {
            [a, b, e, a, e, d]
        } else {
            [a, b, d, b, e, d]
        };
        list[slot * 6..][..6].copy_from_slice(&triangles);
    }
    list
}
