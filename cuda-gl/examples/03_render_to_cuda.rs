//! 03: OpenGL renders many views, CUDA reduces them (rendering as input to compute).
//!
//! The pattern of machine learning and simulation pipelines that render observations: GL draws
//! a coloured cube from 64 viewpoints, one small view per layer of two `GL_TEXTURE_2D_ARRAY`
//! textures (RGBA8 colour, and R32F depth that the fragment shader writes as `gl_FragCoord.z`),
//! one draw per layer through `glFramebufferTextureLayer`. CUDA then maps both textures with ONE
//! `map_all` call, READ_ONLY, and one kernel launch reduces every view (one block per view) to
//! its sums of red, green, blue, alpha and depth, in a CUDA device buffer. The pixels never
//! leave the GPU; the mean colour and depth of view `v` are its sums divided by its pixel count.
//!
//! The kernel reads each layer through a texture object of its own, created from the batch's
//! view of its image (`colour.array(layer, 0)` + `create_texture`), and takes all 64 of them in one
//! parameter: a Rust `[Tex; 64]` is passed as the C struct `{ cudaTextureObject_t
//! layer[64]; }`.
//!
//! The loop (render 64 views, map, reduce, unmap) runs 50 times, the cube turning a little each
//! time; the stream is synchronized once at the end, and the example reports views per second.
//!
//! The check: the sums of the last iteration must equal, exactly (integer sums, so the order of
//! the additions does not matter), sums computed on the CPU from every layer read back through
//! GL with glGetTextureSubImage. The layers copied out of CUDA's arrays with
//! `MappedArray::copy_to_host` must equal GL's read-back byte for byte, and the views must differ
//! (a cube seen from 64 sides is not one picture).
//!
//! Run: `cargo run --release -p cuda-gl --example 03_render_to_cuda --features egl`
//! (`-- --window` to see the views, `-- --screenshot 03.png` to keep them: an 8x8 mosaic).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::{Framebuffer, Gpu, Mesh, Outcome};
use cuda_gl::{
    ArrayFormat, DeviceBuffer, LaunchConfig, MappedImage, Module, RegisterFlags, RegisteredImage,
    Stream, Tex, TexDesc, TexObject, map_all,
};
use std::process::ExitCode;
use std::time::Instant;

/// Views rendered per iteration: the layers of the textures. `VIEWS` in `kernels/examples.cu`
/// must be the same (the kernel takes exactly this many texture objects).
const VIEWS: usize = 64;
/// Each view is VIEW x VIEW pixels.
const VIEW: u32 = 64;
/// Iterations of render + map + reduce that are timed.
const ITERATIONS: u32 = 50;
/// Threads per block of `view_sums` (`REDUCE_THREADS` in the kernel).
const REDUCE_THREADS: u32 = 256;
/// The sums per view: red, green, blue, alpha, depth (in 1/65535).
const SUMS: usize = 5;
/// The views are laid out 8 x 8 in the screenshot.
const MOSAIC_SIDE: u32 = 8;
/// The screenshot (and the window) is MOSAIC x MOSAIC pixels.
const MOSAIC: u32 = VIEW * MOSAIC_SIDE;

/// A cube turned by `yaw` and `pitch` (one viewpoint each), moved 3 units away and seen through
/// a perspective projection (focal length 2, near 1, far 5). The depth the fragment shader
/// writes is GL's window depth, `gl_FragCoord.z`, in 0..1.
const VERTEX_SHADER: &str = "#version 450 core
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 colour;
uniform vec2 view; // (yaw, pitch)
out vec3 shade;
void main() {
    float cy = cos(view.x), sy = sin(view.x), cp = cos(view.y), sp = sin(view.y);
    vec3 p = vec3(cy * position.x + sy * position.z, position.y, -sy * position.x + cy * position.z);
    p = vec3(p.x, cp * p.y - sp * p.z, sp * p.y + cp * p.z);
    p.z -= 3.0;
    const float n = 1.0, f = 5.0; // near and far
    gl_Position = vec4(2.0 * p.x, 2.0 * p.y, (f + n) / (n - f) * p.z + 2.0 * f * n / (n - f), -p.z);
    shade = colour;
}";

/// Two outputs: the colour into attachment 0, the depth into attachment 1 (an R32F layer).
const FRAGMENT_SHADER: &str = "#version 450 core
in vec3 shade;
layout(location = 0) out vec4 colour;
layout(location = 1) out float depth;
void main() {
    colour = vec4(shade, 1.0);
    depth = gl_FragCoord.z;
}";

