//! Long runs on a real GPU: soak loops that must not leak device memory or host memory, frame
//! integrity checked from GL, and two threads with their own GL contexts doing interop at once.
//!
//! The defaults are the full run's sizes; each can be lowered for a quick run:
//!
//! | variable | default | what |
//! | --- | --- | --- |
//! | `CUDA_GL_SOAK_MAP_CYCLES` | 100000 | map/write/unmap cycles on one buffer |
//! | `CUDA_GL_SOAK_REGISTER_CYCLES` | 10000 | register/map/write/unmap/unregister cycles |
//! | `CUDA_GL_INTEGRITY_FRAMES` | 10000 | frames written by CUDA and checked from GL |
//! | `CUDA_GL_CONCURRENCY_SECS` | 10 | how long the two threads run |
//!
//! Limits (from the issue): device memory in use (`cuMemGetInfo`) at most 1 MiB above where it
//! was after warm-up, host RSS (`VmRSS`) at most 5 MiB above, no driver error, zero
//! mismatches. Less memory in use at the end than after warm-up passes: it is not a leak.
//!
//! A binary of its own, not a module of `gpu_suite`: the limits are on the whole process's RSS
//! and on the GPU's memory in use, which tests of other modules running beside these (`cargo
//! test` runs tests in parallel) or before them (memory they leave cached, records that the
//! streaming tests' log capture keeps) would move.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod gpu;
mod harness;

use cuda_gl::egl::HeadlessContext;
use cuda_gl::{Context, ImageTarget, Module, RegisterFlags, RegisteredBuffer, Stream, StreamFlags};
use gpu::*;
use harness::*;
use std::time::{Duration, Instant};

const MIB: i64 = 1024 * 1024;
const DEVICE_LIMIT: i64 = MIB;
const RSS_LIMIT: i64 = 5 * MIB;

fn gl_finish() {
    // SAFETY: a GL context is current on this thread.
    unsafe { gl::Finish() };
}

/// Device memory and RSS at one moment, after the GPU and GL are idle.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    device: i64,
    rss: i64,
}

fn snapshot(g: &Gpu) -> Snapshot {
    g.stream.synchronize().unwrap();
    gl_finish();
    Snapshot {
        device: device_used(&g.ctx) as i64,
        rss: rss_bytes() as i64,
    }
}

/// Prints the leak figures of a soak loop and asserts the limits. `peak` is the largest device
/// and RSS growth seen at the intermediate samples.
fn check_leaks(what: &str, start: Snapshot, end: Snapshot, peak: Snapshot) {
    let device = end.device - start.device;
    let rss = end.rss - start.rss;
    eprintln!(
        "{what}: device memory in use {} (after warm-up {:.1} MiB, end {:.1} MiB, largest \
         sample {}); host RSS {} (after warm-up {:.1} MiB, end {:.1} MiB, largest sample {})",
        mib(device),
        start.device as f64 / MIB as f64,
        end.device as f64 / MIB as f64,
        mib(peak.device),
        mib(rss),
        start.rss as f64 / MIB as f64,
        end.rss as f64 / MIB as f64,
        mib(peak.rss),
    );
    // A leak is growth; less memory in use at the end than after warm-up (the GL driver
    // trimming its caches) is not one.
    assert!(
        device <= DEVICE_LIMIT,
        "{what}: device memory grew by {} (limit 1 MiB)",
        mib(device)
    );
    assert!(
        rss <= RSS_LIMIT,
        "{what}: host RSS grew by {} (limit 5 MiB)",
        mib(rss)
    );
}

fn max_growth(peak: &mut Snapshot, start: Snapshot, now: Snapshot) {
    peak.device = peak.device.max(now.device - start.device);
    peak.rss = peak.rss.max(now.rss - start.rss);
}

