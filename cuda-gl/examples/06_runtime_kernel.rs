//! 06: a kernel of your own, compiled at run time with NVRTC, writing a GL texture array.
//!
//! The story: a `GL_TEXTURE_2D_ARRAY` of 4 layers is a frame stack. The host makes frame 0 (in
//! pinned memory) and CUDA uploads it into layer 0; CUDA copies layer 0 into linear device memory,
//! where a kernel can reach a texel's neighbours with pointer arithmetic; one launch of a kernel
//! compiled at run time from the CUDA C string `SRC` derives frames 1..3 and writes them into
//! layers 1..3 through 4 surfaces passed as one argument. Then CUDA hands frame 3 on: into a
//! plain `GL_TEXTURE_2D` (array-to-array copy), into a GL pixel buffer that GL reads, and into
//! device memory that the host reads through a pinned staging buffer.
//!
//! The check: every layer read back by GL equals the CPU's computation, and so do the 2-D
//! texture, the pixel buffer and both host read-backs (integer math only: exact).
//!
//! Run: `cargo run --release -p cuda-gl --example 06_runtime_kernel --features egl,nvrtc`
//! (`-- --window` to see the four frames, `-- --screenshot 06.png` to keep them). NVRTC is opened
//! at run time: `libnvrtc.so.12`/`.13` from the loader's path, or `$CUDA_GL_NVRTC_PATH`.

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, anyhow};
use common::{Framebuffer, Gpu, Outcome, Unavailable};
use cuda_gl::{
    DeviceBuffer, Error, LaunchConfig, Module, PinnedBuffer, RegisterFlags, RegisteredBuffer,
    RegisteredImage, Stream, StreamFlags, nvrtc,
};
use std::process::ExitCode;

/// The kernel, in CUDA C. `extern "C"` keeps its name unmangled for `module.function`. The 4
/// surfaces arrive as one struct by value: what `MappedImage::layer_surfaces::<4>` returns
/// (`[Surface; 4]`) is laid out exactly like it. Only NVRTC's built-in headers are available,
/// which declare all it uses (`cuda_gl::nvrtc`'s module docs, "Options").
const SRC: &str = r#"
struct Layers { cudaSurfaceObject_t s[4]; };

extern "C" __global__ void derive_frames(Layers frames, const uchar4* src, const uchar4* next_row,
                                         const unsigned char* curve, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    uchar4 p = src[y * w + x];
    // Frame 1: the negative.
    uchar4 neg = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, 255);
    // Frame 2: vertical edges, 8 |p(x, y + 1) - p(x, y)| per channel (0 on the last row).
    // `next_row` is `src` one row further on: next_row[y * w + x] is the texel at (x, y + 1).
    uchar4 q = y + 1 < h ? next_row[y * w + x] : p;
    uchar4 edge = make_uchar4(min(255, 8 * abs(q.x - p.x)), min(255, 8 * abs(q.y - p.y)),
                              min(255, 8 * abs(q.z - p.z)), 255);
    // Frame 3: mirrored left-right, channels rotated, through the host's tone curve.
    uchar4 m = src[y * w + (w - 1 - x)];
    uchar4 tone = make_uchar4(curve[m.z], curve[m.x], curve[m.y], 255);
    // frames.s[0] is layer 0, frame 0 itself: this kernel reads it from linear memory instead.
    surf2Dwrite(neg, frames.s[1], x * 4, y);
    surf2Dwrite(edge, frames.s[2], x * 4, y);
    surf2Dwrite(tone, frames.s[3], x * 4, y);
}
"#;

/// Each frame is SIZE x SIZE RGBA8 (texel (x, y) with x, y < 256, so x and y fit a channel).
const SIZE: u32 = 256;
const LAYERS: usize = 4;
const TEXELS: usize = (SIZE * SIZE) as usize;
type Rgba = [u8; 4];

fn main() -> ExitCode {
    common::main(run)
}