fn main() -> ExitCode {
    common::main_with_kernels(MOSAIC, MOSAIC, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let view_sums = module.function("view_sums")?;

    // The cube (36 vertices of position and colour) and the layered render targets.
    let shaders = (VERTEX_SHADER, FRAGMENT_SHADER);
    let cube = cube_vertices();
    let mesh = Mesh::new(
        shaders,
        gl::TRIANGLES,
        36,
        6,
        Some(cube.as_slice()),
        &[(0, 3, 0), (1, 3, 3)],
    )?;
    // SAFETY: a GL context is current; the name is NUL-terminated.
    let view_uniform = unsafe { gl::GetUniformLocation(mesh.program, c"view".as_ptr()) };
    let targets = LayeredTargets::new()?;

    // Register both layered textures once, READ_ONLY: CUDA only reads them. The target
    // (GL_TEXTURE_2D_ARRAY) is asked of GL.
    let mut colour =
        RegisteredImage::register_texture(&gpu.ctx, targets.colour, RegisterFlags::READ_ONLY)?;
    let mut depth =
        RegisteredImage::register_texture(&gpu.ctx, targets.depth, RegisterFlags::READ_ONLY)?;
    // The sums of every view, written by the kernel. Allocated in the stream's order, so no
    // wait is needed before the first kernel uses it. (With the `cudarc` feature, cuda-gl views
    // *mapped GL buffers* as cudarc slices; a `DeviceBuffer` has no cudarc view, so none here.)
    let sums = DeviceBuffer::<u64>::zeroed_on(&gpu.ctx, VIEWS * SUMS, &stream)?;
    // Point sampling at texel centres, clamped; RGBA8 read as integers (`tex2D<uchar4>`), R32F
    // as floats.
    let point = TexDesc::default();
    let config = LaunchConfig {
        grid: (VIEWS as u32, 1, 1),
        block: (REDUCE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };

    let start = Instant::now();
    for iteration in 0..ITERATIONS {
        // GL renders the 64 views, the cube turned a little more each iteration.
        targets.render(&mesh, view_uniform, iteration)?;
        // One map for both textures: CUDA's work on `stream` waits for the rendering above.
        let batch = map_all((&mut colour, &mut depth), &stream)?;
        {
            let colour_layers = layer_textures(&batch.0, (ArrayFormat::UNSIGNED_INT8, 4), &point)?;
            let depth_layers = layer_textures(&batch.1, (ArrayFormat::FLOAT, 1), &point)?;
            // SAFETY: view_sums(ViewTextures, ViewTextures, int, int, unsigned long long*)
            // reads VIEW x VIEW texels of each of the VIEWS layers of both textures (their size)
            // through the texture objects, and writes VIEWS * 5 sums, the length of `sums`; one
            // block of REDUCE_THREADS threads per view, as it requires; on the stream of the
            // map.
            unsafe {
                view_sums.launch(
                    config,
                    &stream,
                    (
                        handles(&colour_layers),
                        handles(&depth_layers),
                        VIEW as i32,
                        VIEW as i32,
                        sums.device_ptr(),
                    ),
                )?;
            }
            // The texture objects drop here; cuda-gl destroys them once the kernel is done.
        }
        // Unmap: GL may render into the layers again; its next draws wait for the kernel.
        batch.unmap()?;
    }
    // Everything queued is done when the stream is: GL's rendering (ordered before each map),
    // the kernels and the unmaps.
    stream.synchronize()?;
    let seconds = start.elapsed().as_secs_f64();
    let views_per_second = f64::from(ITERATIONS) * VIEWS as f64 / seconds;
    let gpu_sums = sums.to_vec_on(&stream)?;

    // The reference: every layer read back through GL, reduced on the CPU.
    let gl_colour: Vec<Vec<u8>> = (0..VIEWS)
        .map(|layer| targets.read_layer::<u8>(targets.colour, layer, gl::RGBA, gl::UNSIGNED_BYTE))
        .collect::<Result<_>>()?;
    let gl_depth: Vec<Vec<f32>> = (0..VIEWS)
        .map(|layer| targets.read_layer::<f32>(targets.depth, layer, gl::RED, gl::FLOAT))
        .collect::<Result<_>>()?;
    let cpu_sums: Vec<u64> = gl_colour
        .iter()
        .zip(&gl_depth)
        .flat_map(|(c, d)| cpu_view_sums(c, d))
        .collect();
    let views_equal = (0..VIEWS)
        .filter(|v| gpu_sums[v * SUMS..][..SUMS] == cpu_sums[v * SUMS..][..SUMS])
        .count();

    // The same layers copied out of CUDA's arrays (MappedArray::copy_to_host) must be GL's.
    let copies_equal = {
        let batch = map_all((&mut colour, &mut depth), &stream)?;
        let mut equal = 0;
        let mut texels = vec![[0u8; 4]; (VIEW * VIEW) as usize];
        let mut depths = vec![0f32; (VIEW * VIEW) as usize];
        for layer in 0..VIEWS {
            batch.0.array(layer as u32, 0)?.copy_to_host(&mut texels)?;
            batch.1.array(layer as u32, 0)?.copy_to_host(&mut depths)?;
            let same_colour = texels.as_flattened() == gl_colour[layer].as_slice();
            let same_depth = depths
                .iter()
                .zip(&gl_depth[layer])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            equal += usize::from(same_colour && same_depth);
        }
        batch.unmap()?;
        equal
    };

    // The views must differ, or the check could not tell one layer from another.
    let mut distinct = cpu_sums.chunks_exact(SUMS).collect::<Vec<_>>();
    distinct.sort_unstable();
    distinct.dedup();
    let pixels = u64::from(VIEW * VIEW);
    let mean = |v: usize, k: usize| gpu_sums[v * SUMS + k] as f64 / pixels as f64;
    let summary = format!(
        "{ITERATIONS} x {VIEWS} views of {VIEW}x{VIEW} rendered by GL into layered textures and \
         reduced by CUDA under one map_all each: {views_per_second:.0} views/s; {views_equal} of \
         {VIEWS} views' sums equal the CPU's from glGetTextureSubImage ({} distinct views; view \
         0 mean rgb ({:.1}, {:.1}, {:.1}), depth {:.4}); {copies_equal} of {VIEWS} layers copied \
         out with copy_to_host equal GL's",
        distinct.len(),
        mean(0, 0),
        mean(0, 1),
        mean(0, 2),
        mean(0, 4) / 65535.0,
    );

    // The picture: the 64 colour views side by side, copied layer by layer on the GPU.
    let mosaic = Framebuffer::new(MOSAIC, MOSAIC)?;
    targets.copy_to_mosaic(&mosaic)?;
    gpu.finish(&mosaic)?;

    // Unregister before the textures are deleted (when `targets` drops).
    depth.unregister()?;
    colour.unregister()?;
    gpu.ctx.check_drop_errors()?;

    Ok(
        if views_equal == VIEWS && copies_equal == VIEWS && distinct.len() >= VIEWS / 2 {
            Outcome::Ok(summary)
        } else {
            Outcome::Mismatch(summary)
        },
    )
}

/// A texture object over every layer of `image`, an image of the batch: the arrays of a
/// `GL_TEXTURE_2D_ARRAY` are asked for one layer at a time (`array(layer, 0)`), each a VIEW x
/// VIEW array of `format` (channel type, channels), as the kernel reads it.
fn layer_textures<'b>(
    image: &'b MappedImage<'_>,
    format: (ArrayFormat, u32),
    desc: &TexDesc,
) -> Result<Vec<TexObject<'b>>> {
    (0..VIEWS as u32)
        .map(|layer| {
            let array = image.array(layer, 0)?;
            let size = (VIEW as usize, VIEW as usize);
            if (array.width(), array.height()) != size
                || (array.format(), array.channels()) != format
            {
                bail!(
                    "layer {layer} of the image is not {VIEW}x{VIEW} {format:?} to CUDA: {array:?}"
                );
            }
            Ok(image.create_tex(&array, desc)?)
        })
        .collect()
}

