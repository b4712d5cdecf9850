//! `cargo xtask ptx [--check]`: rebuilds the committed PTX of every kernel in [`KERNELS`] with the
//! pinned compiler, CUDA 12.0.
//!
//! The compiler is `nvcc` when `nvcc --version` reports release 12.0, and otherwise NVRTC 12.0
//! from the pinned PyPI wheel [`NVRTC_WHEEL`], which pip unpacks under `target/xtask/` and which
//! is loaded with `libloading` (no CUDA toolkit and no GPU needed). `CUDA_GL_NVRTC_LIB` may name
//! a `libnvrtc.so.12` to use instead of the wheel (it must report version 12.0).
//!
//! Every kernel is compiled with [`OPTIONS`]: virtual architecture `compute_75` (the PTX says
//! `.target sm_75` and `.version 8.0`, so every driver since R525 can JIT it), C++17, and no fast
//! math and no FMA contraction, so that the CPU references of the kernels agree with the GPU.
//! The compiler's own comment header (build id, version banner) is replaced by a fixed one naming
//! the source and the options, so the output depends only on the source, the options and the
//! compiler version.
//!
//! With `--check` nothing is written; the task fails when a committed `.ptx` differs. When no
//! pinned compiler can be had (no nvcc 12.0 and pip cannot fetch the wheel), the task fails,
//! except that `--check` with `CUDA_GL_ALLOW_SKIP=1` prints why and succeeds with "skipped".

use anyhow::{Context, Result, anyhow, bail};
use std::ffi::{CString, c_int};
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../cuda-gl/src/nvrtc/api.rs"]
mod nvrtc_api;

use nvrtc_api::{Failure, Nvrtc};

/// The pinned wheel that ships `libnvrtc.so.12` (and `libnvrtc-builtins.so.12.0`) of CUDA 12.0.
pub const NVRTC_WHEEL: &str = "nvidia-cuda-nvrtc-cu12==12.0.140";

/// The folder under `target/xtask/` the wheel is unpacked into.
const NVRTC_DIR: &str = "cuda-nvrtc-12.0.140";

/// The NVRTC library inside the unpacked wheel.
const NVRTC_LIB: &str = "nvidia/cuda_nvrtc/lib/libnvrtc.so.12";

/// The pinned CUDA version, as `(major, minor)`.
const PINNED: (c_int, c_int) = (12, 0);

/// What `nvcc --version` prints for the pinned release ("Cuda compilation tools, release 12.0,
/// V12.0.140").
const NVCC_RELEASE: &str = "release 12.0,";

/// Compiler options, identical for nvcc and NVRTC. `--fmad=false` keeps `a * b + c` unfused, so
/// the Rust CPU reference (which never fuses) computes the same floats; fast math stays off.
pub const OPTIONS: &[&str] = &[
    "--gpu-architecture=compute_75",
    "--std=c++17",
    "--fmad=false",
];

/// The `.target` line every output must carry.
const TARGET: &str = ".target sm_75";

/// The newest `.version` the output may declare (what CUDA 12.0 emits; R525 drivers read it).
const MAX_PTX_VERSION: (u32, u32) = (8, 0);

/// One kernel source and its committed PTX, relative to the workspace root.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// The CUDA C++ source.
    pub source: &'static str,
    /// Where its PTX is committed.
    pub ptx: &'static str,
    /// The `extern "C"` entry points the PTX must define.
    pub entries: &'static [&'static str],
}

/// Every kernel of the workspace.
pub const KERNELS: &[Kernel] = &[
    Kernel {
        source: "plasma-demo/kernels/plasma.cu",
        ptx: "plasma-demo/kernels/plasma.ptx",
        entries: &["plasma_pbo", "plasma_surface", "debug_spin"],
    },
    Kernel {
        source: "cuda-gl/tests/kernels/test_kernels.cu",
        ptx: "cuda-gl/tests/kernels/test_kernels.ptx",
        entries: &[
            "fill_u32",
            "copy_check_u32",
            "surface_fill_rgba8",
            "surface_read_rgba8",
            "fault_illegal_address",
            "frame_checksum",
            "fill_frame_with_checksum",
        ],
    },
    Kernel {
        source: "cuda-gl/src/display/kernels/colormap.cu",
        ptx: "cuda-gl/src/display/kernels/colormap.ptx",
        entries: &["cuda_gl_colormap"],
    },
    Kernel {
        source: "cuda-gl/src/video/kernels/video.cu",
        ptx: "cuda-gl/src/video/kernels/video.ptx",
        entries: &["cuda_gl_video_rgba8"],
    },
    Kernel {
        source: "cuda-gl/examples/kernels/cudarc_interop.cu",
        ptx: "cuda-gl/examples/kernels/cudarc_interop.ptx",
        entries: &["xor_gradient_rgba8"],
    },
    Kernel {
        source: "cuda-gl/examples/kernels/examples.cu",
        ptx: "cuda-gl/examples/kernels/examples.ptx",
        entries: &[
            "sine_wave",
            "sobel_rgba8",
            "sample_rgba",
            "view_sums",
            "wobble_grid",
            "grid_indices",
            "stripes_rgba8",
            "gradient_rgba8",
            "video_test_pattern",
        ],
    },
];

