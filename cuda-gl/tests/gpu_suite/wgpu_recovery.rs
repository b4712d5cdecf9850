//! A hand-back to wgpu that wgpu refuses, and a write guard that is leaked, while unrelated CUDA
//! work runs (a kernel of one block spinning on a stream of its own, which no hand-off is ordered
//! with): a refused hand-back is recovered without waiting on the CPU for any CUDA work and leaks
//! nothing; a leaked guard's recovery waits for the context at most the wait limit, in the next
//! write and in the drop (of the texture, and of an interop target whose frame was forgotten),
//! which records the timeout; a `WgpuVideoPlanes` texture destroyed by another thread at any
//! moment of an upload costs the uploads after it no wait; and an interop target's texture
//! destroyed mid-present is refused without a wait, and a resize then shows frames again.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason elsewhere.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::wgpu_display::{fill_frame, target};
use super::wgpu_interop::{
    Setup, assert_drop_gives_up_behind, assert_frame, seed_of, setup, words, write_and_check,
    write_frame,
};
use super::wgpu_planes::{assert_planes, planes_on, want_planes};
use crate::gpu::{Busy, assert_gave_up_in_drop, noise, spin_past_the_limit};
use crate::harness::{capture_log, device_used, mib, take_log};
use cuda_gl::display::{Format, Mode};
use cuda_gl::video::{VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::{SharedFormat, SharedTexture, WgpuError};
use cuda_gl::{DeviceBuffer, Error};
use std::time::{Duration, Instant};

/// `finish` after the application destroyed the texture: CUDA's signal is queued, wgpu refuses
/// the acquire. The drop then neither waits for the unrelated kernel (it synchronized the whole
/// context) nor leaks the 64 MiB image (its failed re-acquire leaked everything).
#[test]
fn a_refused_hand_back_is_dropped_without_waiting_for_other_cuda_work_or_leaking() {
    let Some(s) = setup() else { return };
    let busy = Busy::new(&s.ctx);
    let settle = || {
        s.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("wgpu finishes");
        s.ctx.synchronize().unwrap();
    };
    settle();
    let before = device_used(&s.ctx) as i64;
    let size = (4096, 4096);
    let mut shared =
        SharedTexture::new(&s.ctx, &s.device, &s.queue, size, SharedFormat::Rgba8Unorm).unwrap();
    write_frame(&s, &mut shared, seed_of(1));
    let clone = shared.texture().clone();
    busy.start(&s.kernels, Duration::from_secs(3));
    // SAFETY: no wgpu command uses the texture while CUDA holds it (it is destroyed instead).
    let write = unsafe { shared.write(&s.stream) }.unwrap();
    clone.destroy();
    let e = write.finish().unwrap_err();
    assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
    let start = Instant::now();
    drop(shared);
    let took = start.elapsed();
    let running = busy.running();
    println!(
        "the drop after a refused hand-back took {took:?}; the unrelated kernel ran on: {running}"
    );
    assert!(
        took < Duration::from_millis(1500) && running,
        "the drop took {took:?}: it waited for the unrelated kernel"
    );
    busy.wait();
    drop(clone);
    settle();
    let grew = device_used(&s.ctx) as i64 - before;
    println!("device memory after the drop: {}", mib(grew));
    assert!(
        grew < 16 << 20,
        "the 64 MiB image leaked: device memory grew by {}",
        mib(grew)
    );
    s.ctx.take_drop_errors();
}

/// A shared texture with one frame, then a guard leaked while `busy` spins past the wait limit.
fn leaked_while_busy(s: &Setup, busy: &Busy) -> SharedTexture {
    let size = (129, 65);
    let mut shared =
        SharedTexture::new(&s.ctx, &s.device, &s.queue, size, SharedFormat::Rgba8Unorm).unwrap();
    write_frame(s, &mut shared, seed_of(1));
    busy.start(&s.kernels, spin_past_the_limit());
    // SAFETY: no submit uses the texture until a write, or the drop, recovers it.
    std::mem::forget(unsafe { shared.write(&s.stream) }.unwrap());
    shared
}

/// A guard leaked while a kernel spinning past the wait limit runs elsewhere in the context: the
/// next write gives up after the wait limit with `Error::Timeout` (it waited for the kernel,
/// without a limit), and once the kernel has ended, a write recovers the image and its frame
/// reaches wgpu.
#[test]
fn a_leaked_guards_recovery_in_the_next_write_gives_up_after_ten_seconds() {
    let Some(s) = setup() else { return };
    let busy = Busy::new(&s.ctx);
    let mut shared = leaked_while_busy(&s, &busy);
    // SAFETY: as above.
    busy.assert_gives_up("the write after a leaked guard", || unsafe {
        shared.write(&s.stream).map(drop)
    });
    busy.wait();
    write_and_check(&s, &mut shared, seed_of(7), "the frame after the recovery");
    s.ctx.check_drop_errors().unwrap();
}

/// What a shared texture's drop records when its recovery of a leaked guard gives up.
const RECOVERY_WAITS: &str = "vkWaitSemaphores, cuCtxSynchronize or cuStreamQuery";

/// As above, in the drop: it gives up after the wait limit, leaks the image and semaphore rather
/// than free them under CUDA's work, and records the timeout for `check_drop_errors` (it only
/// logged it before).
#[test]
fn a_leaked_guards_recovery_in_the_drop_gives_up_after_ten_seconds() {
    assert_drop_gives_up_behind(setup, leaked_while_busy, &[RECOVERY_WAITS]);
}

/// A `WgpuTarget` in interop mode (on Vulkan) whose frame was forgotten while a kernel spinning
/// past the wait limit runs elsewhere in the context: the drop gives up after the wait limit (the
/// target's wait for CUDA's last hand-off, then at once the shared texture's own recovery, behind
/// the same kernel), leaks the frame's pixels and the shared image rather than free them under
/// CUDA's work, and records both timeouts for `check_drop_errors` (it only logged them before).
#[test]
fn a_forgotten_interop_frames_drop_gives_up_after_ten_seconds_and_records_it() {
    let Some(s) = setup() else { return };
    let busy = Busy::new(&s.ctx);
    let mut t = target(&s, (129, 65), Format::Rgba8, Mode::Interop);
    fill_frame(&s, &mut t, 3).present().unwrap();
    busy.start(&s.kernels, spin_past_the_limit());
    std::mem::forget(fill_frame(&s, &mut t, 5));
    busy.assert_drop_gives_up("the target's drop", t);
    busy.wait();
    let target_waits = "cuEventQuery, vkWaitSemaphores, cuCtxSynchronize or cuStreamQuery";
    assert_gave_up_in_drop(&s.ctx, &[target_waits, RECOVERY_WAITS]);
}

/// Rounds of the race per mode.
const RACE_ROUNDS: usize = 30;

/// A thread that destroys (a clone of) `texture` after a random delay of up to 1.5 ms, drawn
/// from `random` (xorshift, advanced here): the race tests' destroyer.
fn destroy_soon(texture: &wgpu::Texture, random: &mut u64) -> std::thread::JoinHandle<()> {
    *random ^= *random << 13;
    *random ^= *random >> 7;
    *random ^= *random << 17;
    let (texture, delay) = (texture.clone(), Duration::from_micros(*random % 1500));
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        texture.destroy();
    })
}