/// The handles of `VIEWS` texture objects, as the one `[Tex; VIEWS]` kernel argument.
fn handles<'t>(objects: &'t [TexObject<'_>]) -> [Tex<'t>; VIEWS] {
    std::array::from_fn(|i| objects[i].handle())
}

/// What `view_sums` computes for one view, from GL's read-back: the sums of r, g, b, a and of
/// the depth in units of 1/65535, rounded the same way (`d * 65535 + 0.5`, truncated, in f32).
fn cpu_view_sums(colour: &[u8], depth: &[f32]) -> [u64; SUMS] {
    let mut s = [0u64; SUMS];
    for texel in colour.chunks_exact(4) {
        for (sum, &c) in s.iter_mut().zip(texel) {
            *sum += u64::from(c);
        }
    }
    s[4] = depth.iter().map(|&d| (d * 65535.0 + 0.5) as u64).sum();
    s
}

/// The render targets: an RGBA8 and an R32F `GL_TEXTURE_2D_ARRAY` of VIEWS layers of VIEW x
/// VIEW, a depth renderbuffer for the depth test, and one framebuffer whose colour attachments
/// are switched to the next layer before each draw.
struct LayeredTargets {
    fbo: u32,
    colour: u32,
    depth: u32,
    depth_buffer: u32,
}

