//! 08: glow makes the GL objects, CUDA writes them: no `gl` crate in the interop.
//!
//! cuda-gl calls GL through entry points it resolves itself, so an application that draws with
//! glow loads glow alone. Here glow creates a texture (`create_texture`, `tex_storage_2d`),
//! cuda-gl registers it by its glow name (`NativeTexture` converts into `TextureName` with the
//! `glow` feature), a kernel writes a moving stripe pattern into it through a surface, and glow
//! reads it back through a framebuffer (`read_pixels`).
//!
//! The check, on the last frame: every texel equals the CPU's formula for the pattern.
//!
//! Run: `cargo run --release -p cuda-gl --example 08_glow --features egl,glow`
//! (`-- --window` to open a GLFW window for the context instead of a headless one).

#[path = "common/mod.rs"]
mod common;
#[path = "common/glow_kit.rs"]
mod glow_kit;

use anyhow::{Context as _, Result};
use common::{Gpu, Outcome};
use cuda_gl::{ImageTarget, LaunchConfig, Module, RegisterFlags, RegisteredImage, Stream};
use glow::HasContext;
use std::process::ExitCode;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 200;
const FRAMES: u32 = 60;

fn main() -> ExitCode {
    common::main_with_kernels(WIDTH, HEIGHT, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let stripes = module.function("stripes_rgba8")?;
    // SAFETY: the loader resolves names in the GL context current on this thread (EGL's or
    // GLFW's), which outlives `gl` (dropped at the end of this function, before `gpu`).
    let gl = unsafe { glow::Context::from_loader_function(|name| gpu.proc_address(name)) };
    // SAFETY: a GL context is current; the texture is bound before its storage is set.
    let texture = unsafe {
        let texture = gl
            .create_texture()
            .map_err(anyhow::Error::msg)
            .context("glow: create_texture")?;
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.tex_storage_2d(
            glow::TEXTURE_2D,
            1,
            glow::RGBA8,
            WIDTH as i32,
            HEIGHT as i32,
        );
        gl.bind_texture(glow::TEXTURE_2D, None);
        texture
    };
    // The glow name is registered as it is.
    let mut image = RegisteredImage::register(
        &gpu.ctx,
        texture,
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
    )?;
    for frame in 0..FRAMES {
        let mapped = image.map(&stream)?;
        let surface = mapped.surface()?;
        // SAFETY: stripes_rgba8(cudaSurfaceObject_t, int, int, unsigned) writes WIDTH x HEIGHT
        // texels of the mapped texture, on the map's stream, before the unmap.
        unsafe {
            stripes.launch(
                LaunchConfig::for_image(WIDTH, HEIGHT),
                &stream,
                (surface, WIDTH as i32, HEIGHT as i32, frame),
            )?;
        }
        mapped.unmap()?;
    }
    // Read back through a framebuffer, with glow (common/glow_kit.rs).
    let pixels = glow_kit::read_texture(&gl, texture, WIDTH, HEIGHT)?;
    drop(image);
    // SAFETY: a GL context is current; the texture is unregistered (above).
    unsafe { gl.delete_texture(texture) };
    let (wrong, _) = common::stripes_mismatches(&pixels, WIDTH, FRAMES - 1);
    gpu.ctx.check_drop_errors()?;
    Ok(if wrong == 0 {
        Outcome::Ok(format!(
            "{FRAMES} frames of {WIDTH}x{HEIGHT} written by CUDA into a texture made with glow; \
             the last frame, read back with glow, equals the CPU pattern in every texel"
        ))
    } else {
        Outcome::Mismatch(format!(
            "{wrong} of {} texels differ from the CPU pattern",
            WIDTH * HEIGHT
        ))
    })
}
