//! Frame after frame, GL sees exactly what CUDA wrote: 1000 consecutive frames with changing
//! content on each frame path (PBO, surface, K frames per map, a ring of images in flight), each
//! read back by GL and compared with the CPU reference, with no CUDA synchronization between the
//! unmap and GL's read (the unmap's ordering is what is tested). Then the same check on
//! deliberately broken orderings, with a slow kernel, to show that it catches a race.
//!
//! Needs `--features egl` and a GPU; skips with a reason elsewhere (fails under
//! `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::{
    ImageTarget, LaunchConfig, RegisterFlags, RegisteredBuffer, RegisteredImage, Stream,
    StreamFlags,
};

/// Frame size: small enough that 1000 read-backs take well under a second of GPU time.
const W: usize = 320;
const H: usize = 180;
/// Consecutive frames per path.
const FRAMES: u32 = 1000;
/// How long the slow kernel of the race tests spins before writing: far longer than GL needs to
/// read the frame back, so an unordered read sees the old contents.
const SLOW_NS: u64 = 20_000_000;
/// Frames of each broken variant (each takes about `SLOW_NS`).
const BROKEN_FRAMES: u32 = 8;

/// The content of frame `f`: every frame differs from the previous one in every pixel (the seed
/// is XORed into each word).
fn seed_of(f: u32) -> u32 {
    f.wrapping_add(1).wrapping_mul(0x9E37_79B9)
}

/// The pixels (RGBA8 packed little-endian) that differ from the CPU reference of `seed`.
fn mismatches(got: &[u32], seed: u32) -> usize {
    assert_eq!(got.len(), W * H);
    got.iter()
        .enumerate()
        .filter(|&(i, &word)| word != pattern(i as u32, seed))
        .count()
}

/// Records frame `f` in `bad`, with its count of mismatching pixels, when `got` differs from the
/// frame's reference.
fn check_frame(bad: &mut Vec<(u32, usize)>, f: u32, got: &[u32]) {
    let n = mismatches(got, seed_of(f));
    if n != 0 {
        bad.push((f, n));
    }
}

/// Asserts that no frame of a path differed from its reference, naming the first bad ones.
fn assert_all_equal(path: &str, bad: &[(u32, usize)], frames: u32) {
    assert!(
        bad.is_empty(),
        "{path}: {} of {frames} frames differ from the CPU reference (frame, bad pixels): {:?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
    eprintln!("{path}: {frames} frames, every one equal to the CPU reference");
}

/// PBO path: map the buffer, `fill_u32`, unmap, `glTexSubImage2D` from it, read the texture.
#[test]
fn pbo_path_every_frame_equals_the_reference() {
    let Some(g) = gpu() else { return };
    let pbo = gl_buffer(W * H * 4, None);
    let tex = gl_texture_rgba8(W as i32, H as i32, 1);
    let mut res = RegisteredBuffer::register(&g.ctx, pbo, RegisterFlags::WRITE_DISCARD).unwrap();
    let fill = g.kernels.function("fill_u32").unwrap();
    let mut bad = Vec::new();
    for f in 0..FRAMES {
        let seed = seed_of(f);
        let mapped = res.map(&g.stream).unwrap();
        assert!(mapped.size() >= W * H * 4);
        // SAFETY: fill_u32(unsigned*, unsigned n, unsigned seed) writes n words, and the mapped
        // buffer holds W * H words; it stays mapped until the unmap below, on the same stream.
        unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), W * H, seed) }.unwrap();
        mapped.unmap().unwrap();
        upload_from_pbo(pbo, tex, W, H);
        check_frame(&mut bad, f, &read_texture_rgba8(tex, W, H, 0));
    }
    assert_all_equal("PBO path", &bad, FRAMES);
    drop(res);
    delete_texture(tex);
    delete_buffer(pbo);
}

/// Surface path: map the texture, `surface_fill_rgba8` through the cached surface, unmap, read.
#[test]
fn surface_path_every_frame_equals_the_reference() {
    let Some(g) = gpu() else { return };
    let (tex, mut res) = surface_texture_rgba8(&g.ctx, W, H);
    let fill = g.kernels.function("surface_fill_rgba8").unwrap();
    let mut bad = Vec::new();
    let mut handles = std::collections::HashSet::new();
    for f in 0..FRAMES {
        let seed = seed_of(f);
        let mapped = res.map(&g.stream).unwrap();
        let surface = mapped.surface().unwrap();
        handles.insert(surface.raw());
        // SAFETY: the surface covers the W x H RGBA8 texture and is used only while mapped (the
        // unmap below is on the same stream, after the kernel).
        unsafe { launch_image(&fill, &g.stream, surface, (W, H), seed) }.unwrap();
        mapped.unmap().unwrap();
        check_frame(&mut bad, f, &read_texture_rgba8(tex, W, H, 0));
    }
    assert_all_equal("surface path", &bad, FRAMES);
    eprintln!(
        "surface path: {} distinct surface object(s) over {FRAMES} maps",
        handles.len()
    );
    assert_eq!(res.cached_surfaces(), 1);
    drop(res);
    delete_texture(tex);
}

