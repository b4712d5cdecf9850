//! The GPU suite: one test binary with a module per feature (as wgpu's `tests/root.rs`), so the
//! tests share one build and one link, and one run (`cargo test -p cuda-gl --all-features --test
//! gpu_suite`) lists them all as `module::test`. Each module states what it needs in its own
//! inner attributes (`#![cfg(feature = "egl")]`, ...) and is empty without it; its GPU tests skip
//! with the reason where there is no GPU (and fail under `CUDA_GL_REQUIRE_GPU=1`). Shared by the
//! modules: `gpu` (`tests/gpu/`: the GPU, GL and CUDA set-up), `harness` (`tests/harness/`:
//! knobs, memory figures, log capture, child processes), `wgpu_read` (`tests/wgpu_read/`: a
//! wgpu texture read back, with the feature `wgpu`; its `wgpu_texture` is the examples'
//! `common/wgpu_texture.rs`, a plain 2D wgpu texture).
//!
//! Binaries of their own, for tests that need a process of their own (each file says why):
//! `faults` (deliberate faults, each in a child process), `reliability` (measures the process's
//! RSS and the GPU's memory in use), `cudarc_interop` (checks who retains the primary context,
//! which every GPU test here retains too), `not_nvidia_gl` (libglvnd's EGL pointed at Mesa for
//! the whole process) and `compile_fail` (trybuild).
//!
//! What the modules here share in one process, and why that is harmless to them:
//! - `streaming` installs harness's log capture (`log` takes one logger per process, and keeps
//!   it): no other module installs a logger or reads the capture, and its test only looks for a
//!   line that its own stream logs, so other modules' records beside it change nothing;
//! - `multi_gpu` runs its `CUDA_VISIBLE_DEVICES` cases (read once per process, at `cuInit`) in
//!   child processes of this binary, by the test's full name (`harness::test_path`);
//! - the registry of registered GL objects, the loaded libcuda, libEGL and GL entry points are
//!   per process by design, and each test makes its own GL and CUDA objects, as the tests of one
//!   module did before.

#[cfg(feature = "egl")]
#[path = "../gpu/mod.rs"]
mod gpu;
#[path = "../harness/mod.rs"]
mod harness;
#[path = "../wgpu_read/mod.rs"]
mod wgpu_read;
// The wgpu modules (`wgpu` with `egl`) read textures back through it.
#[cfg(all(feature = "wgpu", feature = "egl"))]
use wgpu_read::wgpu_texture;

mod auto_traits;
mod bad_input;
mod bounded_external_waits;
mod bounded_waits;
mod display;
mod display_app_gl;
mod display_colormap;
mod display_names;
mod display_present;
mod egl_any_gl;
mod egui;
mod egui_wgpu;
mod external;
mod frames;
mod gpu_interop;
mod image_api;
mod multi_gpu;
mod nvrtc;
mod pixel_transfer;
mod share_groups;
mod soundness;
mod state_machine;
mod streaming;
mod untrusted;
mod video;
mod video_cudarc;
mod video_planes;
mod video_planes_modes;
mod wgpu_ahead;
mod wgpu_blit;
mod wgpu_display;
mod wgpu_gl;
mod wgpu_gl_drop;
mod wgpu_gl_planes;
mod wgpu_interop;
mod wgpu_order;
mod wgpu_planes;
mod wgpu_planes_handoff;
mod wgpu_recovery;
