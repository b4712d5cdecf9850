//! cuda-gl with cudarc: a kernel launched through cudarc writes an OpenGL pixel buffer in place,
//! and OpenGL reads it back.
//!
//! The CUDA side is all cudarc (context, stream, module, launch); cuda-gl registers the GL
//! buffer in cudarc's context, maps it on cudarc's stream, and hands it to cudarc as a typed
//! device slice that cannot outlive the mapping. Headless: the GL context comes from EGL on the
//! same GPU, so it runs on a server.
//!
//! Run with `cargo run -p cuda-gl --example cudarc_interop --features cudarc,egl`. It prints what
//! it checked, and exits with 1 when a pixel differs, 2 when something fails.

#[path = "common/mod.rs"]
mod common;

use cuda_gl::egl::HeadlessContext;
use cuda_gl::{Context, RegisterFlags, RegisteredBuffer};
use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use gl_kit::upload::{self, Source};
use std::process::ExitCode;

/// `xor_gradient_rgba8(unsigned* pixels, unsigned width, unsigned height, unsigned frame)`, from
/// `kernels/cudarc_interop.cu`, compiled by `cargo xtask ptx`.
const PTX: &str = include_str!("kernels/cudarc_interop.ptx");

const WIDTH: u32 = 640;
const HEIGHT: u32 = 360;
const FRAME: u32 = 42;

/// What the kernel writes into a zeroed image: the pixel packed little-endian, r = x, g = y,
/// b = frame, a = 255 (mod 256), as the bytes GL reads as RGBA8.
fn gradient(x: u32, y: u32, frame: u32) -> u32 {
    (x & 0xff) | ((y & 0xff) << 8) | ((frame & 0xff) << 16) | (0xff << 24)
}

fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(wrong) => {
            eprintln!("cudarc_interop: {wrong} pixel(s) differ from the expected gradient");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("cudarc_interop: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs the whole flow and returns how many pixels GL read back wrong.
fn run() -> Result<usize, Box<dyn std::error::Error>> {
    // cudarc panics when it finds no driver library; cuda-gl reports it as an error first.
    let driver = cuda_gl::driver_version()?;
    // The application's own cudarc objects.
    let cu = CudaContext::new(0)?;
    let stream = cu.new_stream()?;
    let kernel = cu
        .load_module(Ptx::from_src(PTX))?
        .load_function("xor_gradient_rgba8")?;

    // A headless OpenGL context on the same GPU, with a zeroed pixel buffer and a texture.
    let gl_ctx = HeadlessContext::for_cuda_ordinal(cu.cu_device())?;
    gl::load_with(|name| gl_ctx.get_proc_address(name)); // for this program's own GL calls
    println!(
        "OpenGL {} on {}; CUDA device {} ({}), driver API {driver}",
        gl_ctx.version(),
        gl_ctx.renderer(),
        cu.ordinal(),
        cu.name()?
    );
    let pixel_count = (WIDTH * HEIGHT) as usize;
    let (pbo, texture) = create_pbo_and_texture(pixel_count)?;

    // Register the buffer in cudarc's context: cuda-gl shares it rather than retaining another.
    let ctx = Context::from_cudarc(&cu)?;
    let mut pixels = RegisteredBuffer::register(&ctx, pbo, RegisterFlags::NONE)?;

    // Map on the cudarc stream, view as a slice of u32 (one RGBA8 pixel each), launch.
    let mut mapped = pixels.map(&stream)?;
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let mut view = unsafe { mapped.as_cudarc_slice_mut::<u32>() }?;
    if view.len() != pixel_count {
        return Err(format!(
            "the mapped buffer holds {} pixels, not {pixel_count}",
            view.len()
        )
        .into());
    }
    let config = LaunchConfig {
        grid_dim: (WIDTH.div_ceil(16), HEIGHT.div_ceil(16), 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes (unsigned*, unsigned, unsigned, unsigned) and writes
    // WIDTH * HEIGHT words through the pointer, which is the view's length; it runs on the
    // stream the buffer is mapped on.
    unsafe {
        stream
            .launch_builder(&kernel)
            .arg(&mut view)
            .arg(&WIDTH)
            .arg(&HEIGHT)
            .arg(&FRAME)
            .launch(config)
    }?;
    // Unmapping (on the same stream) ends the view's borrow; GL work issued after it waits for
    // the kernel.
    mapped.unmap()?;

    // GL uses the buffer as the source of a texture upload, then reads the texture back.
    upload::rgba8(
        gl::TEXTURE_2D,
        texture,
        (WIDTH, HEIGHT, 1),
        Source::Buffer(pbo),
    )?;
    let texels = gl_kit::readback::texture::<u8>(gl::TEXTURE_2D, texture, 0)?;
    let wrong = (0..HEIGHT)
        .flat_map(|y| (0..WIDTH).map(move |x| (x, y)))
        .zip(texels.chunks_exact(4))
        .filter(|&((x, y), texel)| *texel != gradient(x, y, FRAME).to_le_bytes())
        .count();
    println!(
        "a cudarc kernel wrote {WIDTH}x{HEIGHT} RGBA8 pixels into GL buffer {pbo} mapped on a \
         cudarc stream; GL read back {} of {pixel_count} pixels as expected",
        pixel_count - wrong
    );

    pixels.unregister()?;
    ctx.check_drop_errors()?;
    // SAFETY: the GL context is current; the names came from glGen*.
    unsafe {
        gl::DeleteTextures(1, &texture);
        gl::DeleteBuffers(1, &pbo);
    }
    Ok(wrong)
}

/// A zero-filled pixel buffer of `pixel_count` RGBA8 pixels and a WIDTH x HEIGHT RGBA8 texture.
fn create_pbo_and_texture(pixel_count: usize) -> anyhow::Result<(u32, u32)> {
    let pbo = gl_kit::buffer::create_from(&vec![0u32; pixel_count], gl::STREAM_DRAW)?;
    Ok((pbo, gl_kit::texture::rgba8(WIDTH, HEIGHT, 1, gl::NEAREST)?))
}
