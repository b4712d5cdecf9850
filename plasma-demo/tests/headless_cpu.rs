//! The headless pipeline on any OpenGL (Mesa's llvmpipe on CI): the CPU backend's texture and the
//! drawn offscreen frame equal the CPU reference exactly, across a resize, and profiling records
//! every CPU-backend stage. Skips with a reason when EGL offers no OpenGL at all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use plasma_demo::backend::{Backend, CpuBackend};
use plasma_demo::cli::Size;
use plasma_demo::plasma_cpu::render_cpu;
use plasma_demo::renderer::Target;
use plasma_demo::session::Session;
use plasma_demo::timing::{Clock, Stage};

fn reference(size: Size, t: f32) -> Vec<u8> {
    let mut frame = vec![0u8; size.rgba_bytes()];
    render_cpu(&mut frame, size.width, size.height, t);
    frame
}

#[test]
fn cpu_backend_draws_the_reference_exactly() {
    let gl = match cuda_gl::egl::HeadlessContext::any_gl() {
        Ok(gl) => gl,
        Err(e) => {
            eprintln!("skipped: no headless OpenGL through EGL: {e}");
            return;
        }
    };
    eprintln!("OpenGL {} on {}", gl.version(), gl.renderer());
    let first = Size::new(96, 54).unwrap();
    let mut session = Session::new(
        Backend::Cpu(CpuBackend::new()),
        first,
        Target::Offscreen,
        true,
    )
    .unwrap();
    for (size, t) in [
        (first, 1.5),
        (Size::new(33, 17).unwrap(), 0.0),
        (Size::new(130, 61).unwrap(), 42.75),
    ] {
        session.resize(size).unwrap();
        for _ in 0..3 {
            session.render_frame(t, size).unwrap();
        }
        let expected = reference(size, t);
        assert_eq!(session.read_frame().unwrap(), expected, "texture, {size}");
        let drawn = session.read_drawn().unwrap().expect("offscreen target");
        assert_eq!(drawn, expected, "drawn frame, {size}");
    }
    session.finish().unwrap();
    let stats = session.profiler().stats();
    for (stage, clock) in [
        (Stage::Kernel, Clock::CpuWall),
        (Stage::Upload, Clock::CpuWall),
        (Stage::Upload, Clock::GlTimer),
        (Stage::Draw, Clock::GlTimer),
        (Stage::Total, Clock::CpuWall),
    ] {
        let s = stats
            .iter()
            .find(|s| (s.stage, s.clock) == (stage, clock))
            .unwrap_or_else(|| panic!("no {stage:?}/{clock:?} samples in {stats:?}"));
        assert_eq!(s.samples, 9, "{stage:?}/{clock:?}");
        assert!(s.median_us >= 0.0 && s.p99_us >= s.median_us);
    }
    assert_eq!(session.frames(), 9);
    drop(session);
    drop(gl);
}
