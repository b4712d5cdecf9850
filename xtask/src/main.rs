//! `cargo xtask <task>`: developer tasks that regenerate committed artefacts.
//!
//! - `cargo xtask bindgen [--headers DIR] [--check]` regenerates `cuda-gl-sys/src/bindings.rs`
//!   from the CUDA 12.0 headers.
//! - `cargo xtask ptx [--check]` rebuilds the committed PTX (`plasma-demo/kernels/plasma.ptx`,
//!   `cuda-gl/tests/kernels/test_kernels.ptx`, cuda-gl's own
//!   `cuda-gl/src/display/kernels/colormap.ptx`, the examples') with the pinned compiler.
//!
//! With `--check`, nothing is written: the task fails when the committed file differs from what
//! the generator produces.

mod bindgen_task;
mod pinned;
mod ptx_task;

use anyhow::{Result, bail};
use std::path::PathBuf;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(task) = args.next() else {
        bail!("usage: cargo xtask <bindgen|ptx> [--check] [--headers DIR]");
    };
    let rest: Vec<String> = args.collect();
    let check = rest.iter().any(|a| a == "--check");
    match task.as_str() {
        "bindgen" => {
            let headers = flag_value(&rest, "--headers").map(PathBuf::from);
            bindgen_task::run(headers, check)
        }
        "ptx" => ptx_task::run(check),
        other => bail!("unknown task `{other}`; expected `bindgen` or `ptx`"),
    }
}

fn flag_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The workspace root (the parent of this crate's manifest directory).
pub(crate) fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}