#[test]
fn soak_map_write_unmap_cycles() {
    let Some(g) = gpu() else { return };
    let cycles = env_or("CUDA_GL_SOAK_MAP_CYCLES", 100_000);
    let warmup = (cycles / 10).min(1000);
    const WORDS: usize = 64 * 1024;
    let (name, mut res) = registered_buffer(&g.ctx, WORDS * 4, RegisterFlags::WRITE_DISCARD);
    let fill = g.kernels.function("fill_u32").unwrap();
    let (mut start, mut peak) = (snapshot(&g), Snapshot { device: 0, rss: 0 });
    let mut timer = Instant::now();
    let (mut verified, mut mismatches) = (0u64, 0u64);
    for i in 0..cycles {
        if i == warmup {
            start = snapshot(&g);
            timer = Instant::now();
        }
        let seed = i as u32;
        let mapped = res.map(&g.stream).unwrap();
        // SAFETY: the mapped buffer holds WORDS words; the unmap is ordered after the launch.
        unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), WORDS, seed) }.unwrap();
        mapped.unmap().unwrap();
        if (i + 1).is_multiple_of(1000) || i + 1 == cycles {
            // The unmap orders the kernel before GL's read: no stream synchronize needed.
            if read_gl_buffer(name, WORDS) != pattern_words(WORDS, seed) {
                mismatches += 1;
            }
            verified += 1;
            if i >= warmup {
                max_growth(&mut peak, start, snapshot(&g));
            }
        }
    }
    let end = snapshot(&g);
    let secs = timer.elapsed().as_secs_f64();
    let measured = cycles - warmup;
    res.unregister().unwrap();
    delete_buffer(name);
    g.ctx.check_drop_errors().unwrap();
    eprintln!(
        "soak map: {cycles} map/write/unmap cycles on a {} KiB buffer ({warmup} warm-up), \
         {measured} measured in {secs:.2} s ({:.1} us/cycle); {verified} read-backs from GL, \
         {mismatches} mismatches; no driver error, no drop error",
        WORDS * 4 / 1024,
        secs * 1e6 / measured.max(1) as f64,
    );
    assert_eq!(mismatches, 0, "stale or wrong data read back from GL");
    check_leaks("soak map", start, end, peak);
}

/// Buffer sizes (bytes) and texture sizes the register soak cycles through: 7 and 6 entries,
/// so every (buffer, texture) pair of sizes recurs every 84 cycles.
const BUFFER_BYTES: [usize; 7] = [
    4096,
    65_540,
    1 << 20,
    3 * (1 << 20) + 12,
    256 * 1024,
    16 * 1024,
    2 << 20,
];
const TEXTURE_SIZES: [(usize, usize); 6] = [
    (16, 16),
    (640, 360),
    (1024, 768),
    (333, 97),
    (1280, 720),
    (64, 1024),
];

#[test]
fn soak_register_cycles_over_changing_sizes() {
    let Some(g) = gpu() else { return };
    let cycles = env_or("CUDA_GL_SOAK_REGISTER_CYCLES", 10_000);
    let warmup = (cycles / 10).min(504);
    let fill = g.kernels.function("fill_u32").unwrap();
    let surface_fill = g.kernels.function("surface_fill_rgba8").unwrap();
    let (mut start, mut peak) = (snapshot(&g), Snapshot { device: 0, rss: 0 });
    let mut timer = Instant::now();
    let (mut verified, mut mismatches, mut buffers, mut textures) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..cycles {
        if i == warmup {
            start = snapshot(&g);
            timer = Instant::now();
        }
        let seed = (i as u32).wrapping_mul(7919);
        let verify = i.is_multiple_of(97) || i + 1 == cycles;
        if i.is_multiple_of(2) {
            let bytes = BUFFER_BYTES[(i as usize / 2) % BUFFER_BYTES.len()];
            let words = bytes / 4;
            let (name, mut res) = registered_buffer(&g.ctx, bytes, RegisterFlags::WRITE_DISCARD);
            let mapped = res.map(&g.stream).unwrap();
            assert_eq!(mapped.size(), bytes);
            // SAFETY: `words` words are mapped until the unmap, ordered after the launch.
            unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), words, seed) }.unwrap();
            mapped.unmap().unwrap();
            res.unregister().unwrap();
            if verify {
                mismatches += u64::from(read_gl_buffer(name, words) != pattern_words(words, seed));
                verified += 1;
            }
            delete_buffer(name);
            buffers += 1;
        } else {
            let (w, h) = TEXTURE_SIZES[(i as usize / 2) % TEXTURE_SIZES.len()];
            let (tex, mut res) = surface_texture_rgba8(&g.ctx, w, h);
            let mapped = res.map(&g.stream).unwrap();
            let array = mapped.array(0, 0).unwrap();
            assert_eq!((array.width(), array.height()), (w, h));
            let surface = mapped.surface().unwrap();
            // SAFETY: the surface covers the w x h texture and lives until the unmap.
            unsafe { launch_image(&surface_fill, &g.stream, surface, (w, h), seed) }.unwrap();
            mapped.unmap().unwrap();
            res.unregister().unwrap();
            if verify {
                mismatches +=
                    u64::from(read_texture_rgba8(tex, w, h, 0) != pattern_words(w * h, seed));
                verified += 1;
            }
            delete_texture(tex);
            textures += 1;
        }
        if i >= warmup && (i + 1).is_multiple_of(1000) {
            max_growth(&mut peak, start, snapshot(&g));
        }
    }
    let end = snapshot(&g);
    let secs = timer.elapsed().as_secs_f64();
    let measured = cycles - warmup;
    g.ctx.check_drop_errors().unwrap();
    eprintln!(
        "soak register: {cycles} create/register/map/write/unmap/unregister/delete cycles \
         ({buffers} buffers of 4 KiB..3 MiB, {textures} RGBA8 textures of 16x16..1280x720; \
         {warmup} warm-up), {measured} measured in {secs:.2} s ({:.1} us/cycle); {verified} \
         read-backs from GL, {mismatches} mismatches; no driver error, no drop error",
        secs * 1e6 / measured.max(1) as f64,
    );
    assert_eq!(mismatches, 0, "wrong data read back from GL");
    check_leaks("soak register", start, end, peak);
}

