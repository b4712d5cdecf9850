//! A GPU test of where cudarc's read event of a slice that video planes upload
//! (`VideoPlanes::upload_cudarc`) is recorded in interop mode: on cuda-gl's private stream right
//! after the copies, in their run (the map, the copies and the unmap), as for the display's
//! shows (`display::cudarc_event_tests`). Work that reaches the private stream once that run
//! has released the lock (another thread's run, here a wait for a kernel that spins) must not
//! hold up cudarc's later writes and frees of the slice.
//!
//! That test runs in interop mode only: its upload returns with the copies only queued, while
//! the staged and stream modes wait on the CPU for their copies, so that a hold behind them
//! would hold the upload itself. In every mode, a second test checks the order of what the
//! upload queues (the copies, then cudarc's record on the same stream) from the crate's
//! test-only record of the copies, kernels and cudarc records queued (`result::test_ops`), which
//! no GPU timing affects. Needs the `egl` and `cudarc` features and a GPU; skips with the
//! reason elsewhere, and fails with `CUDA_GL_REQUIRE_GPU=1`. The first spins for 4 s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::VideoPlanes;
use super::gl_write::tests::plane_texture;
use super::stream::tests::before_next_copy_run;
use crate::Context;
use crate::Error;
use crate::cudarc_interop::event_tests::{
    assert_read_event_after_reads_in_every_mode, assert_read_not_held_up,
    assert_refused_before_cudarc_waits, end_test, rig,
};
use crate::glapi::GlOwner;
use crate::graphics::unordered_tests::{begin_capture, end_capture};
use crate::mode_choice::Mode;
use crate::video::{VideoError, VideoFormat, VideoLayout};
use cudarc::driver::CudaStream;
use std::sync::Arc;
use std::time::Duration;

/// The call name of the interop upload's run (`copy_planes`).
const PLANES_RUN: &str = "cuGraphicsMapResources (not called)";

/// NV12 planes of `layout`'s size in `mode`, into two textures made for them in the GL context
/// current on this thread: the planes and the textures' names (for [`drop_planes`]).
fn nv12_planes(ctx: &Arc<Context>, layout: &VideoLayout, mode: Mode) -> (VideoPlanes, [u32; 2]) {
    let (_, fns) = GlOwner::current("the test's plane textures").unwrap();
    let textures = [
        plane_texture(fns, gl::R8, layout.size()),
        plane_texture(fns, gl::RG8, layout.chroma_size()),
    ];
    let (planes, _) = VideoPlanes::new(ctx, textures, VideoFormat::Nv12, Some(mode)).unwrap();
    (planes, textures)
}

/// The frames' layout: NV12, 64x16.
fn nv12() -> VideoLayout {
    VideoLayout::packed((64, 16), VideoFormat::Nv12).unwrap()
}

/// Drops `planes`, then deletes their `textures` (of [`nv12_planes`]).
fn drop_planes(planes: VideoPlanes, textures: [u32; 2]) {
    drop(planes);
    let (_, fns) = GlOwner::current("the test's plane textures").unwrap();
    // SAFETY: the GL context is current; the planes that held the textures are dropped.
    unsafe { (fns.delete_textures)(2, textures.as_ptr()) };
}

/// The end of a test of planes ([`end_test`]): waits for `streams`, for cuda-gl's queued work,
/// drops the planes (then their textures) and `rest`, and checks that no drop failed.
fn end_planes_test<R>(
    ctx: &Arc<Context>,
    streams: &[&Arc<CudaStream>],
    (planes, textures): (VideoPlanes, [u32; 2]),
    rest: R,
) {
    end_test(ctx, streams, || {
        ctx.finish_queued().unwrap();
        drop_planes(planes, textures);
        drop(rest);
    });
}

/// A frame's bytes, a pattern.
fn frame_bytes(layout: &VideoLayout) -> Vec<u8> {
    (0..layout.bytes()).map(|i| (i * 11 % 253) as u8).collect()
}

#[test]
fn upload_cudarc_records_cudarcs_read_event_after_its_copies_not_later_private_work() {
    let test = "upload_cudarc_records_cudarcs_read_event_after_its_copies_not_later_private_work";
    let Some((_gl, ctx, spinner, [s, t, u])) = rig(test) else {
        return;
    };
    let layout = nv12();
    let (mut planes, textures) = nv12_planes(&ctx, &layout, Mode::Interop);
    let mut src = s.clone_htod(&frame_bytes(&layout)).unwrap();
    // Once before the hold: nothing done only at a first upload waits for the spinning kernel.
    planes.upload_cudarc(&src, layout, &s).unwrap();
    s.synchronize().unwrap();

    let what = "upload_cudarc's read event";
    assert_read_not_held_up(&mut src, PLANES_RUN, &spinner, (&s, &t, &u), what, |src| {
        planes.upload_cudarc(src, layout, &s).unwrap();
    });
    end_planes_test(&ctx, &[], (planes, textures), (src, spinner));
}