pub fn run(check: bool) -> Result<()> {
    let compiler = match Compiler::find() {
        Ok(compiler) => compiler,
        Err(why) => {
            if check && std::env::var_os("CUDA_GL_ALLOW_SKIP").is_some_and(|v| v == "1") {
                eprintln!("xtask ptx: no pinned CUDA 12.0 compiler: {why:#}");
                println!("xtask ptx: skipped (no pinned CUDA 12.0 compiler; CUDA_GL_ALLOW_SKIP=1)");
                return Ok(());
            }
            return Err(why.context(
                "no pinned CUDA 12.0 compiler: put nvcc 12.0 on PATH, let pip reach PyPI, or set \
                 CUDA_GL_NVRTC_LIB to a libnvrtc.so.12 of CUDA 12.0",
            ));
        }
    };
    eprintln!("xtask ptx: compiling with {}", compiler.describe());
    let root = crate::workspace_root();
    let mut failures = Vec::new();
    for kernel in KERNELS {
        let result = compile_one(&compiler, &root, kernel)
            .and_then(|ptx| crate::pinned::write_or_check(&root.join(kernel.ptx), &ptx, check));
        if let Err(e) = result {
            eprintln!("xtask ptx: {}: {e:#}", kernel.source);
            failures.push(kernel.source);
        }
    }
    if !failures.is_empty() {
        bail!("ptx failed for {}", failures.join(", "));
    }
    Ok(())
}

/// Compiles one kernel and returns its PTX with the fixed header, after checking it.
fn compile_one(compiler: &Compiler, root: &Path, kernel: &Kernel) -> Result<String> {
    let source_path = root.join(kernel.source);
    let source = std::fs::read_to_string(&source_path)
        .with_context(|| format!("reading {}", source_path.display()))?;
    let name = file_name(kernel.source);
    let raw = match compiler {
        Compiler::Nvcc => nvcc_compile(&source_path, name)?,
        Compiler::Nvrtc(nvrtc) => nvrtc_compile(nvrtc, &source, name)?,
    };
    let ptx = normalise(&raw, kernel.source)?;
    validate(&ptx, kernel)?;
    Ok(ptx)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Replaces the compiler's leading `//` comment block with a fixed header and ends the text with
/// exactly one newline.
fn normalise(raw: &str, source: &str) -> Result<String> {
    let raw = raw.trim_end_matches('\0');
    let body_start = raw
        .find("\n.version")
        .map(|i| i + 1)
        .or_else(|| raw.starts_with(".version").then_some(0))
        .ok_or_else(|| anyhow!("the compiler's output has no .version line"))?;
    let (header, body) = raw.split_at(body_start);
    if header
        .lines()
        .any(|l| !l.trim().is_empty() && !l.starts_with("//"))
    {
        bail!("unexpected text before .version in the compiler's output");
    }
    let mut out = String::new();
    out.push_str("//\n");
    out.push_str(&format!(
        "// Generated by `cargo xtask ptx` from {source} with CUDA 12.0 (nvcc or NVRTC),\n"
    ));
    out.push_str(&format!(
        "// options: {}. Do not edit.\n",
        OPTIONS.join(" ")
    ));
    out.push_str("//\n\n");
    out.push_str(body.trim_end());
    out.push('\n');
    Ok(out)
}

/// Checks the `.version` and `.target` lines and that every entry point is there.
fn validate(ptx: &str, kernel: &Kernel) -> Result<()> {
    let version = ptx
        .lines()
        .find_map(|l| l.trim().strip_prefix(".version "))
        .ok_or_else(|| anyhow!("no .version line"))?;
    let parsed = version
        .trim()
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| anyhow!("unparsable .version {version}"))?;
    if parsed > MAX_PTX_VERSION {
        bail!(
            "PTX .version {version} is newer than {}.{}",
            MAX_PTX_VERSION.0,
            MAX_PTX_VERSION.1
        );
    }
    if !ptx.lines().any(|l| l.trim() == TARGET) {
        bail!("the PTX does not say `{TARGET}`");
    }
    for entry in kernel.entries {
        let needle = format!(".entry {entry}(");
        if !ptx.contains(&needle) {
            bail!("the PTX has no entry point `{entry}` (is it extern \"C\" __global__?)");
        }
    }
    Ok(())
}

