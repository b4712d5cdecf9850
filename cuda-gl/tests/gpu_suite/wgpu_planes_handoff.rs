//! The wgpu video planes' hand-off in interop mode, which hands both planes' shared textures
//! between wgpu and CUDA together: an upload makes two wgpu submits, one fewer than one shared
//! texture's write and finish, as an interop target's frame does (counted by wgpu's submission
//! index); frames uploaded back to back each reach the textures byte for byte, read by a copy
//! that the application submits after each upload, while another thread submits on the same
//! queue all along (its submits may carry the hand-off's semaphore operations, which must not
//! break the order); and an upload into a texture the application destroyed is refused before
//! any hand-off.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason elsewhere.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::video::frames;
use super::wgpu_display::{fill_frame, target};
use super::wgpu_interop::{assert_frame, seed_of, setup, words, write_frame};
use super::wgpu_planes::{assert_bytes, assert_planes, planes_on, want_planes};
use crate::gpu::noise;
use crate::wgpu_read::{PendingRead, submit_read};
use cuda_gl::DeviceBuffer;
use cuda_gl::display::{Format, Mode};
use cuda_gl::video::{VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::{SharedFormat, SharedTexture, WgpuError};
use std::sync::atomic::{AtomicBool, Ordering};

/// The number of a wgpu submission. wgpu 30's `SubmissionIndex` keeps it private but prints it
/// (`SubmissionIndex { index: 7 }`): a change of that format fails here, by name.
fn number_of(index: &wgpu::SubmissionIndex) -> u64 {
    let text = format!("{index:?}");
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no submission number in {text:?}: wgpu's Debug changed"))
}

/// How many submits `f` makes on `queue` (which nothing else submits to meanwhile): the number
/// of an empty submit after it, less that of one before it, less one. (wgpu 30 also takes a
/// number when it flushes its pending writes for a buffer's map or `on_submitted_work_done`,
/// which no upload calls.)
fn submits_of(queue: &wgpu::Queue, f: impl FnOnce()) -> u64 {
    let before = number_of(&queue.submit([]));
    f();
    let after = number_of(&queue.submit([]));
    after - before - 1
}

/// A shared texture's hand-off (a kernel's write and finish) costs three wgpu submits: the
/// release's barriers, the release's signal, and the acquire. An upload of both planes and an
/// interop target's frame cost two: the acquire (with wgpu's copies or the blit after it) and
/// the release ahead of the next upload or frame after those, in one submit, then the release's
/// signal (they cost three before the release went into the acquire's submit, and six for the
/// planes when each had a hand-off of its own). The frames still arrive byte for byte.
#[test]
fn an_upload_of_both_planes_and_a_target_frame_cost_two_submits() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let counted = submits_of(&s.queue, || {
        s.queue.submit([]);
    });
    assert_eq!(counted, 1, "the count of one empty submit");
    let size = (64, 36);
    let mut shared =
        SharedTexture::new(&s.ctx, &s.device, &s.queue, size, SharedFormat::Rgba8Unorm).unwrap();
    write_frame(&s, &mut shared, seed_of(0));
    let one = submits_of(&s.queue, || write_frame(&s, &mut shared, seed_of(1)));
    println!("one shared texture's hand-off: {one} wgpu submits");
    assert_eq!(
        one, 3,
        "a shared texture's hand-off: release, its signal, acquire"
    );
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        let layout = VideoLayout::new(size, format, 96 * format.bytes_per_sample()).unwrap();
        let mut planes = planes_on(&s, wgpu, size, format, Some(Mode::Interop));
        let frames: Vec<_> = (0..2)
            .map(|k| {
                let bytes = noise(layout.bytes(), 0x9a12_0000 + k);
                let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
                (bytes, src)
            })
            .collect();
        // The first upload after `new` (which releases the new textures first), then one of a
        // frame like any other.
        planes.upload(&frames[0].1, layout, &s.stream).unwrap();
        let upload = submits_of(&s.queue, || {
            assert!(!planes.upload(&frames[1].1, layout, &s.stream).unwrap());
        });
        println!("{format:?}: an upload of both planes: {upload} wgpu submits");
        assert_eq!(
            upload, 2,
            "{format:?}: an upload of both planes: the acquire with the copies and the release, \
             then the release's signal"
        );
        let what = format!("{format:?}, the counted upload");
        assert_planes(wgpu, &planes, &want_planes(&frames[1].0, &layout), &what);
    }
    let mut t = target(&s, size, Format::Rgba8, Mode::Interop);
    fill_frame(&s, &mut t, 1).present().unwrap();
    let frame = submits_of(&s.queue, || fill_frame(&s, &mut t, 2).present().unwrap());
    println!("an interop target's frame: {frame} wgpu submits");
    assert_eq!(
        frame, 2,
        "a target's frame: the acquire with the blit and the release, then the release's signal"
    );
    let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
    assert_frame(&got, 2, "the counted frame");
    drop(t);
    s.ctx.check_drop_errors().unwrap();
}

