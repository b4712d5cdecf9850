//! `SharedTexture::release_ahead`: frames in flight whose textures are handed to CUDA right
//! after their last use, before the hand-back of the frame being written. The release ahead
//! must keep every order a release at the write keeps: a read of frame n submitted before
//! the release ahead sees frame n, never the frame CUDA writes next into the same texture; a
//! write takes an image released ahead with no release of its own; a texture released ahead
//! and dropped hands its image back, so a clone of its `wgpu::Texture` still reads the last
//! frame. `CudaWrite::finish_then_release` puts the application's use of the frame between the
//! hand-back and the release ahead, in one submit, with the same orders.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason elsewhere.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::wgpu_interop::{
    assert_frame, filled_write, read_back, seed_of, setup, words, write_and_check, write_frame,
};
use crate::wgpu_read::{read_in, record_read, submit_read};
use crate::wgpu_texture::texture_2d;
use cuda_gl::Error;
use cuda_gl::wgpu_interop::WgpuError;
use cuda_gl::wgpu_interop::{SharedFormat, SharedTexture};

/// The ring's frame size: 2160p, where a copy takes long enough on the GPU for a write that is
/// not ordered after it to show.
const UHD: (u32, u32) = (3840, 2160);
/// Frames through the ring.
const FRAMES: u32 = 12;

/// Two textures round-robin, as the docs say to use them: frame n written into texture n % 2,
/// then a read of frame n - 1 submitted, texture (n - 1) % 2 released ahead, frame n handed
/// back; no CPU wait until the end. Every read holds its own frame.
#[test]
fn frames_in_flight_released_ahead_each_read_their_own_frame() {
    let Some(s) = setup() else { return };
    let mut ring = [UHD; 2].map(|size| s.shared(size, SharedFormat::Rgba8Unorm));
    let mut reads = Vec::new();
    for n in 0..FRAMES {
        let [a, b] = &mut ring;
        let (current, previous) = if n % 2 == 0 { (a, b) } else { (b, a) };
        // SAFETY: (1) of `filled_write` (`write`'s): until `finish`, the only submits are the read of the other
        // texture and its release ahead; this texture is read only after its `finish`.
        let write = unsafe { filled_write(&s, current, seed_of(n)) };
        if n > 0 {
            reads.push((n - 1, submit_read(&s.device, &s.queue, previous.texture())));
            // SAFETY: (1) of `release_ahead`: the texture is used next by the read of frame
            // n + 1, submitted after that frame's `finish`.
            unsafe { previous.release_ahead() }.unwrap();
        }
        write.finish().unwrap();
    }
    let last = &ring[((FRAMES - 1) % 2) as usize];
    reads.push((FRAMES - 1, submit_read(&s.device, &s.queue, last.texture())));
    for (n, read) in reads {
        let got: Vec<u32> = words(&read.bytes(&s.device)).collect();
        assert_frame(&got, seed_of(n), format!("the read of frame {n}"));
    }
    // Each texture: its first write's release, then one signal per write and one release
    // ahead per read, nothing more (6 writes each; texture 0 was released ahead once more,
    // after the read of frame 10).
    let values = ring.each_ref().map(SharedTexture::timeline_value);
    assert_eq!(
        values,
        [2 * 6 + 1, 2 * 6],
        "each write took the release made ahead"
    );
    drop(ring);
    s.ctx.check_drop_errors().unwrap();
}

/// A write takes an image released ahead with no release of its own (the semaphore moves by one
/// signal), a second release ahead changes nothing, and every frame is right.
#[test]
fn a_write_takes_an_image_released_ahead_with_no_release_of_its_own() {
    let Some(s) = setup() else { return };
    let mut shared = s.written((257, 129), seed_of(0));
    assert_eq!(shared.timeline_value(), 2);
    for f in 1..4u32 {
        // SAFETY: (1) of `release_ahead`: the texture is used next by the read after the write.
        unsafe { shared.release_ahead() }.unwrap();
        let released = shared.timeline_value();
        // SAFETY: as above.
        unsafe { shared.release_ahead() }.unwrap();
        assert_eq!(shared.timeline_value(), released, "a second release ahead");
        write_and_check(&s, &mut shared, seed_of(f), format!("frame {f}"));
        assert_eq!(shared.timeline_value(), released + 1, "frame {f}'s write");
    }
    s.ctx.check_drop_errors().unwrap();
}

/// A texture released ahead and dropped with no write after: its image is handed back to wgpu
/// (on the GPU), so a clone of the `wgpu::Texture` that the application kept reads the last
/// frame, with no drop error.
#[test]
fn a_texture_released_ahead_and_dropped_hands_its_image_back() {
    let Some(s) = setup() else { return };
    let mut shared = s.written((1001, 333), seed_of(5));
    let kept = shared.texture().clone();
    // SAFETY: (1) of `release_ahead`: the clone is used only after the drop hands the image
    // back.
    unsafe { shared.release_ahead() }.unwrap();
    drop(shared);
    assert_frame(
        &read_back(&s, &kept),
        seed_of(5),
        "the clone after the drop",
    );
    s.ctx.check_drop_errors().unwrap();
}

/// A texture released ahead, then destroyed by the application and dropped: no CUDA work was
/// queued on it, so the drop waits on the CPU for the release's signal before the semaphore
/// goes; it neither hangs nor records an error, and a texture made after it works.
#[test]
fn a_texture_released_ahead_destroyed_and_dropped_waits_for_its_release() {
    let Some(s) = setup() else { return };
    let make = || s.shared((640, 360), SharedFormat::Rgba8Unorm);
    let mut shared = make();
    write_frame(&s, &mut shared, seed_of(1));
    // SAFETY: (1) of `release_ahead`: the texture is destroyed, never used again.
    unsafe { shared.release_ahead() }.unwrap();
    shared.texture().destroy();
    drop(shared);
    s.ctx.check_drop_errors().unwrap();
    write_and_check(&s, &mut make(), seed_of(2), "a texture made after");
}

