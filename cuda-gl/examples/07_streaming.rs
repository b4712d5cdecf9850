//! 07: streaming frames from CUDA to GL at full throughput (`FrameStream`).
//!
//! The fastest ordered way to hand a stream of frames from CUDA kernels to GL draws, for video,
//! simulation viewers or rendering training data, where sustained frames per second matter more
//! than a few frames of latency. There is no map and no unmap: each frame goes into a slot of
//! CUDA memory that GL imported once (`GL_EXT_memory_object_fd`). `FrameStream` orders the two
//! APIs per *burst* of frames instead of per frame: CUDA writes a burst of 8 frames back to
//! back, then GL gets all of them at once, so the two APIs hand over to each other once every 8
//! frames. Every handover costs the GPU a switch between CUDA and GL; fewer handovers is what
//! makes streaming nearly as fast as CUDA and GL running with nothing shared at all (see
//! `docs/benchmarks.md`, "Streaming").
//!
//! You write two closures: the producer queues the kernel that writes one frame into its slot,
//! the consumer issues the GL commands that read one frame from its slot. The stream calls them
//! in the right order and never lets GL read a frame that CUDA is still writing, nor CUDA
//! overwrite a frame that GL is still reading.
//!
//! The check: every 100th frame is copied by GL (when GL gets it) into an archive buffer, and
//! the last frame drawn is read back from the framebuffer; both must equal the CPU's gradient
//! (`gradient_rgba8`: integers only, exact) byte for byte.
//!
//! Run: `cargo run --release -p cuda-gl --example 07_streaming --features egl`
//! (`-- --window` to watch it, `-- --screenshot 07.png` to keep the last frame).

#[path = "common/mod.rs"]
mod common;

use anyhow::Result;
use common::{Framebuffer, Gpu, Mesh, Outcome};
use cuda_gl::external::{ExternalGl, FrameRead, FrameStream, FrameWrite};
use cuda_gl::{LaunchConfig, Module, Stream};
use gl_kit::upload::{self, Source};
use std::process::ExitCode;
use std::time::Instant;

/// Frame size.
const W: u32 = 1280;
const H: u32 = 720;
const FRAME_BYTES: usize = (W * H * 4) as usize;
/// Frames to stream, and how many go in one burst (the stream has twice as many slots).
const FRAMES: u64 = 2400;
const BURST: usize = 8;
/// Every SAMPLE-th frame is archived for the check.
const SAMPLE: u64 = 100;

/// A full-screen triangle that shows the texture one texel per pixel.
const VERTEX_SHADER: &str = "#version 450 core
layout(location = 0) in vec2 position;
void main() { gl_Position = vec4(position, 0.0, 1.0); }";

const FRAGMENT_SHADER: &str = "#version 450 core
layout(binding = 0) uniform sampler2D frame;
out vec4 colour;
void main() { colour = texelFetch(frame, ivec2(gl_FragCoord.xy), 0); }";

