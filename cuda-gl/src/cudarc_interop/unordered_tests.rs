//! GPU tests of what cuda-gl's copies leave in flight when the ordering with the caller's
//! stream is lost (`crate::queue`, step 4, and cudarc's event records): the memory they read or
//! write must not be freed, handed out again or unmapped under them.
//!
//! Each begins a capture of the map's stream where another thread may begin it at any moment
//! (cudarc's `begin_capture` being safe), while a kernel before the copy on that stream spins
//! past the wait limit (see `crate::graphics::unordered_tests`, whose helpers these share).
//! Crate-internal: only crate code can begin the capture at exactly those points. Need the
//! `egl` and `cudarc` features and a GPU; skip with the reason elsewhere, and fail with
//! `CUDA_GL_REQUIRE_GPU=1`. Each spins past two wait limits (about 23 s with the default 10 s
//! limit); run them with `--test-threads=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::event_tests::cudarc_streams;
use crate::egl::test_gl::on_gpu;
use crate::graphics::unordered_tests::{
    Spinner, assert_recovers_after_the_refused_unmap, assert_refused, begin_capture, cu_read,
    delete_gl_buffer, delete_gl_texture, end_capture, gl_buffer, gl_texture, memset_mapping,
    memset_setup,
};
use crate::queue::tests::after_next_work;
use crate::{Context, Error, ImageTarget, RegisterFlags, RegisteredBuffer, RegisteredImage};
use cudarc::driver::{CudaStream, DevicePtr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Texels of the tests' textures: none is 0x5A5A5A5A, the pattern the first test writes.
fn texels(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| 0xC0DE_0000 | i).collect()
}

/// The copy's error: a timeout, its run having given up on it (the capture began before its
/// join).
fn assert_gave_up(what: &str, got: &crate::Result<()>) {
    assert!(
        matches!(got, Err(Error::Timeout { .. })),
        "{what} behind the spinning kernel with a capture begun before its join: expected \
         Error::Timeout, got {got:?}"
    );
}

/// Has `copy` (`what`) queued behind a kernel spinning on `s` while a capture of `s` begins
/// right after its run's work, where another thread may begin it; the copy must give up
/// ([`assert_gave_up`]). Returns when the kernel began and how long it spins, with the capture
/// ended.
fn copy_under_a_capture(
    spinner: &Spinner,
    s: &Arc<CudaStream>,
    what: &str,
    copy: impl FnOnce() -> crate::Result<()>,
) -> (Instant, Duration) {
    let start = Instant::now();
    let spin = spinner.spin(s);
    let capturing = s.clone();
    after_next_work(move |_| begin_capture(&capturing));
    let copied = copy();
    assert_gave_up(what, &copied);
    end_capture(s);
    (start, spin)
}