/// `CudaWrite::finish_then_release`, frame after frame on one texture: each frame's read goes in
/// its hand-back's submit, before the release ahead, and holds that frame (at 2160p, where a
/// kernel of the next frame not ordered after the read would show); each write takes the
/// release made ahead (the semaphore moves by the release and the signal, two a frame); the
/// texture left released ahead and dropped hands its image back, so a clone reads the last
/// frame.
#[test]
fn finish_then_release_reads_each_frame_in_its_hand_backs_submit() {
    let Some(s) = setup() else { return };
    let mut shared = s.shared(UHD, SharedFormat::Rgba8Unorm);
    let kept = shared.texture().clone();
    let mut reads = Vec::new();
    let mut values = Vec::new();
    for n in 0..FRAMES {
        // SAFETY: (1) of `filled_write` (`write`'s): the texture's only use is the read below (recorded through
        // the clone), submitted by `finish_then_release`, after the hand-back.
        let write = unsafe { filled_write(&s, &mut shared, seed_of(n)) };
        let (read, commands) = record_read(&s.device, &kept);
        // SAFETY: (1) of `finish_then_release`: the texture's next use is the next frame's
        // read, given to that frame's `finish_then_release`; the clone is read after the drop.
        unsafe { write.finish_then_release(commands) }.unwrap();
        reads.push((n, read));
        values.push(shared.timeline_value());
    }
    for (n, read) in reads {
        let got: Vec<u32> = words(&read.bytes(&s.device)).collect();
        assert_frame(&got, seed_of(n), format!("the read of frame {n}"));
    }
    // The first write releases at 1, CUDA signals 2, the release ahead is 3; each later write
    // takes the release made ahead (a write that released again would move the semaphore by
    // 3, one made at the write instead of ahead would leave even values).
    let want: Vec<u64> = (0..u64::from(FRAMES)).map(|n| 2 * n + 3).collect();
    assert_eq!(
        values, want,
        "each write took the release made ahead, after its hand-back and read"
    );
    drop(shared);
    assert_frame(
        &read_back(&s, &kept),
        seed_of(FRAMES - 1),
        "the clone after the drop",
    );
    s.ctx.check_drop_errors().unwrap();
}

/// A command buffer given to `finish_then_release` that copies into the texture (leaving it
/// `COPY_DST` in wgpu's tracker) and then reads it: the read holds what was copied in, and the
/// next write, which takes the release made after that copy, and its read hold CUDA's frame.
#[test]
fn finish_then_release_after_a_copy_into_the_texture() {
    let Some(s) = setup() else { return };
    let size = (640, 360);
    let source = s.written(size, seed_of(9));
    let mut shared = s.shared(size, SharedFormat::Rgba8Unorm);
    let kept = shared.texture().clone();
    // SAFETY: (1) of `filled_write` (`write`'s): the texture's only use is the command buffer given to
    // `finish_then_release` below.
    let write = unsafe { filled_write(&s, &mut shared, seed_of(1)) };
    let mut encoder = s.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_texture(
        source.texture().as_image_copy(),
        kept.as_image_copy(),
        kept.size(),
    );
    let read = read_in(&s.device, &mut encoder, &kept);
    // SAFETY: (1) of `finish_then_release`: the texture is used next by the next write's
    // `write_and_check`, after that write's hand-back; (2): the set-up's device.
    unsafe { write.finish_then_release(encoder.finish()) }.unwrap();
    let got: Vec<u32> = words(&read.bytes(&s.device)).collect();
    assert_frame(&got, seed_of(9), "the read after the copy into the texture");
    write_and_check(&s, &mut shared, seed_of(10), "the write after it");
    drop((shared, source));
    s.ctx.check_drop_errors().unwrap();
}

/// A command buffer that wgpu refuses (a copy from a texture the application destroyed): the
/// call returns `Refused`, the frame is handed back alone (a clone reads CUDA's frame), and the
/// next write releases the image itself and works.
#[test]
fn a_refused_command_buffer_hands_the_frame_back_alone() {
    let Some(s) = setup() else { return };
    let size = (640, 360);
    let gone = texture_2d(
        &s.device,
        size,
        wgpu::TextureFormat::Rgba8Unorm,
        wgpu::TextureUsages::COPY_SRC,
        "destroyed before the submit",
    );
    let mut shared = s.shared(size, SharedFormat::Rgba8Unorm);
    let kept = shared.texture().clone();
    // SAFETY: (1) of `filled_write` (`write`'s): the texture's only use is the command buffer below (refused),
    // then the reads after the hand-back.
    let write = unsafe { filled_write(&s, &mut shared, seed_of(3)) };
    let mut encoder = s.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_texture(gone.as_image_copy(), kept.as_image_copy(), kept.size());
    gone.destroy();
    // SAFETY: (1) of `finish_then_release`: refused, nothing is released; the texture is read
    // after the hand-back; (2): the set-up's device.
    let e = unsafe { write.finish_then_release(encoder.finish()) }.unwrap_err();
    assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
    assert_frame(
        &read_back(&s, &kept),
        seed_of(3),
        "the frame handed back alone",
    );
    write_and_check(&s, &mut shared, seed_of(4), "the next write");
    drop(shared);
    s.ctx.check_drop_errors().unwrap();
}