/// Another thread destroys (a clone of) the luma texture at a random moment while uploads of
/// one size run: an upload is refused at the latest two uploads later, and each upload,
/// refused or not, returns with no wait for the unrelated kernel. In interop mode wgpu 30
/// refuses a copy into a destroyed texture when it is recorded (the upload records it before
/// its hand-off, which then does not happen), or, for a texture destroyed after that, at the
/// submit that carries it with the planes' hand-back: the hand-back is submitted again alone at
/// once (it used to stay CUDA's, and the next upload synchronized the context: 396 ms of the
/// kernel's 400 on an H200, driver 580.159.04, 2026-12-06). A frame of another size then makes
/// new textures with its frame. The log's count of those hand-backs says how many refusals took
/// the second path.
#[test]
fn a_texture_destroyed_mid_upload_costs_the_next_uploads_no_wait() {
    let Some(s) = setup() else { return };
    capture_log();
    let busy = Busy::new(&s.ctx);
    let wgpu = (&s.device, &s.queue);
    let sizes = [(64, 36), (66, 38)];
    let layouts = sizes.map(|size| VideoLayout::packed(size, VideoFormat::Nv12).unwrap());
    // Two frames of each size, all allocated before any kernel spins.
    let frames: Vec<[(Vec<u8>, DeviceBuffer<u8>); 2]> = layouts
        .iter()
        .enumerate()
        .map(|(i, layout)| {
            [0, 1].map(|k| {
                let bytes = noise(layout.bytes(), 0x5ace_0000 + (2 * i + k) as u64);
                let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
                (bytes, src)
            })
        })
        .collect();
    let mut random = 0x9e37_79b9_7f4a_7c15u64;
    for mode in [Mode::Interop, Mode::Staged] {
        take_log();
        let mut planes = planes_on(&s, wgpu, sizes[1], VideoFormat::Nv12, Some(mode));
        for round in 0..RACE_ROUNDS {
            let (i, layout) = (round % 2, layouts[round % 2]);
            let what = format!("{mode} round {round}");
            // New textures for this round (the last round's luma is destroyed); the old ones
            // go with the read-back's wait, before the kernel spins: CUDA frees may wait for
            // the context.
            assert!(planes.upload(&frames[i][0].1, layout, &s.stream).unwrap());
            assert_planes(wgpu, &planes, &want_planes(&frames[i][0].0, &layout), &what);
            busy.start(&s.kernels, Duration::from_millis(400));
            let destroyer = destroy_soon(planes.luma(), &mut random);
            let (mut uploads, mut refused) = (0, 0);
            while refused < 3 {
                let start = Instant::now();
                let result = planes.upload(&frames[i][uploads % 2].1, layout, &s.stream);
                let took = start.elapsed();
                assert!(
                    took < Duration::from_millis(150),
                    "{what}: upload {uploads} took {took:?}: it waited for the unrelated kernel"
                );
                match result {
                    Ok(new) => assert!(!new && refused == 0, "{what}: upload {uploads}"),
                    Err(Error::Wgpu(WgpuError::Refused { .. })) => refused += 1,
                    Err(e) => panic!("{what}: upload {uploads}: {e}"),
                }
                uploads += 1;
                assert!(uploads < 100_000, "{what}: no upload was refused");
            }
            destroyer.join().unwrap();
            assert!(
                busy.running(),
                "{what}: the kernel ended before the uploads did"
            );
            busy.wait();
        }
        let again = take_log()
            .iter()
            .filter(|l| l.contains("again alone"))
            .count();
        println!("{mode}: {RACE_ROUNDS} rounds; hand-backs refused with the copy: {again}");
    }
    s.ctx.check_drop_errors().unwrap();
}

