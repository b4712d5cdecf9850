//! On a GPU: the display paths (`--path auto`, `interop`, `staged`: a
//! `cuda_gl::display::DisplayTarget` written by `plasma_pbo`) give frames equal to the CPU
//! reference within ±2 per channel, at odd sizes and 1080p, across resizes, at three times, and
//! byte for byte the PBO path's; `auto` on NVIDIA's headless GL picks interop; `--bench` records
//! their stages. With libglvnd's EGL pointed at Mesa next to a CUDA driver
//! (`source .mesa/mesa-env.sh`, see `cuda-gl/tests/not_nvidia_gl.rs`), the demo's default run
//! stages its frames through Mesa's GL and says why. Without a GPU each test prints why and
//! passes, unless `CUDA_GL_REQUIRE_GPU=1` (or, for the Mesa test, `CUDA_GL_REQUIRE_MESA=1`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{
    TOLERANCE, UPLOAD_STAGES, announce, assert_close, check_frames, compare_shot,
    offscreen_session, on_gpu, one_frame, profiled_frames, run_headless, stat,
};

use cuda_gl::Device;
use cuda_gl::display::Mode;
use plasma_demo::backend::{Backend, CudaBackend, DisplayBackend};
use plasma_demo::cli::{PathChoice, Size};
use plasma_demo::png_io::compare_rgba;
use plasma_demo::session::Session;

const SIZES: [(u32, u32); 3] = [(1366, 767), (1920, 1080), (33, 17)];
/// `None`: auto.
const MODES: [Option<Mode>; 3] = [None, Some(Mode::Interop), Some(Mode::Staged)];

fn session(device: &Device, mode: Option<Mode>, size: Size, profile: bool) -> Session {
    let backend = DisplayBackend::on_device(device, mode).unwrap();
    offscreen_session(Backend::Display(Box::new(backend)), size, profile)
}

fn name(mode: Option<Mode>) -> &'static str {
    mode.map_or("auto", Mode::name)
}

#[test]
fn display_frames_match_the_cpu_reference() {
    on_gpu("gpu_display", |gl, device| {
        announce(gl, device);
        let mut failures = Vec::new();
        for mode in MODES {
            let first = Size::new(SIZES[0].0, SIZES[0].1).unwrap();
            let mut s = session(device, mode, first, false);
            let report = s.backend().display_report().unwrap().to_string();
            eprintln!("{}: {report}", name(mode));
            // NVIDIA's headless GL on the CUDA device: auto is interop, with nothing refused.
            let chosen = mode.unwrap_or(Mode::Interop);
            assert!(
                report.starts_with(&format!("display: {chosen};")),
                "{report}"
            );
            let path = s.backend().path().unwrap();
            assert_eq!(path.to_string(), chosen.name());
            // Resizing resizes the display target. Two frames at each time: the second follows one
            // already presented at that size.
            check_frames(&mut s, &path.to_string(), &SIZES, 2, &mut failures);
            s.finish().unwrap();
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

#[test]
fn display_paths_give_the_pbo_paths_pixels() {
    on_gpu("gpu_display", |_, device| {
        let size = Size::new(1366, 767).unwrap();
        let pbo = {
            let backend = CudaBackend::on_device(device, PathChoice::Pbo).unwrap();
            let mut s = offscreen_session(Backend::Cuda(Box::new(backend)), size, false);
            one_frame(&mut s, size)
        };
        for mode in MODES {
            let mut s = session(device, mode, size, false);
            // One frame, the target's first: the read-back shows it in every mode.
            let got = one_frame(&mut s, size);
            let d = compare_rgba(&got, &pbo, size.width, 0);
            assert_close(&d, &format!("{} and pbo differ", name(mode)));
        }
    });
}

#[test]
fn bench_records_the_display_stages() {
    on_gpu("gpu_display", |_, device| {
        let size = Size::new(640, 360).unwrap();
        for mode in [Some(Mode::Interop), Some(Mode::Staged)] {
            let mut s = session(device, mode, size, true);
            let stats = profiled_frames(&mut s, size, 20);
            for (stage, clock) in UPLOAD_STAGES {
                let st = stat(&stats, stage, clock, name(mode));
                assert_eq!(st.samples, 20, "{}: {stage:?}/{clock:?}", name(mode));
            }
        }
    });
}

/// libglvnd's EGL pointed at Mesa next to NVIDIA's CUDA driver: the default run has no OpenGL
/// on the CUDA device, says so, draws with Mesa, and its display target stages the frames
/// (interop refused as not NVIDIA's GL, with the fix); the screenshot matches the reference.
#[test]
fn on_mesa_next_to_cuda_the_default_run_is_staged() {
    let skip = |reason: String| {
        if std::env::var("CUDA_GL_REQUIRE_MESA").is_ok_and(|v| v == "1") {
            panic!("CUDA_GL_REQUIRE_MESA=1, but the test cannot run: {reason}");
        }
        eprintln!("skipped: {reason}");
    };
    if let Err(e) = Device::get(0) {
        return skip(format!("no CUDA device: {}", common::one_line(&e)));
    }
    match cuda_gl::egl::HeadlessContext::any_gl() {
        Ok(gl) if gl.is_software() => {}
        Ok(gl) => {
            return skip(format!(
                "EGL's OpenGL is {}, not Mesa's: source .mesa/mesa-env.sh first",
                gl.renderer()
            ));
        }
        Err(e) => return skip(format!("no headless OpenGL: {}", common::one_line(&e))),
    }
    let size = Size::new(96, 54).unwrap();
    let (run, shot) = run_headless("mesa", size);
    let (stdout, all) = (&run.stdout, run.all());
    let first: Vec<&str> = stdout.lines().take(3).collect();
    assert!(
        first
            .iter()
            .any(|l| l.starts_with("plasma-demo: no OpenGL through EGL on CUDA device 0")),
        "{all}"
    );
    assert!(
        first.iter().any(|l| l
            .starts_with("plasma-demo: display: staged (interop refused: not_nvidia_gl)")
            && l.contains("fix: ")),
        "{all}"
    );
    let d = compare_shot(&shot, size, TOLERANCE);
    assert_close(
        &d,
        &format!("the screenshot differs from the reference ({all})"),
    );
}