/// The pinned compiler found on this machine.
#[derive(Debug)]
enum Compiler {
    /// `nvcc` on `PATH` reports release 12.0.
    Nvcc,
    /// NVRTC 12.0, loaded at run time.
    Nvrtc(Nvrtc),
}

impl Compiler {
    fn find() -> Result<Self> {
        let nvcc = nvcc_release();
        if let Ok(true) = nvcc {
            return Ok(Self::Nvcc);
        }
        let nvcc_note = match nvcc {
            Ok(_) => "nvcc is not release 12.0".to_string(),
            Err(e) => format!("no nvcc ({e})"),
        };
        let lib = match std::env::var_os("CUDA_GL_NVRTC_LIB") {
            Some(path) => PathBuf::from(path),
            None => crate::pinned::wheel(NVRTC_WHEEL, NVRTC_DIR)
                .with_context(|| format!("{nvcc_note}; fetching {NVRTC_WHEEL}"))?
                .join(NVRTC_LIB),
        };
        Ok(Self::Nvrtc(load_nvrtc(&lib)?))
    }

    fn describe(&self) -> String {
        match self {
            Self::Nvcc => "nvcc 12.0".to_string(),
            Self::Nvrtc(nvrtc) => format!("NVRTC 12.0 ({})", nvrtc.path.display()),
        }
    }
}

/// Whether `nvcc --version` runs and reports the pinned release.
fn nvcc_release() -> Result<bool> {
    let out = Command::new("nvcc").arg("--version").output()?;
    Ok(out.status.success() && String::from_utf8_lossy(&out.stdout).contains(NVCC_RELEASE))
}

fn nvcc_compile(source: &Path, name: &str) -> Result<String> {
    let dir = crate::workspace_root().join("target/xtask/ptx-nvcc");
    std::fs::create_dir_all(&dir)?;
    let out = dir.join(name).with_extension("ptx");
    let status = Command::new("nvcc")
        .arg("--ptx")
        .args(OPTIONS)
        .arg("-o")
        .arg(&out)
        .arg(source)
        .status()
        .context("running nvcc")?;
    if !status.success() {
        bail!("nvcc failed on {}", source.display());
    }
    std::fs::read_to_string(&out).with_context(|| format!("reading {}", out.display()))
}

/// Loads `libnvrtc.so.12` and checks that it is 12.0. Its RUNPATH is `$ORIGIN`, so the
/// `libnvrtc-builtins.so.12.0` beside it is found when NVRTC opens it during compilation.
fn load_nvrtc(path: &Path) -> Result<Nvrtc> {
    let nvrtc =
        Nvrtc::open(path.to_path_buf()).with_context(|| format!("loading {}", path.display()))?;
    let ((major, minor), rc) = match nvrtc.version() {
        Ok(version) => (version, 0),
        Err(Failure::Call { code, .. }) => ((0, 0), code),
        Err(Failure::TooManyOptions(_)) => unreachable!("nvrtcVersion takes no options"),
    };
    if rc != 0 || (major, minor) != PINNED {
        bail!(
            "{} is NVRTC {major}.{minor} (rc {rc}), not the pinned {}.{}",
            path.display(),
            PINNED.0,
            PINNED.1
        );
    }
    Ok(nvrtc)
}

/// Compiles `source` (named `name` in diagnostics) with [`OPTIONS`] and returns the PTX.
fn nvrtc_compile(nvrtc: &Nvrtc, source: &str, name: &str) -> Result<String> {
    let c_source = CString::new(source).context("the source contains NUL")?;
    let c_name = CString::new(name).context("the name contains NUL")?;
    let c_options = OPTIONS
        .iter()
        .map(|o| CString::new(*o))
        .collect::<Result<Vec<_>, _>>()?;
    let error = |failure| match failure {
        Failure::TooManyOptions(n) => anyhow!("too many NVRTC options ({n})"),
        Failure::Call { call, code, log } => {
            let text = nvrtc
                .error_string(code)
                .unwrap_or_else(|| "unknown error".into());
            let error = anyhow!("{call} failed: {text} ({code})");
            if call == "nvrtcCompileProgram" {
                error.context(log)
            } else {
                error
            }
        }
    };
    let compiled = nvrtc
        .compile(&c_source, &c_name, &c_options)
        .0
        .map_err(error)?;
    if !compiled.log.trim().is_empty() {
        eprintln!("{}", compiled.log.trim_end());
    }
    String::from_utf8(compiled.ptx).context("the PTX is not UTF-8")
}
