//! A GPU test of where cudarc's read event of a slice that video planes upload
//! (`VideoPlanes::upload_cudarc`) is recorded in interop mode: on cuda-gl's private stream right
//! after the copies, in their run (the map, the copies and the unmap), as for the display's
//! shows (`display::cudarc_event_tests`). Work that reaches the private stream once that run
//! has released the lock (another thread's run, here a wait for a kernel that spins) must not
//! hold up cudarc's later writes and frees of the slice.
//!
//! Interop mode only: its upload returns with the copies only queued. The staged mode copies
//! each plane in a run of its own, the second behind whatever reached the private stream after
//! the first (so is cudarc's second record, rightly), and the staged and stream modes wait on
//! the CPU for their copies. Needs the `egl` and `cudarc` features and a GPU; skips with the
//! reason elsewhere, and fails with `CUDA_GL_REQUIRE_GPU=1`. It spins for 4 s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::VideoPlanes;
use super::gl_write::tests::plane_texture;
use crate::cudarc_interop::event_tests::{assert_not_held_up, hold_private_after_next_work, rig};
use crate::egl::test_gl::on_gpu;
use crate::glapi::GlOwner;
use crate::mode_choice::Mode;
use crate::video::{VideoFormat, VideoLayout};
use cudarc::driver::DevicePtrMut;

/// The call name of the interop upload's run (`copy_planes`).
const PLANES_RUN: &str = "cuGraphicsMapResources (not called)";

#[test]
fn upload_cudarc_records_cudarcs_read_event_after_its_copies_not_later_private_work() {
    let test = "upload_cudarc_records_cudarcs_read_event_after_its_copies_not_later_private_work";
    let Some(_gl) = on_gpu(test) else { return };
    let (ctx, spinner, [s, t, u]) = rig();
    let layout = VideoLayout::packed((64, 16), VideoFormat::Nv12).unwrap();
    let (_, fns) = GlOwner::current("the test's plane textures").unwrap();
    let textures = [
        plane_texture(fns, gl::R8, layout.size()),
        plane_texture(fns, gl::RG8, layout.chroma_size()),
    ];
    let (mut planes, _) =
        VideoPlanes::new(&ctx, textures, VideoFormat::Nv12, Some(Mode::Interop)).unwrap();
    let bytes: Vec<u8> = (0..layout.bytes()).map(|i| (i * 11 % 253) as u8).collect();
    let mut src = s.clone_htod(&bytes).unwrap();
    // Once before the hold: nothing done only at a first upload waits for the spinning kernel.
    planes.upload_cudarc(&src, layout, &s).unwrap();
    s.synchronize().unwrap();

    let (start, spun, ran) = hold_private_after_next_work(&spinner, &t, Some(PLANES_RUN));
    planes.upload_cudarc(&src, layout, &s).unwrap();
    assert!(
        ran.get(),
        "the upload's run ({PLANES_RUN}) did not run the hook"
    );
    drop(src.device_ptr_mut(&u));
    let probe = u.record_event(None).unwrap();
    assert_not_held_up("upload_cudarc's read event", &probe, &spun, start);
    t.synchronize().unwrap();
    s.synchronize().unwrap();

    ctx.finish_queued().unwrap();
    drop(planes);
    drop(src);
    drop(spinner);
    ctx.check_drop_errors().unwrap();
    // SAFETY: the GL context is current; the planes that registered the textures are dropped.
    unsafe { (fns.delete_textures)(2, textures.as_ptr()) };
}