fn run(args: &common::Args) -> Result<Outcome> {
    // 1. Compile first: NVRTC needs no GPU, so a broken kernel shows up even on a machine
    //    without one. The options are the set `cuda_gl::nvrtc`'s module docs recommend ("Options").
    let ((major, minor), path) = nvrtc::version().map_err(unavailable_nvrtc)?;
    println!("NVRTC {major}.{minor} ({})", path.display());
    let ptx = nvrtc::compile_ptx(SRC, &["--gpu-architecture=compute_75", "--std=c++17"])
        .map_err(unavailable_nvrtc)?;
    println!("compiled derive_frames: {} bytes of PTX", ptx.len());

    // 2. GL and CUDA on the same GPU; then load the PTX. With a context at hand,
    //    `Module::from_cuda_source(&ctx, SRC, &[...])` does the compile and the load in one call.
    let mut gpu = Gpu::open(args, 2 * SIZE, 2 * SIZE)?;
    let ctx = gpu.ctx.clone();
    let derive = Module::from_ptx(&ctx, &ptx)?.function("derive_frames")?;
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;

    // The GL objects: the frame stack, a plain 2-D texture for frame 3 (for code that samples a
    // `sampler2D` and cannot take one layer of an array), and a pixel buffer of one frame.
    let stack = texture_array()?;
    let still = gl_kit::texture::rgba8(SIZE, SIZE, 1, gl::NEAREST)?;
    // Two more 2-D textures that frame 3 reaches the other way round: from device memory, and
    // from the mapped pixel buffer (CUDA's version of glTexSubImage2D from a PBO).
    let from_device = gl_kit::texture::rgba8(SIZE, SIZE, 1, gl::NEAREST)?;
    let from_pbo = gl_kit::texture::rgba8(SIZE, SIZE, 1, gl::NEAREST)?;
    let pbo = pixel_buffer(TEXELS * size_of::<Rgba>())?;
    // Registered once. The stack: surfaces for the kernel; CUDA writes `still` and `pbo` whole.
    let mut stack_reg =
        RegisteredImage::register_texture(&ctx, stack, RegisterFlags::SURFACE_LOAD_STORE)?;
    let mut still_reg =
        RegisteredImage::register_texture(&ctx, still, RegisterFlags::WRITE_DISCARD)?;
    let mut from_device_reg =
        RegisteredImage::register_texture(&ctx, from_device, RegisterFlags::WRITE_DISCARD)?;
    let mut from_pbo_reg =
        RegisteredImage::register_texture(&ctx, from_pbo, RegisterFlags::WRITE_DISCARD)?;
    let mut pbo_reg = RegisteredBuffer::register(&ctx, pbo, RegisterFlags::WRITE_DISCARD)?;

    // Frame 0 is made by the host straight into pinned (page-locked) memory, which the GPU's
    // copy engines read without a staging copy; the same buffer later receives frame 3.
    let mut staging = PinnedBuffer::<Rgba>::zeroed(&ctx, TEXELS)?;
    for (i, texel) in staging.as_mut_slice()?.iter_mut().enumerate() {
        *texel = frame0_texel(i as u32 % SIZE, i as u32 / SIZE);
    }
    let frame0 = staging.as_slice()?.to_vec();
    // The tone curve of frame 3, a lookup table the host computes; `copy_from_slice_on` queues
    // the upload on our stream (a real program would refill it every frame).
    let curve_host: Vec<u8> = (0..256).map(tone).collect();
    let mut curve = DeviceBuffer::<u8>::zeroed_on(&ctx, 256, &stream)?;
    curve.copy_from_slice_on(&curve_host, &stream)?;
    let mut source = DeviceBuffer::<Rgba>::zeroed_on(&ctx, TEXELS, &stream)?;
    let mut frame3 = DeviceBuffer::<Rgba>::zeroed_on(&ctx, TEXELS, &stream)?;
    // Poison it, so that a copy that silently did nothing cannot pass the check.
    frame3.memset_async(0xA5, &stream)?;

    // 3. Map all three on ONE stream: CUDA's work waits for GL's on them, and copies between
    //    them are ordered (`map_all`, example 05, would map them with one driver call).
    let source_back;
    {
        let mapped = stack_reg.map(&stream)?;
        let mapped_still = still_reg.map(&stream)?;
        let mapped_from_device = from_device_reg.map(&stream)?;
        let mapped_from_pbo = from_pbo_reg.map(&stream)?;
        let mapped_pbo = pbo_reg.map(&stream)?;
        let layer0 = mapped.array(0, 0)?;
        let layer3 = mapped.array(3, 0)?;
        // Each layer maps as a 2-D array of its own; the mipmapped array's level 0 is the whole
        // stack, one layered array.
        println!(
            "a layer is {} bytes ({:?} bytes per channel); level 0 of the stack is layered: {}",
            layer0.byte_len()?,
            layer0.format().bytes_per_channel(),
            mapped.mipmapped_array()?.level(0)?.is_layered()
        );
        // Host -> layer 0 (the CUDA way of glTextureSubImage3D); returns when it is done.
        layer0.copy_from_host(staging.as_slice()?)?;
        // Layer 0 -> linear device memory, queued; read back on the same stream to check it.
        layer0.copy_to_device(&mut source)?;
        source_back = source.to_vec_on(&stream)?;
        // One launch writes layers 1..3, through the surfaces of layers 0..3 as one argument.
        // `next_row` is `source` one row (SIZE texels) further on: a byte offset on a pointer.
        let layers = mapped.layer_surfaces::<4>(0, 0)?;
        let src = source.device_ptr();
        let next_row = src.byte_add(SIZE as usize * size_of::<Rgba>())?;
        // SAFETY: derive_frames(Layers, const uchar4*, const uchar4*, const unsigned char*, int,
        // int) reads `src[y * SIZE + x]`, and `next_row[y * SIZE + x]` only for y < SIZE - 1
        // (both inside `source`, TEXELS texels), `curve[0..256]` (256 bytes), and writes
        // SIZE x SIZE texels of layers 1..3, the layers' size. It runs on the stream of the map.
        unsafe {
            derive.launch(
                LaunchConfig::for_image(SIZE, SIZE),
                &stream,
                (
                    layers,
                    src,
                    next_row,
                    curve.device_ptr(),
                    SIZE as i32,
                    SIZE as i32,
                ),
            )?;
        }
        // Frame 3 onwards, each copy queued after the kernel on the same stream: into the 2-D
        // texture (array to array), into the pixel buffer, and into device memory.
        layer3.copy_to_array(&mapped_still.array(0, 0)?)?;
        layer3.copy_to_buffer(&mapped_pbo)?;
        layer3.copy_to_device(&mut frame3)?;
        // And back into textures: from device memory, and from the mapped pixel buffer.
        mapped_from_device.array(0, 0)?.copy_from_device(&frame3)?;
        mapped_from_pbo.array(0, 0)?.copy_from_buffer(&mapped_pbo)?;
        // Device -> pinned host memory, queued; `as_slice` below waits for it.
        staging.copy_from_device_async(&frame3, &stream)?;
        // Unmapping hands the objects back to GL: GL commands issued after it see CUDA's work.
        mapped_pbo.unmap()?;
        mapped_from_pbo.unmap()?;
        mapped_from_device.unmap()?;
        mapped_still.unmap()?;
        mapped.unmap()?;
    }
    let pinned_back = staging.as_slice()?.to_vec();

    // 4. The check, read back by GL and by the host.
    let expected = expected_frames(&frame0, &curve_host);
    let mut matching_layers = 0;
    for (layer, want) in expected.iter().enumerate() {
        matching_layers += usize::from(read_layer(stack, layer)? == *want);
    }
    let want3 = &expected[3];
    let still_ok = gl_kit::readback::texture::<u8>(gl::TEXTURE_2D, still, 0)? == want3.concat();
    let pbo_ok = gl_kit::buffer::read::<Rgba>(pbo, TEXELS)? == *want3;
    let back_ok = gl_kit::readback::texture::<u8>(gl::TEXTURE_2D, from_device, 0)?
        == want3.concat()
        && gl_kit::readback::texture::<u8>(gl::TEXTURE_2D, from_pbo, 0)? == want3.concat();
    let source_ok = source_back == frame0;
    let pinned_ok = pinned_back == *want3;
    let summary = format!(
        "derive_frames compiled by NVRTC {major}.{minor} wrote layers 1..3 of a {SIZE}x{SIZE}x4 \
         texture array in one launch; read back by GL, {matching_layers} of {LAYERS} layers equal \
         the CPU's frames; frame 0 via device memory (to_vec_on): {}; frame 3 copied into a 2-D \
         texture: {}, into a pixel buffer read by GL: {}, via a pinned buffer: {}; back into \
         textures from device memory and from the pixel buffer: {}",
        verdict(source_ok),
        verdict(still_ok),
        verdict(pbo_ok),
        verdict(pinned_ok),
        verdict(back_ok),
    );

    // The picture: the four frames in a 2 x 2 grid (frame 0 top left, 3 bottom right).
    let frame = Framebuffer::new(2 * SIZE, 2 * SIZE)?;
    blit_layers(stack, &frame)?;
    gpu.finish(&frame)?;
    // Unregister before the GL objects are deleted.
    pbo_reg.unregister()?;
    from_pbo_reg.unregister()?;
    from_device_reg.unregister()?;
    still_reg.unregister()?;
    stack_reg.unregister()?;
    // SAFETY: the GL context is current; the names came from glCreate* and glGenTextures.
    unsafe {
        gl::DeleteBuffers(1, &pbo);
        gl::DeleteTextures(4, [stack, still, from_device, from_pbo].as_ptr());
    }
    ctx.check_drop_errors()?;

    let all = matching_layers == LAYERS && still_ok && pbo_ok && source_ok && pinned_ok && back_ok;
    Ok(if all {
        Outcome::Ok(summary)
    } else {
        Outcome::Mismatch(summary)
    })
}