/// In each planes mode, what `upload_cudarc` queues (recorded in order by
/// `result::test_ops::recording_ops`, so no GPU timing decides the outcome): the copies out of
/// the slice on cuda-gl's private stream, then cudarc's read event of the slice on that stream.
/// The staged and stream modes wait on the CPU for their copies, which hides a missing or
/// misplaced record from any test that watches the GPU; this one sees the record itself.
#[test]
fn upload_cudarc_records_cudarcs_read_event_after_its_last_read_in_every_mode() {
    let test = "upload_cudarc_records_cudarcs_read_event_after_its_last_read_in_every_mode";
    let Some((_gl, ctx, spinner, [s, _, _])) = rig(test) else {
        return;
    };
    let layout = nv12();
    let src = s.clone_htod(&frame_bytes(&layout)).unwrap();
    s.synchronize().unwrap();
    assert_read_event_after_reads_in_every_mode(
        (&ctx, &s),
        ("upload_cudarc", false),
        &src,
        |mode| nv12_planes(&ctx, &layout, mode),
        |(planes, _)| planes.upload_cudarc(&src, layout, &s),
        |(planes, textures)| drop_planes(planes, textures),
    );
    end_test(&ctx, &[&s], || drop((src, spinner)));
}

/// A capture of the caller's stream begun between the stream mode's ring write and its copies'
/// run (another thread's, here a hook's) refuses the upload with nothing queued: the slot goes
/// back to idle, unrecorded. Before, the ring's guard was dropped with the slot marked as being
/// written: its record, refused by the capture, was a drop error, and the next upload of that
/// slot synchronized the whole CUDA context, waiting for a kernel of another stream (here one
/// spinning for 4 s) that the upload has nothing to do with.
#[test]
fn a_stream_upload_refused_by_a_capture_after_its_ring_write_leaves_the_slot_idle() {
    let test = "a_stream_upload_refused_by_a_capture_after_its_ring_write_leaves_the_slot_idle";
    let Some((_gl, ctx, spinner, [s, t, _])) = rig(test) else {
        return;
    };
    let layout = nv12();
    let (mut planes, textures) = nv12_planes(&ctx, &layout, Mode::Stream);
    let src = s.clone_htod(&frame_bytes(&layout)).unwrap();
    s.synchronize().unwrap();

    let capturing = s.clone();
    before_next_copy_run(move || begin_capture(&capturing));
    let refused = planes.upload_cudarc(&src, layout, &s);
    end_capture(&s);
    assert!(
        matches!(refused, Err(Error::StreamCapturing { .. })),
        "the upload under a capture begun after the ring's write: {refused:?}"
    );
    let dropped = ctx.take_drop_errors();
    assert!(dropped.is_empty(), "drop errors: {dropped:?}");

    // The refused upload's slot is the next one's: idle, it waits for nothing of `t`'s.
    spinner.spin_for(&t, Duration::from_secs(4));
    let spun = t.record_event(None).unwrap();
    planes.upload_cudarc(&src, layout, &s).unwrap();
    assert!(
        !spun.is_complete(),
        "the upload after the refused one waited for a kernel of another stream (a context \
         synchronize: its slot was left marked as being written)"
    );
    end_planes_test(&ctx, &[&t, &s], (planes, textures), (src, spinner));
}

/// A frame refused for its size (too few bytes, another size than the textures') is refused
/// before cudarc is asked for the slice's address, which would have queued on the caller's
/// stream a wait for cudarc's last write of the slice (here behind a kernel spinning on
/// another stream) and left it there.
#[test]
fn upload_cudarc_refuses_a_frame_for_its_size_before_cudarc_queues_a_wait() {
    let test = "upload_cudarc_refuses_a_frame_for_its_size_before_cudarc_queues_a_wait";
    let Some((_gl, ctx, spinner, [s, t, _])) = rig(test) else {
        return;
    };
    let layout = nv12();
    let other = VideoLayout::packed((32, 16), VideoFormat::Nv12).unwrap();
    let (mut planes, textures) = nv12_planes(&ctx, &layout, Mode::Interop);
    let what = "upload_cudarc's size refusals";
    let short =
        assert_refused_before_cudarc_waits(&spinner, (&s, &t), layout.bytes() - 1, what, |short| {
            let refused = planes.upload_cudarc(short, layout, &s);
            assert!(
                matches!(refused, Err(Error::Video(VideoError::FrameTooSmall { .. }))),
                "{refused:?}"
            );
            let refused = planes.upload_cudarc(short, other, &s);
            assert!(
                matches!(refused, Err(Error::Video(VideoError::PlaneTexture { .. }))),
                "{refused:?}"
            );
        });
    end_test(&ctx, &[], || {
        drop_planes(planes, textures);
        drop((short, spinner));
    });
}
