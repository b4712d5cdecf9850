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
use crate::cudarc_interop::event_tests::{
    assert_no_wait_left, assert_not_held_up, assert_recorded_after_reads,
    hold_private_after_next_work, read_event_of, rig, written_behind_a_spin,
};
use crate::egl::test_gl::on_gpu;
use crate::graphics::unordered_tests::Spinner;
use crate::result::test_ops::recording_ops;
use crate::video::{ColorSpace, VideoFormat, VideoLayout, convert_cpu};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};
use std::sync::Arc;

/// The call name of the run of a show's copy into the frame (`show_given`).
const COPY_RUN: &str = "cuMemcpy2DAsync (not called)";
/// The call name of the run of the colour map's kernel (`Mapper::draw`).
const KERNEL_RUN: &str = "cuLaunchKernel (not called)";

/// Has `show` read `src` on `s` while the private stream, right after the run named `run`,
/// waits for a kernel spinning on `t`; then a stream that waits for cudarc's read event of `src`
/// (a write of it on `u`) must finish while that kernel spins.
fn show_not_held_up<T: DeviceRepr>(
    src: &mut CudaSlice<T>,
    run: &'static str,
    spinner: &Spinner,
    (s, t, u): (&Arc<CudaStream>, &Arc<CudaStream>, &Arc<CudaStream>),
    what: &str,
    show: impl FnOnce(&CudaSlice<T>),
) {
    let (start, spun, ran) = hold_private_after_next_work(spinner, t, Some(run));
    show(src);
    assert!(
        ran.get(),
        "{what}: the fill's run ({run}) did not run the test's hook"
    );
    drop(src.device_ptr_mut(u));
    let probe = u.record_event(None).unwrap();
    assert_not_held_up(what, &probe, &spun, start);
    t.synchronize().unwrap();
    s.synchronize().unwrap();
}

