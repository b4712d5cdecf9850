//! 00: the README's whole cycle, checked: CUDA writes every frame into a GL pixel buffer, GL
//! copies it into a texture and draws it.
//!
//! Headless on CUDA device 0: a pixel buffer object (PBO) registered with CUDA once, then every
//! frame map (CUDA owns it) -> kernel -> unmap (GL owns it) -> `glTexSubImage2D` from the PBO
//! into a texture -> a blit of the texture into a framebuffer of our own (a headless context has
//! no default framebuffer). The pixels never visit the host, until the check.
//!
//! The check: the final image, read back with glReadPixels, equals, pixel for pixel, the CPU's
//! formula for the last frame (`gradient_rgba8` in `kernels/examples.cu`: integers only, exact).
//!
//! The body of `run` is the README's "The whole cycle", with anyhow for errors, "cannot run here"
//! for a machine with no GPU, and `--screenshot` added.
//!
//! Run: `cargo run --release -p cuda-gl --example 00_whole_cycle --features egl`
//! (`-- --screenshot 00.png` to keep the last frame; it has no `--window`).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, anyhow, bail};
use common::{Outcome, Unavailable};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    Context, Device, LaunchConfig, Module, RegisterFlags, RegisteredBuffer, Stream, StreamFlags,
};
use std::process::ExitCode;

/// The examples' kernels, compiled from `kernels/examples.cu` by `cargo xtask ptx`.
const PTX: &str = include_str!("kernels/examples.ptx");

fn main() -> ExitCode {
    common::main(run)
}

