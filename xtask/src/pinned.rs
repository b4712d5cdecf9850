//! Fetches pinned PyPI wheels into `target/xtask/` with pip, so the generators always see the same
//! inputs.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Downloads `requirement` (e.g. `nvidia-cuda-runtime-cu12==12.0.146`) and unpacks it under
/// `target/xtask/<dir_name>`, returning that folder. An existing unpacked copy is reused.
pub fn wheel(requirement: &str, dir_name: &str) -> Result<PathBuf> {
    let dest = crate::workspace_root().join("target/xtask").join(dir_name);
    let marker = dest.join(".complete");
    if marker.exists() {
        return Ok(dest);
    }
    std::fs::create_dir_all(&dest)?;
    let python = find_python()?;
    eprintln!("xtask: installing {requirement} into {}", dest.display());
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "manylinux2014_x86_64",
            "--platform",
            "manylinux1_x86_64",
            "--upgrade",
            "--target",
        ])
        .arg(&dest)
        .arg(requirement)
        .status()
        .with_context(|| format!("running {python} -m pip"))?;
    if !status.success() {
        bail!("pip could not install {requirement}; install it by hand and pass its path");
    }
    std::fs::write(&marker, requirement)?;
    Ok(dest)
}

fn find_python() -> Result<String> {
    for candidate in ["python3", "python"] {
        if Command::new(candidate)
            .args(["-m", "pip", "--version"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
        {
            return Ok(candidate.to_string());
        }
    }
    bail!("neither python3 nor python with pip was found; install python3-pip")
}

/// Compares `generated` to the file at `path`; writes it unless `check` is set.
pub fn write_or_check(path: &Path, generated: &str, check: bool) -> Result<()> {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if check {
        if current != generated {
            bail!(
                "{} differs from the generator's output; run the xtask without --check and commit",
                path.display()
            );
        }
        eprintln!("xtask: {} is up to date", path.display());
    } else {
        std::fs::write(path, generated).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("xtask: wrote {}", path.display());
    }
    Ok(())
}