#[test]
fn integrity_frames_checked_from_gl() {
    let Some(g) = gpu() else { return };
    let frames = env_or("CUDA_GL_INTEGRITY_FRAMES", 10_000);
    const W: usize = 256;
    const H: usize = 256;
    const TEXELS: usize = W * H;
    // Two pixel buffers in turn (as a renderer double-buffers), one texture they are uploaded to.
    let pbos = [gl_buffer(TEXELS * 4, None), gl_buffer(TEXELS * 4, None)];
    let tex = gl_texture_rgba8(W as i32, H as i32, 1);
    let mut regs: Vec<RegisteredBuffer> = pbos
        .iter()
        .map(|&p| RegisteredBuffer::register(&g.ctx, p, RegisterFlags::WRITE_DISCARD).unwrap())
        .collect();
    let kernel = g.kernels.function("fill_frame_with_checksum").unwrap();
    let start = snapshot(&g);
    let timer = Instant::now();
    let (mut bad_checksum, mut bad_content) = (0u64, 0u64);
    for f in 0..frames {
        let k = (f % 2) as usize;
        let frame = f as u32;
        let mapped = regs[k].map(&g.stream).unwrap();
        // SAFETY: the mapped buffer holds TEXELS words; the unmap is ordered after the launch.
        unsafe { launch_words(&kernel, &g.stream, mapped.device_ptr(), TEXELS, frame) }.unwrap();
        mapped.unmap().unwrap();
        // GL uploads the pixel buffer into the texture and reads the texture back. The unmap
        // alone orders the kernel before this GL work.
        upload_from_pbo(pbos[k], tex, W, H);
        let texels = read_texture_rgba8(tex, W, H, 0);
        let (body, sum) = texels.split_at(TEXELS - 1);
        let recomputed = body.iter().fold(0u32, |a, &w| a.wrapping_add(w));
        if sum[0] != recomputed {
            bad_checksum += 1;
        }
        if body
            .iter()
            .enumerate()
            .any(|(i, &w)| w != pattern(i as u32, frame))
        {
            bad_content += 1;
        }
    }
    let secs = timer.elapsed().as_secs_f64();
    let end = snapshot(&g);
    drop(regs);
    g.ctx.check_drop_errors().unwrap();
    pbos.into_iter().for_each(delete_buffer);
    delete_texture(tex);
    eprintln!(
        "integrity: {frames} frames of {W}x{H} RGBA8 (kernel-written content and checksum, PBO \
         -> texture -> glGetTexImage) verified in {secs:.2} s ({:.1} us/frame): {bad_checksum} \
         checksum mismatches, {bad_content} content mismatches; device memory {}, host RSS {}",
        secs * 1e6 / frames.max(1) as f64,
        mib(end.device - start.device),
        mib(end.rss - start.rss),
    );
    assert_eq!((bad_checksum, bad_content), (0, 0));
}

