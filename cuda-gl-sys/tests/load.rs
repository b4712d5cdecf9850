//! Loading the driver: typed errors without one, a real version with one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cuda_gl_sys::{LoadError, MIN_DRIVER_VERSION, default_library_names, driver, load_from};

fn require_gpu() -> bool {
    std::env::var("CUDA_GL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

#[test]
fn missing_library_lists_what_was_tried() {
    let path = "/nonexistent/cuda-gl-test/libcuda.so.1";
    // SAFETY: (1), (2): no file is there, so nothing is opened or called.
    let err = unsafe { load_from(path) }
        .err()
        .expect("a missing file cannot load");
    match &err {
        LoadError::NotFound { tried } => {
            assert_eq!(tried.len(), 1);
            assert_eq!(tried[0].path.to_str(), Some(path));
            assert!(!tried[0].reason.is_empty());
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains(path), "{text}");
    assert!(text.contains("CUDA_GL_DRIVER_PATH"), "{text}");
    assert!(text.contains("R525"), "{text}");
}

#[test]
fn a_library_without_cuda_symbols_is_rejected() {
    // libm is a real shared library that has none of the driver's entry points.
    let Some(libm) = ["libm.so.6", "libc.so.6"].into_iter().find(|name| {
        // SAFETY: libm and libc have no unusual initialisers.
        unsafe { libloading::Library::new(name) }.is_ok()
    }) else {
        eprintln!("skipped: no libm.so.6 or libc.so.6 to open on this system");
        return;
    };
    // SAFETY: (2): libm and libc are loaded in every Rust process already, so opening them runs
    // no initialiser. (1) does not hold, which is what the test is about: `from_library`
    // resolves every symbol before any is called and fails at the first missing one (libm
    // exports no `cu*` name), so nothing is called through a wrong signature.
    let err = unsafe { load_from(libm) }
        .err()
        .expect("libm is not a CUDA driver");
    match &err {
        LoadError::MissingSymbol { reason, .. } => assert!(reason.contains("cu"), "{reason}"),
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
    assert!(err.to_string().contains("not a CUDA 12.0+ driver"), "{err}");
}

#[test]
fn process_wide_driver_loads_or_names_every_candidate() {
    if std::env::var_os(cuda_gl_sys::DRIVER_PATH_ENV).is_some() {
        eprintln!("skipped: {} is set", cuda_gl_sys::DRIVER_PATH_ENV);
        return;
    }
    match driver() {
        Ok(_) => {
            let version = cuda_gl_sys::driver_version().unwrap();
            eprintln!("CUDA driver API version {version}");
            assert!(version >= MIN_DRIVER_VERSION, "version {version}");
        }
        Err(err) => {
            assert!(
                !require_gpu(),
                "CUDA_GL_REQUIRE_GPU=1 but the driver did not load: {err}"
            );
            eprintln!("skipped: no CUDA driver here ({err})");
            let LoadError::NotFound { tried } = &err else {
                panic!("expected NotFound, got {err:?}");
            };
            let names: Vec<_> = tried.iter().map(|a| a.path.to_string_lossy()).collect();
            assert_eq!(names, default_library_names());
            // The failure is kept: the second call reports the same thing.
            assert_eq!(driver().err().map(|e| e.to_string()), Some(err.to_string()));
        }
    }
}