#[test]
fn show_cudarc_records_cudarcs_read_event_after_its_fill_not_later_private_work() {
    let test = "show_cudarc_records_cudarcs_read_event_after_its_fill_not_later_private_work";
    let Some(_gl) = on_gpu(test) else { return };
    let (ctx, spinner, [s, t, u]) = rig();
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
    show_not_held_up(&mut src, COPY_RUN, &spinner, streams, what, |src| {
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
    show_not_held_up(&mut values, KERNEL_RUN, &spinner, streams, what, |src| {
        target.show_cudarc(src, r32f, &s).unwrap();
    });
    let want: Vec<u8> = field.iter().flat_map(|&v| map.color_of(v)).collect();
    assert_eq!(target.read_pixels().unwrap(), want, "R32F through viridis");

    ctx.finish_queued().unwrap();
    drop(target);
    drop((src, values));
    drop(spinner);
    ctx.check_drop_errors().unwrap();
}

/// As above for `show_video_cudarc`: cudarc's read event of the frame's slice follows the
/// conversion kernel, in its run, and not the work queued on the private stream after it.
#[test]
fn show_video_cudarc_records_cudarcs_read_event_after_its_conversion_not_later_private_work() {
    let test =
        "show_video_cudarc_records_cudarcs_read_event_after_its_conversion_not_later_private_work";
    let Some(_gl) = on_gpu(test) else { return };
    let (ctx, spinner, [s, t, u]) = rig();
    let layout = VideoLayout::packed((64, 16), VideoFormat::Nv12).unwrap();
    let rgba = Layout::packed(layout.size(), Format::Rgba8).unwrap();
    let (mut target, _) = DisplayTarget::new(&ctx, rgba, Some(Mode::Interop)).unwrap();
    let bytes: Vec<u8> = (0..layout.bytes()).map(|i| (i * 13 % 251) as u8).collect();
    let mut src = s.clone_htod(&bytes).unwrap();
    let color = ColorSpace::default();
    // Once before the hold: the conversion kernel loaded, so that its loading does not wait.
    target.show_video_cudarc(&src, layout, color, &s).unwrap();
    s.synchronize().unwrap();
    let what = "show_video_cudarc's read event (NV12, converted)";
    show_not_held_up(&mut src, KERNEL_RUN, &spinner, (&s, &t, &u), what, |src| {
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
    ctx.finish_queued().unwrap();
    drop(target);
    drop(src);
    drop(spinner);
    ctx.check_drop_errors().unwrap();
}

/// In each display mode, what `show_video_cudarc` queues (recorded in order by
/// `result::test_ops::recording_ops`, so no GPU timing decides the outcome): the conversion
/// kernel on cuda-gl's private stream, then cudarc's read event of the slice on that stream.
/// The staged and stream modes wait on the CPU for the frame's work, which hides a missing or
/// misplaced record from any test that watches the GPU; this one sees the record itself.
#[test]
fn show_video_cudarc_records_cudarcs_read_event_after_its_conversion_in_every_mode() {
    let test = "show_video_cudarc_records_cudarcs_read_event_after_its_conversion_in_every_mode";
    let Some(_gl) = on_gpu(test) else { return };
    let (ctx, spinner, [s, _, _]) = rig();
    let layout = VideoLayout::packed((64, 16), VideoFormat::Nv12).unwrap();
    let rgba = Layout::packed(layout.size(), Format::Rgba8).unwrap();
    let bytes: Vec<u8> = (0..layout.bytes()).map(|i| (i * 13 % 251) as u8).collect();
    let src = s.clone_htod(&bytes).unwrap();
    s.synchronize().unwrap();
    let color = ColorSpace::default();
    for mode in [Mode::Interop, Mode::Staged, Mode::Stream] {
        let (mut target, _) = DisplayTarget::new(&ctx, rgba, Some(mode)).unwrap();
        let (ptr, event) = read_event_of(&src, &s);
        let (shown, ops) = recording_ops(|| target.show_video_cudarc(&src, layout, color, &s));
        shown.unwrap();
        let what = format!("show_video_cudarc in {mode:?} mode");
        assert_recorded_after_reads(&what, &ops, (ptr, layout.bytes()), true, event, &s);
        ctx.finish_queued().unwrap();
        drop(target);
    }
    s.synchronize().unwrap();
    drop(src);
    drop(spinner);
    ctx.check_drop_errors().unwrap();
}

/// A frame refused for its size (too few bytes) is refused before cudarc is asked for the
/// slice's address, which would have queued on the caller's stream a wait for cudarc's last
/// write of the slice (here behind a kernel spinning on another stream) and left it there.
#[test]
fn show_video_cudarc_refuses_a_short_frame_before_cudarc_queues_a_wait() {
    let test = "show_video_cudarc_refuses_a_short_frame_before_cudarc_queues_a_wait";
    let Some(_gl) = on_gpu(test) else { return };
    let (ctx, spinner, [s, t, _]) = rig();
    let layout = VideoLayout::packed((64, 16), VideoFormat::Nv12).unwrap();
    let rgba = Layout::packed(layout.size(), Format::Rgba8).unwrap();
    let (mut target, _) = DisplayTarget::new(&ctx, rgba, Some(Mode::Interop)).unwrap();
    let mut short = s.alloc_zeros::<u8>(layout.bytes() - 1).unwrap();
    s.synchronize().unwrap();
    let (start, spun) = written_behind_a_spin(&spinner, &mut short, &t);
    let color = ColorSpace::default();
    let refused = target.show_video_cudarc(&short, layout, color, &s);
    assert!(
        matches!(
            refused,
            Err(crate::Error::Video(
                crate::video::VideoError::FrameTooSmall { .. }
            ))
        ),
        "{refused:?}"
    );
    assert_no_wait_left("show_video_cudarc's size refusal", &s, &spun, start);
    t.synchronize().unwrap();
    s.synchronize().unwrap();
    drop(target);
    drop(short);
    drop(spinner);
    ctx.check_drop_errors().unwrap();
}
