//! What a present promises (issue 42): only `Frame::present` shows a frame, so a frame dropped
//! unpresented leaves the texture as it was and records no error; and what `show` orders: the
//! GL commands issued after it returns see the texture holding what was shown, in interop mode
//! too, where the copy is only queued when it returns. Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::display::assert_pattern;
use crate::gpu::external::fill_words_slow;
use crate::gpu::*;
use cuda_gl::display::{DisplayTarget, Format, Layout, Mode};
use cuda_gl::{DeviceBuffer, Event, Stream, StreamFlags};

/// Every mode that runs on NVIDIA's GL.
const MODES: [Mode; 3] = [Mode::Interop, Mode::Staged, Mode::Stream];

/// Draws `seed`'s pattern into a frame's pixels, presents it and flushes.
fn present_pixels(g: &Gpu, target: &mut DisplayTarget, seed: u32) {
    let fill = g.kernels.function("fill_u32").unwrap();
    let (w, h) = target.size();
    let frame = target.frame(&g.stream).unwrap();
    let ptr = frame.pixels().unwrap().ptr();
    // SAFETY: the pixels hold `w * h` RGBA8 texels (one u32 each) of this context, written on
    // the frame's stream before the present below.
    unsafe { launch_words(&fill, &g.stream, ptr, (w * h) as usize, seed) }.unwrap();
    frame.present().unwrap();
    target.flush().unwrap();
}

/// Runs `test` on a target of `layout` in each of `modes`, then drops the target and checks
/// that no GL error is pending and no drop error was recorded.
fn on_targets(
    g: &Gpu,
    modes: &[Mode],
    layout: Layout,
    mut test: impl FnMut(Mode, &mut DisplayTarget),
) {
    for &mode in modes {
        let (mut target, _) = DisplayTarget::new(&g.ctx, layout, Some(mode)).unwrap();
        test(mode, &mut target);
        drop(target);
        g.check_no_errors();
    }
}

/// A frame drawn and dropped unpresented shows nothing: the texture keeps the frame presented
/// before it (in interop mode for a frame drawn into its pixels, which are uploaded only at the
/// present; in the copying modes for a frame drawn either way), and nothing is recorded as a
/// deferred error. The next presented frame shows.
#[test]
fn a_dropped_frame_leaves_the_texture_unchanged() {
    let Some(g) = gpu() else { return };
    let fill = g.kernels.function("fill_u32").unwrap();
    let fill_surface = g.kernels.function("surface_fill_rgba8").unwrap();
    let (w, h) = (301u32, 97u32);
    let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
    on_targets(&g, &MODES, layout, |mode, target| {
        present_pixels(&g, target, 31);
        let before = target_texels(target);
        assert_pattern(&before, 31, &format!("{mode}: the presented frame"));
        // Drawn into its pixels, then dropped.
        let frame = target.frame(&g.stream).unwrap();
        let ptr = frame.pixels().unwrap().ptr();
        // SAFETY: as in `present_pixels`; the frame is dropped after the launch.
        unsafe { launch_words(&fill, &g.stream, ptr, (w * h) as usize, 32) }.unwrap();
        drop(frame);
        if mode != Mode::Interop {
            // Drawn through its surface (the target's CUDA array), then dropped. (In interop
            // mode the surface is the texture's own, written in place: not asserted.)
            let frame = target.frame(&g.stream).unwrap();
            let surface = frame.surface().unwrap();
            // SAFETY: the surface covers the w x h RGBA8 frame, written on the frame's stream
            // before the frame is dropped.
            unsafe {
                launch_image(
                    &fill_surface,
                    &g.stream,
                    surface,
                    (w as usize, h as usize),
                    33,
                )
            }
            .unwrap();
            drop(frame);
        }
        // A frame that asks for nothing, dropped.
        drop(target.frame(&g.stream).unwrap());
        g.stream.synchronize().unwrap();
        target.flush().unwrap();
        assert!(
            target_texels(target) == before,
            "{mode}: a dropped frame changed the texture"
        );
        g.check_no_errors();
        present_pixels(&g, target, 34);
        assert_pattern(
            &target_texels(target),
            34,
            &format!("{mode}: the next frame"),
        );
    });
}

/// `show` behind a slow kernel on its stream: the texture, read by the first GL command issued
/// after `show` returns (`glGetTexImage`), holds what the kernel wrote. In interop mode `show`
/// returns with the copy still queued behind the kernel; the unmap on the stream orders it
/// before GL's later commands.
#[test]
fn a_show_is_seen_by_the_next_gl_command() {
    let Some(g) = gpu() else { return };
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let (w, h) = (640u32, 480u32);
    let words = (w * h) as usize;
    let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
    on_targets(&g, &MODES, layout, |mode, target| {
        let src = DeviceBuffer::<u32>::zeroed(&g.ctx, words).unwrap();
        for seed in [41, 42] {
            // SAFETY: `src` holds `words` words and outlives the kernel (dropped after the
            // stream is synchronized below).
            unsafe { fill_words_slow(&g, &fill, src.device_ptr(), words, seed, 20_000_000) }
                .unwrap();
            target.show(&src, layout, &g.stream).unwrap();
            assert_pattern(
                &target_texels(target),
                seed,
                &format!("{mode}: right after show"),
            );
        }
        g.stream.synchronize().unwrap();
        drop(src);
    });
}

/// A frame dropped unpresented in a copying mode is still ordered before the next frame, on
/// whatever stream: the next frame's kernel and copy wait for the dropped frame's kernel, which
/// could otherwise still be writing the canvas under them (a wrong picture, silently). Here
/// the dropped kernel spins 300 ms; once the next frame, on another stream, has been presented
/// and flushed, the dropped kernel must have ended. The target's drop then waits for it too.
#[test]
fn a_dropped_frames_kernel_is_ordered_before_the_next_frame() {
    let Some(g) = gpu() else { return };
    let slow = g.kernels.function("ext_fill_u32_slow").unwrap();
    let fill = g.kernels.function("fill_u32").unwrap();
    let other = Stream::new(&g.ctx, StreamFlags::NonBlocking).unwrap();
    let (w, h) = (640u32, 480u32);
    let words = (w * h) as usize;
    let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
    on_targets(&g, &[Mode::Staged, Mode::Stream], layout, |mode, target| {
        let frame = target.frame(&g.stream).unwrap();
        let ptr = frame.pixels().unwrap().ptr();
        // SAFETY: the pixels hold `words` words of this context, written on the frame's stream
        // (g.stream); the target outlives the kernel (its drop waits for it).
        unsafe { fill_words_slow(&g, &slow, ptr, words, 51, 300_000_000) }.unwrap();
        let mark = Event::new(&g.ctx, false).unwrap();
        mark.record(&g.stream).unwrap();
        drop(frame);
        let frame = target.frame(&other).unwrap();
        let ptr = frame.pixels().unwrap().ptr();
        // SAFETY: as above, on the frame's stream (`other`), before its present.
        unsafe { launch_words(&fill, &other, ptr, words, 52) }.unwrap();
        frame.present().unwrap();
        target.flush().unwrap();
        assert!(
            mark.query().unwrap(),
            "{mode}: the next frame was presented while the dropped frame's kernel still ran"
        );
        assert_pattern(
            &target_texels(target),
            52,
            &format!("{mode}: the next frame"),
        );
    });
}
