//! The lifetime rules, checked by the compiler: each file in `tests/ui/` must fail to compile with
//! the error recorded beside it.
//!
//! The recorded errors are those of `--all-features`, what CI runs (regenerate them with
//! `TRYBUILD=overwrite cargo test -p cuda-gl --all-features --test compile_fail`). With the
//! `cudarc` feature rustc names some types by their full path (`cuda_gl::MappedBuffer`), because
//! cudarc has types of the same names, so without it the messages differ and the test is ignored.
//!
//! A binary of its own, not a module of `gpu_suite`: trybuild runs cargo on the sources, which a
//! GPU host that runs the bundled test binaries has neither of, so the GPU run leaves this
//! binary out (`ci/gpu/suite.sh`); the suite's binary must run there.

#[test]
#[cfg_attr(
    not(feature = "cudarc"),
    ignore = "the expected errors are recorded with --all-features"
)]
fn misuse_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

/// The same for the cudarc interop (`tests/ui-cudarc/`), which needs the `cudarc` feature.
#[cfg(feature = "cudarc")]
#[test]
fn cudarc_misuse_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui-cudarc/*.rs");
}
