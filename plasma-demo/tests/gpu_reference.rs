//! On a GPU: CUDA frames (headless EGL on CUDA device 0) equal the CPU reference within ±2 per
//! channel at 1280x720, 1920x1080 and 1366x767, on the PBO and the surface path, at three times;
//! and `--bench` records every stage. Without a GPU each test prints why and passes, unless
//! `CUDA_GL_REQUIRE_GPU=1`, which makes it fail instead.
//!
//! Each test runs under the watchdog (`CUDA_GL_WATCHDOG_SECS`, default 10 s): on a GPU that a
//! kernel fault left unable to switch graphics contexts, the binary exits with status 3 and a line
//! naming the stuck stage instead of hanging.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{
    TIMES, announce, assert_close, check_frames, offscreen_session, on_gpu, one_frame,
    profiled_frames, stat,
};

use cuda_gl::Device;
use plasma_demo::backend::{Backend, CudaBackend};
use plasma_demo::cli::{PathChoice, Size};
use plasma_demo::png_io::compare_rgba;
use plasma_demo::session::Session;
use plasma_demo::timing::{Clock, Stage};

const SIZES: [(u32, u32); 3] = [(1280, 720), (1920, 1080), (1366, 767)];
const PATHS: [PathChoice; 2] = [PathChoice::Pbo, PathChoice::Surface];

fn session(device: &Device, path: PathChoice, size: Size, profile: bool) -> Session {
    let backend = CudaBackend::on_device(device, path).unwrap();
    offscreen_session(Backend::Cuda(Box::new(backend)), size, profile)
}

#[test]
fn cuda_frames_match_the_cpu_reference() {
    on_gpu("gpu_reference", |gl, device| {
        announce(gl, device);
        let mut failures = Vec::new();
        let mut checked = 0;
        for path in PATHS {
            let first = Size::new(SIZES[0].0, SIZES[0].1).unwrap();
            let mut s = session(device, path, first, false);
            // Resizing also re-registers the new texture / pixel buffer.
            checked += check_frames(&mut s, &path.to_string(), &SIZES, 1, &mut failures);
            s.finish().unwrap();
        }
        assert_eq!(checked, PATHS.len() * SIZES.len() * TIMES.len());
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

#[test]
fn the_two_paths_give_the_same_pixels() {
    on_gpu("gpu_reference", |_, device| {
        let size = Size::new(1366, 767).unwrap();
        let frames: Vec<Vec<u8>> = PATHS
            .iter()
            .map(|&path| one_frame(&mut session(device, path, size, false), size))
            .collect();
        let d = compare_rgba(&frames[0], &frames[1], size.width, 0);
        assert_close(&d, "pbo and surface differ");
    });
}

#[test]
fn bench_records_every_stage_on_the_gpu() {
    on_gpu("gpu_reference", |_, device| {
        let size = Size::new(640, 360).unwrap();
        for path in PATHS {
            let mut s = session(device, path, size, true);
            let stats = profiled_frames(&mut s, size, 20);
            let mut wanted = vec![
                (Stage::Map, Clock::CpuWall),
                (Stage::Map, Clock::CudaEvent),
                (Stage::Kernel, Clock::CudaEvent),
                (Stage::Unmap, Clock::CpuWall),
                (Stage::Unmap, Clock::CudaEvent),
                (Stage::Draw, Clock::GlTimer),
                (Stage::Total, Clock::CpuWall),
            ];
            if path == PathChoice::Pbo {
                wanted.push((Stage::Upload, Clock::GlTimer));
            } else {
                assert!(
                    !stats.iter().any(|st| st.stage == Stage::Upload),
                    "the surface path has no upload"
                );
            }
            for (stage, clock) in wanted {
                let st = stat(&stats, stage, clock, &path.to_string());
                assert_eq!(st.samples, 20, "{path}: {stage:?}/{clock:?}");
                assert!(st.median_us.is_finite() && st.median_us >= 0.0);
            }
            let kernel = stat(&stats, Stage::Kernel, Clock::CudaEvent, &path.to_string());
            eprintln!(
                "{path} {size}: kernel median {:.1} µs, p99 {:.1} µs",
                kernel.median_us, kernel.p99_us
            );
            assert!(kernel.median_us > 0.0);
        }
    });
}