/// NVRTC missing is a reason this machine cannot run the example (exit 2); any other error
/// (a compile error, with NVRTC's log) is a failure.
fn unavailable_nvrtc(e: Error) -> anyhow::Error {
    match e {
        Error::NvrtcUnavailable { .. } => anyhow!(Unavailable(format!("{e}"))),
        e => e.into(),
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "equal" } else { "DIFFERENT" }
}

/// The host's frame 0: red grows to the right, green upwards, blue is a 32-texel checkerboard.
fn frame0_texel(x: u32, y: u32) -> Rgba {
    let blue = if (x / 32 + y / 32).is_multiple_of(2) {
        40
    } else {
        220
    };
    [x as u8, y as u8, blue, 255]
}

/// The tone curve: v^2 / 255, rounded (darkens the middle tones).
fn tone(v: u32) -> u8 {
    ((v * v + 127) / 255) as u8
}

/// What the stack holds afterwards: frame 0, and the kernel's frames 1..3 computed on the CPU.
fn expected_frames(frame0: &[Rgba], curve: &[u8]) -> [Vec<Rgba>; LAYERS] {
    let s = SIZE as usize;
    let at = |x: usize, y: usize| frame0[y * s + x];
    let mut out: [Vec<Rgba>; LAYERS] = Default::default();
    out[0] = frame0.to_vec();
    for y in 0..s {
        for x in 0..s {
            let p = at(x, y);
            let q = if y + 1 < s { at(x, y + 1) } else { p };
            let m = at(s - 1 - x, y);
            let edge = |c: usize| (8 * p[c].abs_diff(q[c]) as u32).min(255) as u8;
            out[1].push([255 - p[0], 255 - p[1], 255 - p[2], 255]);
            out[2].push([edge(0), edge(1), edge(2), 255]);
            out[3].push([
                curve[m[2] as usize],
                curve[m[0] as usize],
                curve[m[1] as usize],
                255,
            ]);
        }
    }
    out
}

