//! The committed PTX of the plasma kernels loads on every supported driver: PTX ISA 8.0 or older
//! (CUDA 12.0, the oldest driver cuda-gl supports) and `.target sm_75`. Runs without a GPU.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

const PTX: &str = include_str!("../kernels/plasma.ptx");

/// The PTX's directives: lines that are not blank and not `//` comments.
fn directives() -> Vec<&'static str> {
    PTX.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect()
}

#[test]
fn starts_with_version_8_0_or_older() {
    let first = directives()[0];
    let version = first
        .strip_prefix(".version ")
        .unwrap_or_else(|| panic!("the PTX starts with `{first}`, not `.version X.Y`"));
    let (major, minor) = version
        .trim()
        .split_once('.')
        .unwrap_or_else(|| panic!("`{first}` is not `.version X.Y`"));
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    assert!(
        (major, minor) <= (8, 0),
        "PTX ISA {major}.{minor} needs a driver newer than CUDA 12.0; regenerate with `cargo \
         xtask ptx` (NVRTC 12.0)"
    );
}

#[test]
fn targets_sm_75() {
    let d = directives();
    assert_eq!(d[1], ".target sm_75", "the directive after .version");
    assert_eq!(d.iter().filter(|l| l.starts_with(".target")).count(), 1);
    assert!(d.contains(&".address_size 64"));
}

#[test]
fn has_both_kernels_with_four_parameters() {
    for kernel in ["plasma_pbo", "plasma_surface"] {
        let decl = format!(".visible .entry {kernel}(");
        let at = PTX
            .find(&decl)
            .unwrap_or_else(|| panic!("no `{decl}` in the PTX"));
        let params = &PTX[at + decl.len()..];
        let params = &params[..params.find(')').unwrap()];
        let sizes: Vec<&str> = params
            .split(',')
            .map(|p| p.split_whitespace().nth(1).unwrap_or(""))
            .collect();
        assert_eq!(sizes, [".u64", ".u32", ".u32", ".f32"], "{kernel}");
    }
}

#[test]
fn the_backend_embeds_this_file() {
    assert_eq!(plasma_demo::backend::cuda::PLASMA_PTX, PTX);
}