impl LayeredTargets {
    fn new() -> Result<LayeredTargets> {
        let mut t = LayeredTargets {
            fbo: 0,
            colour: 0,
            depth: 0,
            depth_buffer: 0,
        };
        let (size, layers) = (VIEW as i32, VIEWS as i32);
        // SAFETY: a GL context is current; the names come from glGen*.
        unsafe {
            for (texture, format) in [(&mut t.colour, gl::RGBA8), (&mut t.depth, gl::R32F)] {
                gl::GenTextures(1, texture);
                gl::BindTexture(gl::TEXTURE_2D_ARRAY, *texture);
                // Immutable storage: CUDA registers all layers, and they cannot be resized.
                gl::TexStorage3D(gl::TEXTURE_2D_ARRAY, 1, format, size, size, layers);
                let nearest = gl::NEAREST as i32;
                gl::TexParameteri(gl::TEXTURE_2D_ARRAY, gl::TEXTURE_MIN_FILTER, nearest);
                gl::TexParameteri(gl::TEXTURE_2D_ARRAY, gl::TEXTURE_MAG_FILTER, nearest);
            }
            gl::BindTexture(gl::TEXTURE_2D_ARRAY, 0);
            // The depth test's own buffer: one 2-D renderbuffer, cleared before each view (GL's
            // depth formats are not what CUDA reads best, so the depth CUDA sees is the R32F copy
            // the fragment shader writes).
            gl::GenRenderbuffers(1, &mut t.depth_buffer);
            gl::BindRenderbuffer(gl::RENDERBUFFER, t.depth_buffer);
            gl::RenderbufferStorage(gl::RENDERBUFFER, gl::DEPTH_COMPONENT24, size, size);
            gl::BindRenderbuffer(gl::RENDERBUFFER, 0);
            gl::GenFramebuffers(1, &mut t.fbo);
            gl::BindFramebuffer(gl::FRAMEBUFFER, t.fbo);
            gl::FramebufferRenderbuffer(
                gl::FRAMEBUFFER,
                gl::DEPTH_ATTACHMENT,
                gl::RENDERBUFFER,
                t.depth_buffer,
            );
            // Fragment output 0 goes to attachment 0 (colour), output 1 to attachment 1 (depth).
            let buffers = [gl::COLOR_ATTACHMENT0, gl::COLOR_ATTACHMENT1];
            gl::DrawBuffers(2, buffers.as_ptr());
            t.attach_layer(0);
            let status = gl::CheckFramebufferStatus(gl::FRAMEBUFFER);
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
            if status != gl::FRAMEBUFFER_COMPLETE {
                bail!("the layered framebuffer is incomplete ({status:#x})");
            }
        }
        gl_kit::check("creating the layered render targets")?;
        Ok(t)
    }

    /// Points the colour attachments at `layer` of both textures.
    ///
    /// # Safety
    /// A GL context is current and `self.fbo` is bound to `GL_FRAMEBUFFER`.
    unsafe fn attach_layer(&self, layer: i32) {
        // SAFETY: the caller's contract; both textures have VIEWS layers and one level.
        unsafe {
            gl::FramebufferTextureLayer(
                gl::FRAMEBUFFER,
                gl::COLOR_ATTACHMENT0,
                self.colour,
                0,
                layer,
            );
            gl::FramebufferTextureLayer(
                gl::FRAMEBUFFER,
                gl::COLOR_ATTACHMENT1,
                self.depth,
                0,
                layer,
            );
        }
    }

