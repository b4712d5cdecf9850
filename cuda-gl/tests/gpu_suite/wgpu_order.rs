//! What is ordered after what for the textures cuda-gl writes on wgpu (the rustdoc's claims
//! for `WgpuVideoPlanes` and `WgpuTarget`), in interop and in staged mode: a copy of the
//! application's, submitted after one upload (or show) and before the next, which follows with
//! no CPU wait, reads the first frame, at 3840x2160 over several rounds; and planes dropped
//! while their upload's work is still queued on the GPU leave the frame in the textures that
//! the application kept.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason elsewhere.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::wgpu_interop::{Setup, in_both_modes_on, setup};
use super::wgpu_planes::{assert_bytes, assert_textures, planes_on, want_planes};
use crate::gpu::{noise, spin_on};
use crate::wgpu_read::submit_read;
use cuda_gl::DeviceBuffer;
use cuda_gl::display::{Format, Layout, Mode};
use cuda_gl::video::{VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::WgpuTarget;
use std::time::Duration;

/// The frames' size: 2160p, where a copy takes long enough on the GPU for a missing order to
/// show.
const UHD: (u32, u32) = (3840, 2160);
/// Rounds of (frame A, copy, frame B) per mode and format.
const ROUNDS: u64 = 3;

/// The frames of [`ROUNDS`] rounds (two each) of `bytes` pseudo-random bytes, in host and in
/// device memory, all made before the first upload (an allocation may wait for the context).
fn frames_of(s: &Setup, bytes: usize, seed: u64) -> Vec<(Vec<u8>, DeviceBuffer<u8>)> {
    (0..2 * ROUNDS)
        .map(|k| {
            let host = noise(bytes, seed + k);
            let src = DeviceBuffer::from_slice(&s.ctx, &host).unwrap();
            (host, src)
        })
        .collect()
}

/// `upload(A)`; the application submits a copy of the luma and the chroma into buffers;
/// `upload(B)` at once; the buffers hold A: frame B's writes are ordered after the copy, on
/// the GPU (interop) or by wgpu's `write_texture` (staged).
#[test]
fn a_copy_submitted_between_two_uploads_reads_the_first_frame() {
    in_both_modes_on(setup(), |s, mode| {
        let wgpu = (&s.device, &s.queue);
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            let layout = VideoLayout::packed(UHD, format).unwrap();
            let mut planes = planes_on(s, wgpu, UHD, format, Some(mode));
            let frames = frames_of(s, layout.bytes(), 0x0d3e_0000);
            for (round, pair) in frames.chunks(2).enumerate() {
                let [(a, a_src), (_, b_src)] = pair else {
                    unreachable!()
                };
                let what = format!("{mode} {format:?} round {round}");
                planes.upload(a_src, layout, &s.stream).unwrap();
                let reads =
                    [planes.luma(), planes.chroma()].map(|t| submit_read(wgpu.0, wgpu.1, t));
                planes.upload(b_src, layout, &s.stream).unwrap();
                let want = want_planes(a, &layout);
                for ((read, want), name) in reads.into_iter().zip(&want).zip(["luma", "chroma"]) {
                    let got = read.bytes(wgpu.0);
                    assert_bytes(&got, want, &format!("{what}: the copy of the {name}"));
                }
            }
            // And the last frame is there.
            let (last, _) = &frames[frames.len() - 1];
            let textures = [planes.luma(), planes.chroma()];
            assert_textures(
                wgpu,
                textures,
                &want_planes(last, &layout),
                &format!("{mode} {format:?}, the last frame"),
            );
            println!("{mode} {format:?}: {ROUNDS} rounds of 2160p, each copy read its frame");
        }
    });
}

/// The same for the wgpu display target: `show(A)`, the application's copy of the texture,
/// `show(B)` at once: the copy reads A.
#[test]
fn a_copy_submitted_between_two_shows_reads_the_first_frame() {
    in_both_modes_on(setup(), |s, mode| {
        let layout = Layout::packed(UHD, Format::Rgba8).unwrap();
        let (mut target, report) =
            WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, Some(mode)).unwrap();
        println!("{report}");
        let frames = frames_of(s, layout.bytes(), 0x0d3f_0000);
        for (round, pair) in frames.chunks(2).enumerate() {
            let [(a, a_src), (_, b_src)] = pair else {
                unreachable!()
            };
            target.show(a_src, layout, &s.stream).unwrap();
            let read = submit_read(&s.device, &s.queue, target.texture());
            target.show(b_src, layout, &s.stream).unwrap();
            let got = read.bytes(&s.device);
            assert_bytes(
                &got,
                a,
                &format!("{mode} round {round}: the copy of the texture"),
            );
        }
        let (last, _) = &frames[frames.len() - 1];
        assert_bytes(
            &target.read_pixels().unwrap(),
            last,
            &format!("{mode}: the last frame"),
        );
        println!("{mode}: {ROUNDS} rounds of 2160p, each copy read its frame");
    });
}

/// Planes dropped right after an upload whose copies still wait on the GPU behind a slow
/// kernel (interop: wgpu's copies wait for CUDA's signal on the GPU): the textures the
/// application kept hold the frame, and nothing the upload used was freed under it.
#[test]
fn planes_dropped_while_their_upload_is_in_flight_leave_the_frame() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let slow = DeviceBuffer::<u32>::zeroed(&s.ctx, 256).unwrap();
    for mode in [Mode::Interop, Mode::Staged] {
        for (k, format) in [VideoFormat::Nv12, VideoFormat::P010]
            .into_iter()
            .enumerate()
        {
            let layout = VideoLayout::packed(UHD, format).unwrap();
            let bytes = noise(layout.bytes(), 0xd209 + k as u64);
            let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
            let mut planes = planes_on(&s, wgpu, UHD, format, Some(mode));
            let (luma, chroma) = (planes.luma().clone(), planes.chroma().clone());
            // The upload's copies queue behind 300 ms of kernel on the same stream.
            spin_on(&s.kernels, &slow, &s.stream, Duration::from_millis(300));
            planes.upload(&src, layout, &s.stream).unwrap();
            drop(planes);
            let what = format!("{mode} {format:?}: the textures kept after the drop");
            assert_textures(wgpu, [&luma, &chroma], &want_planes(&bytes, &layout), &what);
            s.stream.synchronize().unwrap();
            println!("{what}: the frame");
        }
    }
    s.ctx.check_drop_errors().unwrap();
}
