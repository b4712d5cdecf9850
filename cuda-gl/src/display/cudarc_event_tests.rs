//! GPU tests of where cudarc's read event of a slice that a display target shows
//! (`DisplayTarget::show_cudarc`, `show_video_cudarc`) is recorded: on cuda-gl's private stream
//! right after the work that reads the slice (the copy into the frame, the colour map's or the
//! video conversion's kernel), in that work's own run, as for the copies of `event_tests`. Work
//! that reaches the private stream once that run has released the lock (another thread's run,
//! here a wait for a kernel that spins) must not hold up cudarc's later writes and frees of the
//! slice.
//!
//! A show makes several runs (the frame's joins, maps and event records, the fill, the
//! present's), so the hook that queues the extra work picks the fill's run by its call name
//! (`after_next_work_of`). The target is forced into interop mode, the one whose show returns
//! with the fill only queued: a staged or stream-mode show waits on the CPU for the fill, and
//! so for the spinning kernel the hook queued behind it. A last test checks, in every mode, the
//! order of what `show_video_cudarc` queues (the conversion, then cudarc's record on the same
//! stream) from the crate's test-only record of it (`result::test_ops::recording_ops`). Needs the
//! `egl` and `cudarc` features and a GPU; skips with the reason elsewhere, and fails with
//! `CUDA_GL_REQUIRE_GPU=1`. Each of the three shows of the first tests spins for 4 s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::{ColorMap, DisplayTarget, Format, Layout, Mode, Palette};
use crate::cudarc_interop::event_tests::Rig;
use crate::cudarc_interop::event_tests::{
    assert_read_event_after_reads_in_every_mode, assert_read_not_held_up,
    assert_refused_before_cudarc_waits, end_test, rig,
};
use crate::video::{ColorSpace, VideoFormat, VideoLayout, convert_cpu};

/// The call name of the run of a show's copy into the frame (`show_given`).
const COPY_RUN: &str = "cuMemcpy2DAsync (not called)";
/// The call name of the run of the colour map's kernel (`Mapper::draw`).
const KERNEL_RUN: &str = "cuLaunchKernel (not called)";

/// The start of the tests of video frames: the [`rig`] (`None` where `test` cannot run), the
/// frames' layout (NV12, 64x16) and the RGBA8 layout of a target of their size.
fn nv12_rig(test: &str) -> Option<(Rig, VideoLayout, Layout)> {
    let rig = rig(test)?;
    let layout = VideoLayout::packed((64, 16), VideoFormat::Nv12).unwrap();
    let rgba = Layout::packed(layout.size(), Format::Rgba8).unwrap();
    Some((rig, layout, rgba))
}

#[test]
fn show_cudarc_records_cudarcs_read_event_after_its_fill_not_later_private_work() {
    let test = "show_cudarc_records_cudarcs_read_event_after_its_fill_not_later_private_work";
    let Some((_gl, ctx, spinner, [s, t, u])) = rig(test) else {
        return;
    };
    let (w, h) = (64u32, 16u32);
    let texels = (w * h) as usize;
    let rgba = Layout::packed((w, h), Format::Rgba8).unwrap();
    let (mut target, _) = DisplayTarget::new(&ctx, rgba, Some(Mode::Interop)).unwrap();
    let streams = (&s, &t, &u);

    // The copy branch: RGBA8 copied into the frame's pixels.
    let bytes: Vec<u8> = (0..texels * 4).map(|i| (i * 7 % 251) as u8).collect();
    let mut src = s.clone_htod(&bytes).unwrap();
    s.synchronize().unwrap();
    let what = "show_cudarc's read event (RGBA8, copied)";
    assert_read_not_held_up(&mut src, COPY_RUN, &spinner, streams, what, |src| {
        target.show_cudarc(src, rgba, &s).unwrap();
    });
    assert_eq!(target.read_pixels().unwrap(), bytes, "RGBA8 shown");

    // The kernel branch: R32F through a colour map.
    let map = ColorMap::new(Palette::Viridis, 0.0, 1.0).unwrap();
    target.set_color_map(Some(map)).unwrap();
    let field: Vec<f32> = (0..texels).map(|i| (i % 101) as f32 / 100.0).collect();
    let mut values = s.clone_htod(&field).unwrap();
    s.synchronize().unwrap();
    let r32f = Layout::packed((w, h), Format::R32F).unwrap();
    let what = "show_cudarc's read event (R32F, colour-mapped)";
    assert_read_not_held_up(&mut values, KERNEL_RUN, &spinner, streams, what, |src| {
        target.show_cudarc(src, r32f, &s).unwrap();
    });
    let want: Vec<u8> = field.iter().flat_map(|&v| map.color_of(v)).collect();
    assert_eq!(target.read_pixels().unwrap(), want, "R32F through viridis");

    end_test(&ctx, &[], || {
        ctx.finish_queued().unwrap();
        drop((target, (src, values), spinner));
    });
}