    /// Draws the VIEWS views of iteration `iteration`, one per layer: view `v` looks from yaw
    /// 2 pi v / 16 (plus a turn per iteration) and one of four pitches.
    fn render(&self, mesh: &Mesh, view_uniform: i32, iteration: u32) -> Result<()> {
        let background = [0.05f32, 0.05, 0.1, 1.0];
        let far = [1.0f32, 0.0, 0.0, 0.0];
        // SAFETY: a GL context is current; the framebuffer is complete (checked in `new`) with
        // any layer attached; the clear values are 4 floats, and depth 1 float, as GL reads.
        unsafe {
            gl::BindFramebuffer(gl::FRAMEBUFFER, self.fbo);
            gl::Viewport(0, 0, VIEW as i32, VIEW as i32);
            gl::Enable(gl::DEPTH_TEST);
            gl::UseProgram(mesh.program);
            gl::BindVertexArray(mesh.vao);
            for v in 0..VIEWS {
                self.attach_layer(v as i32);
                gl::ClearBufferfv(gl::COLOR, 0, background.as_ptr());
                gl::ClearBufferfv(gl::COLOR, 1, far.as_ptr());
                gl::ClearBufferfv(gl::DEPTH, 0, far.as_ptr());
                let yaw = std::f32::consts::TAU * (v % 16) as f32 / 16.0 + iteration as f32 * 0.02;
                let pitch = -0.6 + 0.4 * (v / 16) as f32;
                gl::Uniform2f(view_uniform, yaw, pitch);
                gl::DrawArrays(mesh.mode, 0, mesh.vertices as i32);
            }
            gl::BindVertexArray(0);
            gl::UseProgram(0);
            gl::Disable(gl::DEPTH_TEST);
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        }
        gl_kit::check("rendering the views")
    }

    /// Layer `layer` of `texture` (one of the two) read back through GL as `format`/`kind`, e.g.
    /// RGBA / UNSIGNED_BYTE into `u8`s, or RED / FLOAT into `f32`s: VIEW x VIEW texels, bottom
    /// row first.
    fn read_layer<T: gl_kit::Plain>(
        &self,
        texture: u32,
        layer: usize,
        format: u32,
        kind: u32,
    ) -> Result<Vec<T>> {
        let channels = if format == gl::RGBA { 4 } else { 1 };
        let len = (VIEW * VIEW) as usize * channels;
        let layer = u32::try_from(layer)?;
        gl_kit::readback::texture_layer(texture, layer, (VIEW, VIEW), (format, kind), len)
    }

    /// Copies the colour layers into `mosaic`, 8 per row, view 0 at the bottom left.
    fn copy_to_mosaic(&self, mosaic: &Framebuffer) -> Result<()> {
        for v in 0..VIEWS as u32 {
            let (x, y) = ((v % MOSAIC_SIDE) * VIEW, (v / MOSAIC_SIDE) * VIEW);
            // SAFETY: a GL context is current; both textures are RGBA8, the source region is one
            // whole layer and the destination region lies inside the mosaic.
            unsafe {
                gl::CopyImageSubData(
                    self.colour,
                    gl::TEXTURE_2D_ARRAY,
                    0,
                    0,
                    0,
                    v as i32,
                    mosaic.texture().0,
                    gl::TEXTURE_2D,
                    0,
                    x as i32,
                    y as i32,
                    0,
                    VIEW as i32,
                    VIEW as i32,
                    1,
                );
            }
        }
        gl_kit::check("copying the views into the mosaic")
    }
}

impl Drop for LayeredTargets {
    fn drop(&mut self) {
        // SAFETY: the GL context is current (it outlives the targets, see `Gpu`).
        unsafe {
            gl::DeleteFramebuffers(1, &self.fbo);
            gl::DeleteRenderbuffers(1, &self.depth_buffer);
            gl::DeleteTextures(1, &self.colour);
            gl::DeleteTextures(1, &self.depth);
        }
    }
}

/// The 36 vertices (12 triangles) of a cube from -0.5 to 0.5, each face one colour:
/// (x, y, z, r, g, b) per vertex.
fn cube_vertices() -> Vec<f32> {
    // Per face: the axis it faces, the direction, and its colour.
    let faces: [(usize, f32, [f32; 3]); 6] = [
        (0, 1.0, [0.9, 0.2, 0.2]),
        (0, -1.0, [0.2, 0.8, 0.3]),
        (1, 1.0, [0.2, 0.4, 0.9]),
        (1, -1.0, [0.9, 0.8, 0.2]),
        (2, 1.0, [0.8, 0.3, 0.8]),
        (2, -1.0, [0.2, 0.8, 0.8]),
    ];
    let mut vertices = Vec::with_capacity(36 * 6);
    for (axis, sign, colour) in faces {
        let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
        // Two triangles over the face's corners (-,-), (+,-), (+,+), (-,+).
        for (a, b) in [
            (-1.0, -1.0),
            (1.0, -1.0),
            (1.0, 1.0),
            (-1.0, -1.0),
            (1.0, 1.0),
            (-1.0, 1.0),
        ] {
            let mut p = [0.0f32; 3];
            p[axis] = 0.5 * sign;
            p[u] = 0.5 * a;
            p[w] = 0.5 * b;
            vertices.extend_from_slice(&p);
            vertices.extend_from_slice(&colour);
        }
    }
    vertices
}
