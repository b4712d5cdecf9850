//! The headless pipeline on any OpenGL (Mesa's llvmpipe on CI): the CPU backend's texture and the
//! drawn offscreen frame equal the CPU reference exactly, across a resize, and profiling records
//! every CPU-backend stage; with no display, the demo's default run falls back to headless; the
//! default run headless (`--path auto`) falls back to the CPU only without CUDA, and its
//! screenshot matches the reference either way. Skips with a reason when EGL offers no OpenGL
//! at all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{UPLOAD_STAGES, assert_close, compare_shot, offscreen_session, run_headless, stat};
use plasma_demo::backend::{Backend, CpuBackend};
use plasma_demo::cli::Size;
use plasma_demo::plasma_cpu::render_cpu;

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
    gl::load_with(|name| gl.get_proc_address(name));
    eprintln!("OpenGL {} on {}", gl.version(), gl.renderer());
    let first = Size::new(96, 54).unwrap();
    let mut session = offscreen_session(Backend::Cpu(CpuBackend::new()), first, true);
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
    for (stage, clock) in UPLOAD_STAGES {
        let s = stat(&stats, stage, clock, "cpu");
        assert_eq!(s.samples, 9, "{stage:?}/{clock:?}");
        assert!(s.median_us >= 0.0 && s.p99_us >= s.median_us);
    }
    assert_eq!(session.frames(), 9);
    drop(session);
    drop(gl);
}

/// The README's first command on a machine without a display: one line saying so, frames per
/// second, and a screenshot whose path is printed.
#[test]
fn without_a_display_the_default_run_falls_back_to_headless() {
    if let Err(e) = cuda_gl::egl::HeadlessContext::any_gl() {
        eprintln!("skipped: no headless OpenGL through EGL: {e}");
        return;
    }
    let shot =
        std::env::temp_dir().join(format!("plasma-demo-fallback-{}.png", std::process::id()));
    let run = common::run_demo(
        &["--backend", "cpu", "--size", "64x36", "--frames", "2"],
        &shot,
        &["DISPLAY", "WAYLAND_DISPLAY"],
    );
    let (stdout, all) = (&run.stdout, run.all());
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with(
            "plasma-demo: no display (DISPLAY and WAYLAND_DISPLAY are unset): rendering \
             headless instead for 2 frames"
        ),
        "{all}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rendered 2 frame(s) of 64x36") && l.contains("frames/s")),
        "{all}"
    );
    let wrote = format!("plasma-demo: wrote the screenshot {}", shot.display());
    assert!(lines.iter().any(|l| l.starts_with(&wrote)), "{all}");
    let png = std::fs::read(&shot).unwrap();
    std::fs::remove_file(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG"),
        "{} is not a PNG",
        shot.display()
    );
}

/// The default run headless (`--backend auto --path auto`): without CUDA (CI), one line saying
/// so on stderr and the CPU backend, whose screenshot equals the reference exactly; with CUDA,
/// the display target's report line among the first lines and a screenshot within ±2 of it.
#[test]
fn the_default_path_falls_back_to_the_cpu_only_without_cuda() {
    if let Err(e) = cuda_gl::egl::HeadlessContext::any_gl() {
        eprintln!("skipped: no headless OpenGL through EGL: {e}");
        return;
    }
    let has_cuda = cuda_gl::Device::get(0).is_ok();
    let size = Size::new(64, 36).unwrap();
    let (run, shot) = run_headless("auto", size);
    let (stdout, stderr, all) = (&run.stdout, &run.stderr, run.all());
    let first: Vec<&str> = stdout.lines().take(3).collect();
    let tolerance = if has_cuda {
        assert!(
            first
                .iter()
                .any(|l| l.starts_with("plasma-demo: display: ")),
            "no report line among the first lines: {all}"
        );
        assert!(!stderr.contains("using the CPU backend"), "{all}");
        2
    } else {
        let fallback: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("plasma-demo: "))
            .collect();
        assert_eq!(fallback.len(), 1, "{all}");
        assert!(
            fallback[0].starts_with("plasma-demo: CUDA unavailable, using the CPU backend: "),
            "{all}"
        );
        assert!(
            first.iter().any(|l| l.contains("CPU on")),
            "the first lines do not name the CPU backend: {all}"
        );
        0
    };
    let d = compare_shot(&shot, size, tolerance);
    let what = format!("the default run's screenshot differs from the reference ({all})");
    assert_close(&d, &what);
}