/// What one interop thread did.
#[derive(Debug, Default)]
struct ThreadReport {
    buffer_rounds: u64,
    texture_rounds: u64,
    mismatches: u64,
}

/// One thread of the concurrency test: its own GL context, CUDA stream and resources, writing
/// values that carry its id and checking every one of them from GL until `deadline`.
fn interop_thread(
    id: u32,
    device: cuda_gl::Device,
    barrier: &std::sync::Barrier,
    run_for: Duration,
) -> ThreadReport {
    const WORDS: usize = 64 * 1024;
    const W: usize = 200;
    const H: usize = 120;
    let gl = HeadlessContext::for_cuda_device(&device).unwrap();
    gpu::load_gl_crate(&gl);
    let ctx = Context::new(&device).unwrap();
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
    let kernels = Module::from_ptx(&ctx, TEST_PTX).unwrap();
    let fill = kernels.function("fill_u32").unwrap();
    let surface_fill = kernels.function("surface_fill_rgba8").unwrap();
    let buf = gl_buffer(WORDS * 4, None);
    let tex = gl_texture_rgba8(W as i32, H as i32, 1);
    let mut rb = RegisteredBuffer::register(&ctx, buf, RegisterFlags::WRITE_DISCARD).unwrap();
    let mut ri = register_for_surface(&ctx, tex, ImageTarget::Texture2D);
    let mut report = ThreadReport::default();
    barrier.wait();
    let deadline = Instant::now() + run_for;
    let mut round = 0u32;
    while Instant::now() < deadline {
        round += 1;
        // The top bit says which thread wrote the value: cross-talk cannot match.
        let seed = (id << 31) | (round & 0x7fff_ffff);
        if round.is_multiple_of(2) {
            let mapped = rb.map(&stream).unwrap();
            // SAFETY: WORDS words mapped until the unmap, ordered after the launch.
            unsafe { launch_words(&fill, &stream, mapped.device_ptr(), WORDS, seed) }.unwrap();
            mapped.unmap().unwrap();
            report.mismatches +=
                u64::from(read_gl_buffer(buf, WORDS) != pattern_words(WORDS, seed));
            report.buffer_rounds += 1;
        } else {
            let mapped = ri.map(&stream).unwrap();
            let surface = mapped.surface().unwrap();
            // SAFETY: the surface covers the W x H texture and lives until the unmap.
            unsafe { launch_image(&surface_fill, &stream, surface, (W, H), seed) }.unwrap();
            mapped.unmap().unwrap();
            report.mismatches +=
                u64::from(read_texture_rgba8(tex, W, H, 0) != pattern_words(W * H, seed));
            report.texture_rounds += 1;
        }
    }
    rb.unregister().unwrap();
    ri.unregister().unwrap();
    ctx.synchronize().unwrap();
    delete_buffer(buf);
    delete_texture(tex);
    drop((fill, surface_fill, kernels, stream, ctx));
    drop(gl);
    report
}

#[test]
fn two_threads_with_own_gl_contexts_and_streams() {
    let Some(g) = gpu() else { return };
    let secs = env_or("CUDA_GL_CONCURRENCY_SECS", 10);
    let device = g.device;
    let barrier = std::sync::Barrier::new(2);
    let run_for = Duration::from_secs(secs);
    let timer = Instant::now();
    let reports: Vec<ThreadReport> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2u32)
            .map(|id| {
                let barrier = &barrier;
                s.spawn(move || interop_thread(id, device, barrier, run_for))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = timer.elapsed().as_secs_f64();
    g.ctx.check_drop_errors().unwrap();
    for (id, r) in reports.iter().enumerate() {
        eprintln!(
            "concurrency: thread {id}: {} rounds ({} buffer, {} surface) in {secs} s, {} \
             mismatches",
            r.buffer_rounds + r.texture_rounds,
            r.buffer_rounds,
            r.texture_rounds,
            r.mismatches
        );
    }
    eprintln!("concurrency: both threads done after {wall:.2} s; no error, no cross-talk");
    for (id, r) in reports.iter().enumerate() {
        assert_eq!(
            r.mismatches, 0,
            "thread {id} read back data it did not write"
        );
        assert!(
            r.buffer_rounds > 0 && r.texture_rounds > 0,
            "thread {id} did no work"
        );
    }
}