/// `copy_to_cudarc` into a slice of another stream `t`, its run left unordered by a capture:
/// the slice's free (on `t`, which the spinning kernel does not hold up) must wait for the copy,
/// through cudarc's write event. Before, that event was recorded on the capturing map's stream
/// (taken by the capture), so the free ran at once, the pool handed the memory out again on `t`,
/// and the copy later wrote the texture into the new allocation.
#[test]
fn a_cudarc_slice_is_freed_only_after_a_copy_into_it_that_a_capture_left_unordered() {
    let test = "a_cudarc_slice_is_freed_only_after_a_copy_into_it_that_a_capture_left_unordered";
    let Some(_gl) = on_gpu(test) else { return };
    let (cu, [s, t]) = cudarc_streams();
    let ctx = Context::from_cudarc(&cu).unwrap();
    let spinner = Spinner::new(&ctx);
    let (w, h) = (64, 16);
    let words = texels(w * h);
    let texture = gl_texture(w, h, &words);
    let mut image =
        RegisteredImage::register(&ctx, texture, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap();
    let mut dst = t.alloc_zeros::<u32>(w * h).unwrap();
    let freed = dst.device_ptr(&t).0;
    t.synchronize().unwrap();
    let mapped = image.map(&s).unwrap();
    let array = mapped.array(0, 0).unwrap();
    let (start, spin) = copy_under_a_capture(&spinner, &s, "copy_to_cudarc", || {
        array.copy_to_cudarc(&mut dst, &s)
    });
    drop(dst);
    // What `t` runs next: after the free, which must wait for the copy, behind the kernel.
    let after_free = t.record_event(None).unwrap();
    let again = t.alloc_zeros::<u32>(w * h).unwrap();
    let reused = again.device_ptr(&t).0;
    // SAFETY: `again` is `w * h` words of `t`'s context, written on `t` in its order.
    unsafe {
        crate::result::mem::memset_d8_async(reused, 0x5A, w * h * 4, t.cu_stream().cast()).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let at = start.elapsed();
    let free_done = after_free.is_complete();
    assert!(
        at < spin,
        "the test was too slow to check anything: {at:?} after the kernel began to spin for \
         {spin:?}"
    );
    assert!(
        !free_done,
        "the cudarc slice was freed {at:?} after the kernel began to spin for {spin:?}, while \
         cuda-gl's copy into it, queued after the kernel, had not run"
    );
    s.synchronize().unwrap();
    ctx.finish_queued().unwrap();
    let got = t.clone_dtoh(&again).unwrap();
    if reused == freed {
        assert!(
            got.iter().all(|&v| v == 0x5A5A_5A5A),
            "the copy wrote the texture into memory cudarc had handed out again"
        );
    } else {
        eprintln!("{test}: the pool did not hand the slice's memory out again on its stream");
    }
    mapped.unmap().unwrap();
    drop(again);
    image.unregister().unwrap();
    drop(spinner);
    ctx.check_drop_errors().unwrap();
    delete_gl_texture(texture);
}

/// A copy between two `Context`s on one CUDA context (a texture of one, a buffer of the other,
/// mapped on one stream), its run left unordered by a capture: the buffer's unmap, by the other
/// `Context`, must wait for the copy. Before, the unordered flag was that of the `Context` that
/// queued the copy, and the buffer unmapped at once under it.
#[test]
fn an_unmap_waits_for_a_copy_that_another_context_on_its_cuda_context_left_unordered() {
    let test = "an_unmap_waits_for_a_copy_that_another_context_on_its_cuda_context_left_unordered";
    let Some(_gl) = on_gpu(test) else { return };
    let (cu, [s]) = cudarc_streams();
    let (a, b) = (
        Context::from_cudarc(&cu).unwrap(),
        Context::from_cudarc(&cu).unwrap(),
    );
    assert_eq!(a.raw(), b.raw(), "two Contexts on one CUDA context");
    let spinner = Spinner::new(&a);
    let (w, h) = (64, 16);
    let words = texels(w * h);
    let texture = gl_texture(w, h, &words);
    let name = gl_buffer(w * h * 4);
    let mut image =
        RegisteredImage::register(&a, texture, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap();
    let mut res = RegisteredBuffer::register(&b, name, RegisterFlags::NONE).unwrap();
    let mapped_image = image.map(&s).unwrap();
    let array = mapped_image.array(0, 0).unwrap();
    let buffer = res.map(&s).unwrap();
    let (start, spin) = copy_under_a_capture(&spinner, &s, "copy_to_buffer", || {
        array.copy_to_buffer(&buffer)
    });
    let unmapped = buffer.unmap();
    assert_refused(unmapped, start.elapsed(), spin);
    assert!(res.is_mapped(), "a refused unmap left the buffer unmapped");
    s.synchronize().unwrap();
    a.finish_queued().unwrap();
    let again = res.map(&s).unwrap();
    assert_eq!(
        cu_read(&again, &s),
        words,
        "the copy did not write the buffer"
    );
    again.unmap().unwrap();
    mapped_image.unmap().unwrap();
    res.unregister().unwrap();
    image.unregister().unwrap();
    drop(spinner);
    a.check_drop_errors().unwrap();
    b.check_drop_errors().unwrap();
    delete_gl_buffer(name);
    delete_gl_texture(texture);
}

/// A copy ordered on the map's stream `s` into a buffer mapped on another stream `t`, whose
/// ordering a capture of `s` then takes (as one begun before cudarc's guard records its event
/// or synchronizes `s`): `finish_if_captured` waits for the copy, gives up past the limit, and
/// must then leave the queue unordered, so that the buffer's unmap on `t` waits for the copy.
/// Before, the queue stayed ordered and the buffer unmapped at once under the copy.
#[test]
fn an_unmap_waits_for_a_copy_whose_wait_after_a_capture_gave_up() {
    let test = "an_unmap_waits_for_a_copy_whose_wait_after_a_capture_gave_up";
    let Some(_gl) = on_gpu(test) else { return };
    let (cu, [s, t]) = cudarc_streams();
    let (ctx, spinner, name, mut res) = memset_setup(&cu);
    let mapped = res.map(&t).unwrap();
    let start = Instant::now();
    let spin = spinner.spin(&s);
    let queued = memset_mapping(&ctx, &mapped, &s, || {});
    queued.expect("the memset, ordered on its stream, returns at once");
    begin_capture(&s);
    let finished = super::memory::finish_if_captured(&ctx, &s);
    assert_gave_up("the wait for the copy after a capture", &finished);
    end_capture(&s);
    let unmapped = mapped.unmap();
    assert_refused(unmapped, start.elapsed(), spin);
    assert_recovers_after_the_refused_unmap(&ctx, res, name, spinner, &s, &t);
}