/// K frames per map: a 2D array texture of K layers, one surface per layer, K kernels under one
/// map, then GL reads all K layers.
#[test]
fn k_frames_per_map_every_frame_equals_the_reference() {
    const K: usize = 4;
    let Some(g) = gpu() else { return };
    let tex = gl_texture_array_rgba8(W, H, K, None);
    let mut res = register_for_surface(&g.ctx, tex, ImageTarget::Texture2DArray);
    let fill = g.kernels.function("surface_fill_rgba8").unwrap();
    let mut bad = Vec::new();
    for handoff in 0..FRAMES / K as u32 {
        let mapped = res.map(&g.stream).unwrap();
        // Every layer's surface at once: they may coexist within one mapping.
        let surfaces: Vec<_> = (0..K as u32)
            .map(|layer| mapped.surface_at(layer, 0).unwrap())
            .collect();
        for (layer, &surface) in surfaces.iter().enumerate() {
            let seed = seed_of(handoff * K as u32 + layer as u32);
            // SAFETY: each surface covers one W x H RGBA8 layer and is used only while mapped.
            unsafe { launch_image(&fill, &g.stream, surface, (W, H), seed) }.unwrap();
        }
        mapped.unmap().unwrap();
        let all = read_texture_array_rgba8(tex, W, H, K);
        for (layer, got) in all.chunks_exact(W * H).enumerate() {
            check_frame(&mut bad, handoff * K as u32 + layer as u32, got);
        }
    }
    assert_all_equal(&format!("K = {K} frames per map"), &bad, FRAMES);
    assert_eq!(res.cached_surfaces(), K);
    drop(res);
    delete_texture(tex);
}

/// Frames in flight: a ring of 3 textures, no `glFinish`, no fence and no stream sync per frame,
/// only the map/unmap ordering. GL copies each frame into a history array as it comes; every 16
/// frames the test reads the history and checks those 16 frames.
#[test]
fn ring_of_three_in_flight_every_frame_equals_the_reference() {
    const RING: usize = 3;
    const HISTORY: usize = 16;
    let Some(g) = gpu() else { return };
    let textures: Vec<u32> = (0..RING)
        .map(|_| gl_texture_rgba8(W as i32, H as i32, 1))
        .collect();
    let mut ring: Vec<RegisteredImage> = textures
        .iter()
        .map(|&t| register_for_surface(&g.ctx, t, ImageTarget::Texture2D))
        .collect();
    let history = gl_texture_array_rgba8(W, H, HISTORY, None);
    let fill = g.kernels.function("surface_fill_rgba8").unwrap();
    let mut bad = Vec::new();
    for f in 0..FRAMES {
        let slot = f as usize % RING;
        let mapped = ring[slot].map(&g.stream).unwrap();
        let surface = mapped.surface().unwrap();
        // SAFETY: the surface covers the slot's W x H RGBA8 texture, used only while mapped.
        unsafe { launch_image(&fill, &g.stream, surface, (W, H), seed_of(f)) }.unwrap();
        mapped.unmap().unwrap();
        // SAFETY: the GL context is current; both textures are live, RGBA8, W x H (per layer).
        unsafe {
            gl::CopyImageSubData(
                textures[slot],
                gl::TEXTURE_2D,
                0,
                0,
                0,
                0,
                history,
                gl::TEXTURE_2D_ARRAY,
                0,
                0,
                0,
                (f as usize % HISTORY) as i32,
                W as i32,
                H as i32,
                1,
            );
            gl::Flush();
        }
        let last = f + 1 == FRAMES;
        if f as usize % HISTORY == HISTORY - 1 || last {
            let all = read_texture_array_rgba8(history, W, H, HISTORY);
            let first = f - f % HISTORY as u32;
            for frame in first..=f {
                let layer = frame as usize % HISTORY;
                check_frame(&mut bad, frame, &all[layer * W * H..(layer + 1) * W * H]);
            }
        }
    }
    check_gl();
    assert_all_equal("ring of 3 in flight", &bad, FRAMES);
    drop(ring);
    delete_texture(history);
    for t in textures {
        delete_texture(t);
    }
}