fn main() -> ExitCode {
    common::main_with_kernels(W, H, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let gradient = module.function("gradient_rgba8")?;

    let gl = ExternalGl::current()?;
    let mut frames = FrameStream::new(&gpu.ctx, &gl, FRAME_BYTES, 2 * BURST, BURST)?;

    // GL's side: the texture each frame is copied into, the triangle that draws it, the
    // framebuffer it is drawn into, and the archive of sampled frames.
    let texture = gl_kit::texture::rgba8(W, H, 1, gl::NEAREST)?;
    let triangle = [-1.0, -1.0, 3.0, -1.0, -1.0, 3.0];
    let shaders = (VERTEX_SHADER, FRAGMENT_SHADER);
    let mesh = Mesh::new(shaders, gl::TRIANGLES, 3, 2, Some(&triangle), &[(0, 2, 0)])?;
    let frame = Framebuffer::new(W, H)?;
    let samples = FRAMES.div_ceil(SAMPLE) as usize;
    let archive = gl_kit::buffer::create(samples * FRAME_BYTES, gl::STREAM_COPY, None)?;

    // The producer: one kernel launch per frame, into the frame's slot, on `stream`.
    let mut produce = |f: &FrameWrite<'_>| -> Result<()> {
        // SAFETY: gradient_rgba8(uchar4*, int, int, unsigned) writes W * H RGBA8 pixels, which
        // is the slot's size; the stream waits for the kernel (an event on `stream`) before GL
        // reads the slot or the slot is freed.
        unsafe {
            gradient.launch(
                LaunchConfig::for_image(W, H),
                &stream,
                (f.device_ptr(), W as i32, H as i32, f.index() as u32),
            )?;
        }
        Ok(())
    };
    // The consumer: copy the frame into the texture (on the GPU), draw it, archive a sample.
    let (mut drawn, mut behind_sum, mut behind_max, mut open) = (0u64, 0u64, 0u64, true);
    let mut consume = |f: &FrameRead| -> Result<()> {
        upload::rgba8(
            gl::TEXTURE_2D,
            texture,
            (W, H, 1),
            Source::Buffer(f.buffer()),
        )?;
        // SAFETY: a GL context is current; unit 0 shows the frame's texture.
        unsafe { gl::BindTextureUnit(0, texture) };
        mesh.draw(&frame, [0.0, 0.0, 0.0, 1.0])?;
        if f.index().is_multiple_of(SAMPLE) {
            let at = (f.index() / SAMPLE) as usize * FRAME_BYTES;
            gl_kit::buffer::copy(f.buffer(), archive, at, FRAME_BYTES)?;
        }
        (drawn, behind_sum) = (drawn + 1, behind_sum + f.frames_behind());
        behind_max = behind_max.max(f.frames_behind());
        open = open && gpu.present(&frame)?;
        Ok(())
    };

    let start = Instant::now();
    while frames.pushed() < FRAMES {
        frames.push_burst(&stream, &mut produce, &mut consume)?;
    }
    frames.flush(&mut consume)?; // GL gets the last burst too
    frames.wait_idle()?;
    let elapsed = start.elapsed().as_secs_f64();

    // The check: the sampled frames and the last frame drawn, against the CPU's gradient.
    let expected = |n: u64| -> Vec<u8> {
        (0..H)
            .flat_map(|y| (0..W).flat_map(move |x| [x as u8, y as u8, n as u8, 255]))
            .collect()
    };
    let archived = gl_kit::buffer::read::<u8>(archive, samples * FRAME_BYTES)?;
    let wrong_samples = (0..samples)
        .filter(|&i| {
            archived[i * FRAME_BYTES..(i + 1) * FRAME_BYTES] != expected(i as u64 * SAMPLE)[..]
        })
        .count();
    let last_ok = frame.read_rgba8()? == expected(FRAMES - 1);
    gpu.finish(&frame)?;
    drop(frames); // waits for both APIs, then frees the slots (the GL context is current)
    gl_kit::buffer::delete(archive);
    gl_kit::texture::delete(texture);
    gpu.ctx.check_drop_errors()?;

    let mean_behind = behind_sum as f64 / drawn.max(1) as f64;
    let summary = format!(
        "{drawn} frames of {W}x{H} streamed in bursts of {BURST} in {elapsed:.2} s \
         ({:.0} frames/s, CUDA writing and GL drawing every frame); GL drew each frame \
         {mean_behind:.1} frames (at most {behind_max}) after it was pushed; {} of {samples} \
         sampled frames and the last frame {} equal the CPU gradient",
        drawn as f64 / elapsed,
        samples - wrong_samples,
        if last_ok { "both" } else { "NOT" },
    );
    Ok(if wrong_samples == 0 && last_ok && drawn == FRAMES {
        Outcome::Ok(summary)
    } else {
        Outcome::Mismatch(summary)
    })
}
