//! `CUDA_GL_DRIVER_PATH` pointing at a file that is not a library. This is its own test binary so
//! that the variable is set before the process-wide driver is first loaded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cuda_gl_sys::{DRIVER_PATH_ENV, LoadError, driver};

#[test]
fn driver_path_that_is_not_a_library_gives_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("cuda-gl-sys-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("libcuda.so.1");
    std::fs::write(&fake, b"this is a text file, not a shared library\n").unwrap();
    // SAFETY: this test binary has a single test, so no other thread reads the environment now.
    unsafe { std::env::set_var(DRIVER_PATH_ENV, &fake) };

    let err = driver().err().expect("a text file cannot be a driver");
    let LoadError::NotFound { tried } = &err else {
        panic!("expected NotFound, got {err:?}");
    };
    assert_eq!(tried.len(), 1, "only the configured path is tried");
    assert_eq!(tried[0].path, fake);
    let text = err.to_string();
    assert!(text.contains(fake.to_str().unwrap()), "{text}");
    assert!(text.contains(DRIVER_PATH_ENV), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