fn run(args: &common::Args) -> Result<Outcome> {
    if args.window {
        bail!(Unavailable("00 is headless only (no --window)".into()));
    }
    let unavailable = |what: String| anyhow!(Unavailable(what));
    let device = Device::get(0).map_err(|e| unavailable(format!("no CUDA device 0: {e}")))?;
    // A window's GL context works the same way; this one needs no display, and is on the same GPU
    // as CUDA device 0. Keep it in a named variable: it must outlive everything registered in it
    // (`let _ = ...` would drop it now).
    let _gl = HeadlessContext::for_cuda_device(&device)
        .map_err(|e| unavailable(format!("no headless OpenGL on CUDA device 0: {e}")))?;
    // This program draws with the `gl` crate, so it loads it; cuda-gl itself needs no loader.
    gl::load_with(|name| _gl.get_proc_address(name));
    let ctx = Context::new(&device)?;
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
    let module = Module::from_ptx(&ctx, PTX)?;
    let gradient = module.function("gradient_rgba8")?;

    let (w, h, frames) = (1920u32, 1080u32, 600u32);
    let (mut pbo, mut tex, mut screen) = (0, 0, 0);
    let (mut frame_fbo, mut screen_fbo) = (0, 0);
    // SAFETY: the GL context is current and loaded the `gl` function pointers.
    unsafe {
        // The PBO: w * h RGBA8 pixels, no data yet (the kernel writes them). It must have its
        // size before CUDA registers it.
        gl::GenBuffers(1, &mut pbo);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, pbo);
        let bytes = (w * h * 4) as isize;
        gl::BufferData(
            gl::PIXEL_UNPACK_BUFFER,
            bytes,
            std::ptr::null(),
            gl::STREAM_DRAW,
        );
        // The frame texture, read through `frame_fbo`.
        gl::GenTextures(1, &mut tex);
        gl::BindTexture(gl::TEXTURE_2D, tex);
        gl::TexStorage2D(gl::TEXTURE_2D, 1, gl::RGBA8, w as i32, h as i32);
        gl::GenFramebuffers(1, &mut frame_fbo);
        gl::BindFramebuffer(gl::READ_FRAMEBUFFER, frame_fbo);
        let attach = gl::COLOR_ATTACHMENT0;
        gl::FramebufferTexture2D(gl::READ_FRAMEBUFFER, attach, gl::TEXTURE_2D, tex, 0);
        // A headless context has no default framebuffer (a window's is framebuffer 0): draw
        // into a texture of our own instead.
        gl::GenTextures(1, &mut screen);
        gl::BindTexture(gl::TEXTURE_2D, screen);
        gl::TexStorage2D(gl::TEXTURE_2D, 1, gl::RGBA8, w as i32, h as i32);
        gl::GenFramebuffers(1, &mut screen_fbo);
        gl::BindFramebuffer(gl::DRAW_FRAMEBUFFER, screen_fbo);
        gl::FramebufferTexture2D(gl::DRAW_FRAMEBUFFER, attach, gl::TEXTURE_2D, screen, 0);
        gl::BindTexture(gl::TEXTURE_2D, tex);
    }

    // Register once; map every frame. WRITE_DISCARD: the kernel writes every pixel, so the
    // driver need not keep GL's old contents when it hands the buffer to CUDA.
    let mut pixels = RegisteredBuffer::register(&ctx, pbo, RegisterFlags::WRITE_DISCARD)?;
    for frame in 0..frames {
        // Map: CUDA owns the PBO from here, ordered after GL's last read of it (no glFinish).
        let mapped = pixels.map(&stream)?;
        if mapped.size() < (w * h * 4) as usize {
            bail!(
                "the mapped PBO has {} bytes, not {}",
                mapped.size(),
                w * h * 4
            );
        }
        // SAFETY: gradient_rgba8(uchar4*, int, int, unsigned) writes w * h RGBA8 pixels, which
        // fit in the mapped buffer (checked above); it runs on the mapping's stream.
        unsafe {
            gradient.launch(
                LaunchConfig::for_image(w, h),
                &stream,
                (mapped.device_ptr(), w as i32, h as i32, frame),
            )?;
        }
        // Unmap, on the stream it was mapped on (dropping the guard does the same): GL owns the
        // PBO again, and GL commands issued from now on see the kernel's writes.
        mapped.unmap()?;

        // SAFETY: as above; with the PBO bound to GL_PIXEL_UNPACK_BUFFER, the data pointer is
        // an offset into it, and `tex` is the bound texture.
        unsafe {
            let (format, kind) = (gl::RGBA, gl::UNSIGNED_BYTE);
            let (wi, hi) = (w as i32, h as i32);
            gl::TexSubImage2D(
                gl::TEXTURE_2D,
                0,
                0,
                0,
                wi,
                hi,
                format,
                kind,
                std::ptr::null(),
            );
            // Draw: here a blit of the frame into `screen`; a window would draw a fullscreen
            // triangle sampling `tex` into framebuffer 0 and swap buffers.
            let (color, nearest) = (gl::COLOR_BUFFER_BIT, gl::NEAREST);
            gl::BlitFramebuffer(0, 0, wi, hi, 0, 0, wi, hi, color, nearest);
        }
    }

    // Read the whole final image back (bottom row first) and check every pixel against the
    // kernel's formula for the last frame.
    let mut image = vec![0u8; (w * h * 4) as usize];
    // SAFETY: as above; no pixel-pack buffer is bound, so GL writes w * h RGBA8 pixels (rows of
    // w * 4 bytes, a multiple of the default pack alignment of 4) into `image`, its length.
    let error = unsafe {
        gl::BindFramebuffer(gl::READ_FRAMEBUFFER, screen_fbo);
        let (format, kind, out) = (gl::RGBA, gl::UNSIGNED_BYTE, image.as_mut_ptr().cast());
        gl::ReadPixels(0, 0, w as i32, h as i32, format, kind, out);
        gl::GetError()
    };
    if error != gl::NO_ERROR {
        bail!("OpenGL error {error:#x}");
    }
    let last = frames - 1;
    let expected = |i: usize| {
        let (x, y) = (i as u32 % w, i as u32 / w);
        [(x & 255) as u8, (y & 255) as u8, (last & 255) as u8, 255]
    };
    let wrong: Vec<usize> = (0..(w * h) as usize)
        .filter(|&i| image[i * 4..i * 4 + 4] != expected(i))
        .collect();
    if let Some(path) = &args.screenshot {
        gl_kit::image::write_png_bottom_up(path, w, h, &image)?;
        println!("wrote {} ({w}x{h})", path.display());
    }
    pixels.unregister()?; // or let it drop: guard -> unmap -> unregister -> context release
    ctx.check_drop_errors()?;

    let summary = format!(
        "{frames} frames of {w}x{h} RGBA8 written by CUDA into a GL PBO, copied into a texture and \
         blitted; {} of {} pixels of the last frame (frame {last}) differ from the CPU's formula",
        wrong.len(),
        w * h
    );
    Ok(match wrong.first() {
        None => Outcome::Ok(summary),
        Some(&i) => Outcome::Mismatch(format!(
            "{summary}; the first is ({}, {}): {:?}, expected {:?}",
            i as u32 % w,
            i as u32 / w,
            &image[i * 4..i * 4 + 4],
            expected(i)
        )),
    })
}