/// As above for `show_video_cudarc`: cudarc's read event of the frame's slice follows the
/// conversion kernel, in its run, and not the work queued on the private stream after it.
#[test]
fn show_video_cudarc_records_cudarcs_read_event_after_its_conversion_not_later_private_work() {
    let test =
        "show_video_cudarc_records_cudarcs_read_event_after_its_conversion_not_later_private_work";
    let Some(((_gl, ctx, spinner, [s, t, u]), layout, rgba)) = nv12_rig(test) else {
        return;
    };
    let (mut target, _) = DisplayTarget::new(&ctx, rgba, Some(Mode::Interop)).unwrap();
    let bytes: Vec<u8> = (0..layout.bytes()).map(|i| (i * 13 % 251) as u8).collect();
    let mut src = s.clone_htod(&bytes).unwrap();
    let color = ColorSpace::default();
    // Once before the hold: the conversion kernel loaded, so that its loading does not wait.
    target.show_video_cudarc(&src, layout, color, &s).unwrap();
    s.synchronize().unwrap();
    let what = "show_video_cudarc's read event (NV12, converted)";
    assert_read_not_held_up(&mut src, KERNEL_RUN, &spinner, (&s, &t, &u), what, |src| {
        target.show_video_cudarc(src, layout, color, &s).unwrap();
    });
    let want = convert_cpu(&bytes, &layout, color).unwrap();
    let got = target.read_pixels().unwrap();
    assert_eq!(got.len(), want.len(), "the target's bytes");
    let off = got.iter().zip(&want).filter(|(a, b)| a.abs_diff(**b) > 1);
    assert_eq!(
        off.count(),
        0,
        "NV12 shown within 1 of the CPU's conversion"
    );
    end_test(&ctx, &[], || {
        ctx.finish_queued().unwrap();
        drop((target, src, spinner));
    });
}

/// In each display mode, what `show_video_cudarc` queues (recorded in order by
/// `result::test_ops::recording_ops`, so no GPU timing decides the outcome): the conversion
/// kernel on cuda-gl's private stream, then cudarc's read event of the slice on that stream.
/// The staged and stream modes wait on the CPU for the frame's work, which hides a missing or
/// misplaced record from any test that watches the GPU; this one sees the record itself.
#[test]
fn show_video_cudarc_records_cudarcs_read_event_after_its_conversion_in_every_mode() {
    let test = "show_video_cudarc_records_cudarcs_read_event_after_its_conversion_in_every_mode";
    let Some(((_gl, ctx, spinner, [s, _, _]), layout, rgba)) = nv12_rig(test) else {
        return;
    };
    let bytes: Vec<u8> = (0..layout.bytes()).map(|i| (i * 13 % 251) as u8).collect();
    let src = s.clone_htod(&bytes).unwrap();
    s.synchronize().unwrap();
    let color = ColorSpace::default();
    assert_read_event_after_reads_in_every_mode(
        (&ctx, &s),
        ("show_video_cudarc", true),
        &src,
        |mode| DisplayTarget::new(&ctx, rgba, Some(mode)).unwrap().0,
        |target| target.show_video_cudarc(&src, layout, color, &s),
        drop,
    );
    end_test(&ctx, &[&s], || drop((src, spinner)));
}

/// A frame refused for its size (too few bytes) is refused before cudarc is asked for the
/// slice's address, which would have queued on the caller's stream a wait for cudarc's last
/// write of the slice (here behind a kernel spinning on another stream) and left it there.
#[test]
fn show_video_cudarc_refuses_a_short_frame_before_cudarc_queues_a_wait() {
    let test = "show_video_cudarc_refuses_a_short_frame_before_cudarc_queues_a_wait";
    let Some(((_gl, ctx, spinner, [s, t, _]), layout, rgba)) = nv12_rig(test) else {
        return;
    };
    let (mut target, _) = DisplayTarget::new(&ctx, rgba, Some(Mode::Interop)).unwrap();
    let what = "show_video_cudarc's size refusal";
    let short =
        assert_refused_before_cudarc_waits(&spinner, (&s, &t), layout.bytes() - 1, what, |short| {
            let refused = target.show_video_cudarc(short, layout, ColorSpace::default(), &s);
            assert!(
                matches!(
                    refused,
                    Err(crate::Error::Video(
                        crate::video::VideoError::FrameTooSmall { .. }
                    ))
                ),
                "{refused:?}"
            );
        });
    end_test(&ctx, &[], || drop((target, short, spinner)));
}