/// Another thread destroys (a clone of) an interop target's texture at a random moment while
/// frames are presented: a present is refused at the latest two presents later, none waits
/// (the refusal comes from wgpu, not from a CPU wait for CUDA), and a resize then shows frames
/// again. A texture destroyed after the present's check is refused only at the submit that
/// carries the blit, with the shared image's acquire and its release to CUDA ahead of the next
/// frame (`After::UseThenRelease`): the acquire is then submitted again alone, and the image is
/// released by the next frame's write. The log's count of those hand-backs says how many
/// refusals took that path; every frame after the resize must still be the one drawn.
#[test]
fn a_target_texture_destroyed_mid_present_is_refused_and_a_resize_shows_frames_again() {
    let Some(s) = setup() else { return };
    capture_log();
    take_log();
    let mut t = target(&s, (64, 36), Format::Rgba8, Mode::Interop);
    let mut random = 0x2545_f491_4f6c_dd1du64;
    let sizes = [(64, 36), (66, 38)];
    for round in 0..RACE_ROUNDS {
        let what = format!("round {round}");
        let destroyer = destroy_soon(t.texture(), &mut random);
        let (mut presents, mut refused) = (0u32, 0);
        while refused < 2 {
            let start = Instant::now();
            let result = fill_frame(&s, &mut t, presents + 1).present();
            let took = start.elapsed();
            assert!(
                took < Duration::from_millis(150),
                "{what}: present {presents} took {took:?}"
            );
            match result {
                Ok(()) => assert_eq!(refused, 0, "{what}: a present after a refusal was shown"),
                Err(Error::Wgpu(WgpuError::Refused { .. })) => refused += 1,
                Err(e) => panic!("{what}: present {presents}: {e}"),
            }
            presents += 1;
            assert!(presents < 100_000, "{what}: no present was refused");
        }
        destroyer.join().unwrap();
        let (w, h) = sizes[(round + 1) % 2];
        t.resize(w, h).unwrap();
        for seed in [1000 + round as u32, 2000 + round as u32] {
            fill_frame(&s, &mut t, seed).present().unwrap();
            let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
            assert_frame(&got, seed, format!("{what}: frame {seed} after the resize"));
        }
    }
    let again = take_log()
        .iter()
        .filter(|l| l.contains("again alone"))
        .count();
    println!("{RACE_ROUNDS} rounds; hand-backs refused with the blit: {again}");
    drop(t);
    s.ctx.check_drop_errors().unwrap();
}
