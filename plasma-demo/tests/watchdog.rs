//! The watchdog ends a run that waits on the GPU for too long, with status 3 and one line naming
//! the stuck stage, without harming the GPU: a stall is made with the `debug_spin` kernel, which
//! spins on the GPU clock for longer than the limit and writes nothing.
//!
//! Every case runs the program under test in a child process (this binary re-executed, or the
//! demo) under a timeout, because the watchdog ends the whole process. The first two need no
//! GPU; the others skip without one (printing why), unless `CUDA_GL_REQUIRE_GPU=1`. The demo is
//! found as [`demo_binary`] says (`PLASMA_DEMO_BIN` overrides it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../cuda-gl/tests/harness/mod.rs"]
mod harness;

use harness::{ChildRun, is_child, run_child, run_child_with, run_command};
use plasma_demo::backend::{Backend, CudaBackend};
use plasma_demo::cli::{PathChoice, Size};
use plasma_demo::renderer::Target;
use plasma_demo::session::Session;
use plasma_demo::watchdog::{self, EXIT_CODE, Stage};
use std::process::Command;
use std::time::Duration;

/// The limit the GPU cases set, in seconds.
const LIMIT_S: u64 = 2;

/// How long `debug_spin` keeps the GPU busy: well past the limit (and start-up), so the watchdog
/// fires first, yet short, so the GPU is idle soon after even if a child were not ended.
const SPIN: Duration = Duration::from_secs(8);

/// The most a child may take beyond the limit: start-up (contexts, PTX JIT) and the watchdog's
/// polling.
const SLACK: Duration = Duration::from_secs(6);

/// Prints the child's output and asserts that the watchdog of `program` ended it: status
/// [`EXIT_CODE`], within `limit` plus [`SLACK`], with its one line.
fn assert_watchdog_fired(run: &ChildRun, program: &str, limit: Duration) {
    eprintln!(
        "---- child: {:?} after {:.2} s ----\n{}\n---- end of child ----",
        run.status,
        run.elapsed.as_secs_f64(),
        run.output.trim_end()
    );
    let status = run
        .status
        .unwrap_or_else(|| panic!("the child hung and was killed after {:?}", run.elapsed));
    assert_eq!(status.code(), Some(EXIT_CODE), "exit status: {status}");
    assert!(
        run.elapsed < limit + SLACK,
        "the watchdog took {:?} for a limit of {limit:?}",
        run.elapsed
    );
    let prefix = format!(
        "{program}: watchdog: stuck for {} s in stage \"",
        limit.as_secs()
    );
    // The child's stdout comes first, and may end without a line break where it was stopped.
    let line = run
        .output
        .lines()
        .find_map(|l| l.find(&prefix).map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("no line with `{prefix}`"));
    assert!(
        line.contains("dmesg | grep Xid") && line.contains("Xid 109"),
        "{line}"
    );
}

/// Whether the child skipped for want of a GPU (it then exited 0 after printing `skipped:`;
/// under `CUDA_GL_REQUIRE_GPU=1` it failed instead, which the caller's assertions catch).
fn child_skipped(run: &ChildRun) -> bool {
    let skipped = run.exited_cleanly() && run.output.contains("skipped:");
    if skipped {
        eprintln!("skipped: the child found no GPU\n{}", run.output.trim_end());
    }
    skipped
}

#[test]
fn a_stage_over_the_limit_ends_the_process() {
    const NAME: &str = "a_stage_over_the_limit_ends_the_process";
    if is_child(NAME) {
        watchdog::start("watchdog test", Duration::from_secs(1)).unwrap();
        watchdog::enter(Stage::Present);
        // Stands for a driver call that never returns.
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let run = run_child(NAME, NAME, Duration::from_secs(30));
    assert_watchdog_fired(&run, "watchdog test", Duration::from_secs(1));
    assert!(
        run.output.contains("in stage \"present\""),
        "{}",
        run.output
    );
}

#[test]
fn stages_within_the_limit_and_idle_time_do_not() {
    const NAME: &str = "stages_within_the_limit_and_idle_time_do_not";
    if is_child(NAME) {
        watchdog::start("watchdog test", Duration::from_secs(1)).unwrap();
        // 3 s of stages of 0.2 s each, then 2 s idle: twice the limit in total, never in one stage.
        for stage in [
            Stage::Map,
            Stage::Kernel,
            Stage::Unmap,
            Stage::Draw,
            Stage::Present,
        ]
        .iter()
        .cycle()
        .take(15)
        {
            watchdog::enter(*stage);
            std::thread::sleep(Duration::from_millis(200));
        }
        watchdog::enter(Stage::Idle);
        std::thread::sleep(Duration::from_secs(2));
        println!("child-done");
        return;
    }
    let run = run_child(NAME, NAME, Duration::from_secs(30));
    assert!(
        run.exited_cleanly() && run.output.contains("child-done"),
        "{:?}: {}",
        run.status,
        run.output
    );
}

#[test]
fn the_demo_exits_when_a_kernel_outlasts_the_limit() {
    let Some((gl, device)) = common::open_gpu() else {
        return;
    };
    drop((gl, device));
    let mut demo = Command::new(common::demo_binary());
    demo.args(["--headless", "--backend", "cuda", "--size", "64x64"])
        .args(["--frames", "3", "--watchdog-secs", &LIMIT_S.to_string()])
        .args(["--debug-spin-ms", &SPIN.as_millis().to_string()]);
    let run = run_command(demo, SPIN * 4);
    assert_watchdog_fired(&run, "plasma-demo", Duration::from_secs(LIMIT_S));
}

#[test]
fn a_drawing_test_exits_when_a_kernel_outlasts_the_limit() {
    const NAME: &str = "a_drawing_test_exits_when_a_kernel_outlasts_the_limit";
    if is_child(NAME) {
        // The set-up of gpu_reference's tests: the same watchdog, from the environment.
        let Some((gl, device)) = common::gpu("drawing test") else {
            return;
        };
        let mut backend = CudaBackend::on_device(&device, PathChoice::Surface).unwrap();
        backend.debug_spin(SPIN);
        let size = Size::new(64, 64).unwrap();
        let backend = Backend::Cuda(Box::new(backend));
        let mut s = Session::new(backend, size, Target::Offscreen, false).unwrap();
        for i in 0..3 {
            s.render_frame(i as f32, size).unwrap();
        }
        s.read_drawn().unwrap();
        drop(s);
        drop(gl);
        println!("child-done: the frames were drawn although the GPU was kept busy for {SPIN:?}");
        return;
    }
    let env = [(watchdog::LIMIT_ENV, LIMIT_S.to_string())];
    let run = run_child_with(NAME, NAME, &env, SPIN * 4);
    if child_skipped(&run) {
        return;
    }
    assert_watchdog_fired(&run, "drawing test", Duration::from_secs(LIMIT_S));
}