/// Frames uploaded back to back per size and format.
const FRAMES: u64 = 16;

/// `FRAMES` uploads back to back, each followed at once by the application's copy of both
/// textures into buffers (no CPU wait between any of them), while another thread submits empty
/// submits on the same queue as fast as it can: each copy reads its own frame, byte for byte,
/// at 1920x1080 with padded rows and at 1001x333 with the chroma after a gap, NV12 and P010.
#[test]
fn frames_back_to_back_each_reach_the_copy_submitted_after_them() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        for (layout, _) in frames(format).into_iter().take(2) {
            let what = format!("{format:?} {:?}", layout.size());
            let mut planes = planes_on(&s, wgpu, layout.size(), format, Some(Mode::Interop));
            // All allocated before the first upload (an allocation may wait for the context).
            let sources: Vec<_> = (0..FRAMES)
                .map(|k| {
                    let bytes = noise(layout.bytes(), 0x9a13_0000 + k);
                    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
                    (bytes, src)
                })
                .collect();
            let stop = AtomicBool::new(false);
            let (reads, submitted) = std::thread::scope(|scope| {
                let other = scope.spawn(|| {
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) && n < 1_000_000 {
                        s.queue.submit([]);
                        n += 1;
                    }
                    n
                });
                let reads: Vec<[PendingRead; 2]> = sources
                    .iter()
                    .map(|(_, src)| {
                        planes.upload(src, layout, &s.stream).unwrap();
                        [planes.luma(), planes.chroma()].map(|t| submit_read(wgpu.0, wgpu.1, t))
                    })
                    .collect();
                stop.store(true, Ordering::Relaxed);
                (reads, other.join().unwrap())
            });
            for (k, (reads, (bytes, _))) in reads.into_iter().zip(&sources).enumerate() {
                let want = want_planes(bytes, &layout);
                for ((read, want), name) in reads.into_iter().zip(&want).zip(["luma", "chroma"]) {
                    let got = read.bytes(wgpu.0);
                    assert_bytes(
                        &got,
                        want,
                        &format!("{what} frame {k}: the copy of the {name}"),
                    );
                }
            }
            println!(
                "{what}: {FRAMES} frames back to back, each read by the copy after it; another \
                 thread submitted {submitted} times meanwhile"
            );
        }
    }
    s.ctx.check_drop_errors().unwrap();
}

/// The application destroys the chroma texture: the next upload is refused before any hand-off
/// (the upload checks both textures before it: wgpu 30 itself takes a copy into a destroyed
/// texture and refuses it only at the submit that carries it, after the hand-off's): no wgpu
/// submit, and the luma texture keeps the last frame. Planes of another size then take a frame
/// byte for byte, in an upload's two submits again.
#[test]
fn an_upload_into_a_destroyed_texture_is_refused_before_any_hand_off() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let layout = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
    let frames: Vec<_> = (0..2)
        .map(|k| {
            let bytes = noise(layout.bytes(), 0x9a14_0000 + k);
            (
                bytes.clone(),
                DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap(),
            )
        })
        .collect();
    let mut planes = planes_on(&s, wgpu, (64, 36), VideoFormat::Nv12, Some(Mode::Interop));
    planes.upload(&frames[0].1, layout, &s.stream).unwrap();
    let (luma, chroma) = (planes.luma().clone(), planes.chroma().clone());
    chroma.destroy();
    let mut refused = None;
    let submits = submits_of(&s.queue, || {
        refused = planes.upload(&frames[1].1, layout, &s.stream).err();
    });
    let e = refused.expect("an upload into a destroyed texture is refused");
    println!("an upload into a destroyed chroma texture: {e}; {submits} wgpu submits");
    assert!(
        matches!(e, cuda_gl::Error::Wgpu(WgpuError::Refused { .. })),
        "{e}"
    );
    assert_eq!(submits, 0, "the refused upload handed nothing over");
    let want = want_planes(&frames[0].0, &layout);
    let got = crate::wgpu_read::read_texture(wgpu.0, wgpu.1, &luma);
    assert_bytes(&got, &want[0], "the luma texture after the refused upload");

    let other = VideoLayout::packed((66, 38), VideoFormat::Nv12).unwrap();
    let bytes = noise(other.bytes(), 0x9a14_0066);
    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
    assert!(planes.upload(&src, other, &s.stream).unwrap());
    let again = noise(other.bytes(), 0x9a14_0067);
    let src = DeviceBuffer::from_slice(&s.ctx, &again).unwrap();
    let submits = submits_of(&s.queue, || {
        assert!(!planes.upload(&src, other, &s.stream).unwrap());
    });
    assert_eq!(
        submits, 2,
        "an upload of the new planes after their first: the acquire with the copies and the \
         release, then the release's signal"
    );
    assert_planes(
        wgpu,
        &planes,
        &want_planes(&again, &other),
        "66x38 after the refusal",
    );
    s.ctx.check_drop_errors().unwrap();
}