/// One frame with the slow kernel: map on `map_stream`, launch on `kernel_stream`, then either
/// unmap and let GL read (the correct order when both streams are the same), or let GL read
/// before the unmap. Returns the mismatching pixels of GL's read-back.
fn slow_frame(
    g: &Gpu,
    res: &mut RegisteredImage,
    tex: u32,
    kernel_stream: &Stream,
    read_before_unmap: bool,
    seed: u32,
) -> usize {
    let slow = g.kernels.function("surface_fill_rgba8_slow").unwrap();
    let mapped = res.map(&g.stream).unwrap();
    let surface = mapped.surface().unwrap();
    // SAFETY: the surface covers the W x H RGBA8 texture. In the broken variants the kernel may
    // still write it after the unmap: the texture stays allocated (it is deleted only at the end
    // of the test, after `kernel_stream` is synchronized below), so the write lands in live
    // memory, and the test only reads what GL saw.
    unsafe {
        slow.launch(
            LaunchConfig::for_image(W as u32, H as u32),
            kernel_stream,
            (surface, W as i32, H as i32, seed, SLOW_NS),
        )
    }
    .unwrap();
    let got = if read_before_unmap {
        let got = read_texture_rgba8(tex, W, H, 0);
        mapped.unmap().unwrap();
        got
    } else {
        mapped.unmap().unwrap();
        read_texture_rgba8(tex, W, H, 0)
    };
    kernel_stream.synchronize().unwrap();
    g.stream.synchronize().unwrap();
    mismatches(&got, seed)
}

/// [`BROKEN_FRAMES`] slow frames ([`slow_frame`] with `kernel_stream` and `read_before_unmap`)
/// into a new surface texture, then [`assert_caught`]; `what` names the broken ordering.
fn assert_broken_ordering_caught(
    g: &Gpu,
    what: &str,
    kernel_stream: &Stream,
    read_before_unmap: bool,
) {
    let (tex, mut res) = surface_texture_rgba8(&g.ctx, W, H);
    let caught: Vec<usize> = (0..BROKEN_FRAMES)
        .map(|f| {
            slow_frame(
                g,
                &mut res,
                tex,
                kernel_stream,
                read_before_unmap,
                seed_of(f),
            )
        })
        .collect();
    eprintln!("{what}: bad pixels per frame {caught:?}");
    assert_caught(&caught);
    drop(res);
    delete_texture(tex);
}

/// Asserts that the check flagged every frame of a broken variant. With a 20 ms kernel and a
/// read-back that takes well under a millisecond, an unordered read sees the previous frame in
/// every frame (on an H200 every pixel of every frame differed).
fn assert_caught(bad_pixels: &[usize]) {
    let missed: Vec<usize> = (0..bad_pixels.len())
        .filter(|&f| bad_pixels[f] == 0)
        .collect();
    assert!(
        missed.is_empty(),
        "the broken ordering went unnoticed in frames {missed:?} of {}",
        bad_pixels.len()
    );
}

/// The control of the race tests: the slow kernel on the stream of the map and unmap. GL's read
/// after the unmap waits the 20 ms for it: every frame matches.
#[test]
fn slow_kernel_in_order_every_frame_equals_the_reference() {
    let Some(g) = gpu() else { return };
    let (tex, mut res) = surface_texture_rgba8(&g.ctx, W, H);
    let mut bad = Vec::new();
    for f in 0..BROKEN_FRAMES {
        let n = slow_frame(&g, &mut res, tex, &g.stream, false, seed_of(f));
        if n != 0 {
            bad.push((f, n));
        }
    }
    assert_all_equal("slow kernel, in order", &bad, BROKEN_FRAMES);
    drop(res);
    delete_texture(tex);
}

/// Broken ordering 1: the kernel runs on another stream than the map and unmap, so the unmap
/// does not wait for it and GL reads while CUDA still writes. The check must catch it.
#[test]
fn kernel_on_another_stream_is_caught() {
    let Some(g) = gpu() else { return };
    let other = Stream::new(&g.ctx, StreamFlags::NonBlocking).unwrap();
    assert_broken_ordering_caught(&g, "kernel on another stream", &other, false);
}

/// Broken ordering 2: GL reads the texture while it is still mapped (before the unmap), with the
/// kernel on the right stream. The check must catch it.
#[test]
fn gl_read_before_unmap_is_caught() {
    let Some(g) = gpu() else { return };
    assert_broken_ordering_caught(&g, "GL read before unmap", &g.stream, true);
}