/// A SIZE x SIZE x LAYERS `GL_TEXTURE_2D_ARRAY` of RGBA8 with one level and no contents yet.
fn texture_array() -> Result<u32> {
    let texture = gl_kit::texture::rgba8_array(SIZE, SIZE, LAYERS as u32)?;
    gl_kit::texture::set_filter(gl::TEXTURE_2D_ARRAY, texture, gl::NEAREST);
    gl_kit::check("creating the texture array")?;
    Ok(texture)
}

/// A GL buffer of `bytes` bytes with no contents yet, to be filled by CUDA and read by GL.
fn pixel_buffer(bytes: usize) -> Result<u32> {
    gl_kit::buffer::create(bytes, gl::STREAM_READ, None)
}

/// Layer `layer` of the stack read back with glGetTextureSubImage, bottom row first.
fn read_layer(texture: u32, layer: usize) -> Result<Vec<Rgba>> {
    let (layer, format) = (u32::try_from(layer)?, (gl::RGBA, gl::UNSIGNED_BYTE));
    gl_kit::readback::texture_layer(texture, layer, (SIZE, SIZE), format, TEXELS)
}

/// Copies the four layers into the quadrants of `frame` (frame 0 top left, 1 top right, 2
/// bottom left, 3 bottom right; GL's y grows upwards).
fn blit_layers(texture: u32, frame: &Framebuffer) -> Result<()> {
    let s = SIZE as i32;
    let mut read = 0;
    // SAFETY: a GL context is current; `read` gets one layer of the texture as its colour
    // attachment, and `frame.framebuffer()` is complete and 2 SIZE x 2 SIZE.
    unsafe {
        gl::CreateFramebuffers(1, &mut read);
        for layer in 0..LAYERS as i32 {
            let (x, y) = ((layer % 2) * s, (1 - layer / 2) * s);
            gl::NamedFramebufferTextureLayer(read, gl::COLOR_ATTACHMENT0, texture, 0, layer);
            gl::BlitNamedFramebuffer(
                read,
                frame.framebuffer(),
                0,
                0,
                s,
                s,
                x,
                y,
                x + s,
                y + s,
                gl::COLOR_BUFFER_BIT,
                gl::NEAREST,
            );
        }
        gl::DeleteFramebuffers(1, &read);
    }
    gl_kit::check("copying the layers into the picture")
}
