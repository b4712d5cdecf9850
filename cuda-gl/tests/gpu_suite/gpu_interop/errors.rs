//! Bad input and misuse on a real GPU: no GL context, names that are not GL objects, a second
//! registration, modules the driver cannot load, and kernel arguments that do not match.

use super::*;
use crate::gpu;

#[test]
fn error_no_gl_context_current() {
    let Some(g) = gpu() else { return };
    let name = gl_buffer(256, None);
    g.gl.release_current().unwrap();
    let err = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::NoGlContext { .. }), "{err:?}");
    assert!(err.to_string().contains("make_current"), "{err}");
    let err = gl_devices(GlDeviceList::All).unwrap_err();
    assert!(matches!(err, Error::NoGlContext { .. }), "{err:?}");
    g.gl.make_current().unwrap();
    delete_buffer(name);
}

#[test]
fn error_name_that_is_not_a_gl_object() {
    let Some(g) = gpu() else { return };
    let err = RegisteredBuffer::register(&g.ctx, 987_654, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(err, Error::NotAGlObject { name: 987_654, .. }),
        "{err:?}"
    );
    let err =
        RegisteredImage::register(&g.ctx, 987_654, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap_err();
    assert!(
        matches!(err, Error::NotAGlObject { name: 987_654, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("glGen"), "{err}");
    // A buffer name registered as a texture: the target does not match the object.
    let name = gl_buffer(256, None);
    let err = RegisteredImage::register(&g.ctx, name, ImageTarget::Texture2D, RegisterFlags::NONE)
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::NotAGlObject { .. }), "{err:?}");
    let err = RegisteredBuffer::register(&g.ctx, 0, RegisterFlags::NONE).unwrap_err();
    assert!(
        matches!(err, Error::Usage(UsageError::ZeroGlName { kind: "buffer" }))
            && err.to_string().contains("GL name 0"),
        "{err}"
    );
    delete_buffer(name);
}

#[test]
fn error_registering_the_same_object_twice() {
    let Some(g) = gpu() else { return };
    let (name, first) = registered_buffer(&g.ctx, 256, RegisterFlags::NONE);
    let err = second_registration_refused(&g.ctx, name);
    assert!(err.to_string().contains("unregister"), "{err}");
    // Textures live in another GL namespace: the same number is a different object.
    let tex = gl_texture_rgba8(4, 4, 1);
    drop(first);
    let again = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
    again.unregister().unwrap();
    delete_texture(tex);
    delete_buffer(name);
}

#[test]
fn error_ptx_newer_than_driver_and_not_ptx() {
    let Some(g) = gpu() else { return };
    let future = gpu::TEST_PTX.replacen(".version 8.0", ".version 99.9", 1);
    let err = Module::from_ptx(&g.ctx, &future).unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(err, Error::PtxTooNew { driver_version, .. } if driver_version >= 12000),
        "{err:?}"
    );
    assert!(err.to_string().contains("driver"), "{err}");
    let err = Module::from_ptx(&g.ctx, "this is not PTX").unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::InvalidModule { .. }), "{err:?}");
}

/// `cuModuleLoadDataEx` takes no length, so bytes that are not a whole cubin or fatbin would be
/// read past the end of the slice. They are refused before the driver is called: the error's
/// source names `cuModuleLoadDataEx (not called)`.
#[test]
fn error_cubin_that_is_junk_or_truncated_is_refused_before_the_driver() {
    let Some(g) = gpu() else { return };
    // A fatbin header claiming 1 MiB of entries, cut off after 24 bytes.
    let mut fatbin = 0xBA55_ED50u32.to_le_bytes().to_vec();
    fatbin.extend_from_slice(&1u16.to_le_bytes());
    fatbin.extend_from_slice(&16u16.to_le_bytes());
    fatbin.extend_from_slice(&(1u64 << 20).to_le_bytes());
    fatbin.extend_from_slice(&[0xAB; 8]);
    // An ELF64 header whose section-header table lies 1 GiB past the end.
    let mut elf = vec![0u8; 64];
    elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
    elf[0x28..0x30].copy_from_slice(&(1u64 << 30).to_le_bytes());
    elf[0x34] = 64;
    elf[0x3a] = 64;
    elf[0x3c] = 4;
    let junk: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8 + 1).collect();
    let cases: [(&str, &[u8]); 5] = [
        ("junk without a NUL", &junk),
        ("PTX text", gpu::TEST_PTX.as_bytes()),
        ("an ELF magic alone", b"\x7fELF not really"),
        ("a truncated ELF", &elf),
        ("a truncated fatbin", &fatbin),
    ];
    for (case, bytes) in cases {
        // SAFETY: none of these is a cubin: each must be refused by the header checks before the
        // driver reads it (what this test checks); a refusal reads nothing past the slice.
        let err = unsafe { Module::from_cubin(&g.ctx, bytes) }.unwrap_err();
        eprintln!("{case}: {err}");
        let Error::InvalidModule { log, source } = &err else {
            panic!("{case}: {err:?}");
        };
        assert_eq!(source.call, "cuModuleLoadDataEx (not called)", "{case}");
        assert!(!log.is_empty(), "{case}: the log says what is wrong");
    }
    // SAFETY: as above.
    let err = unsafe { Module::from_cubin(&g.ctx, gpu::TEST_PTX.as_bytes()) }.unwrap_err();
    assert!(err.to_string().contains("Module::from_ptx"), "{err}");
    // The context is unharmed.
    g.stream.synchronize().unwrap();
}

/// A hand `KernelArgs` whose `count()` disagrees with the pointers it passes is refused before
/// `cuLaunchKernel`, which would otherwise read a third pointer that does not exist.
#[test]
fn error_kernel_args_whose_pointers_disagree_with_their_count() {
    struct Lying(u64, u32);
    // SAFETY: deliberately breaks (1) of the contract (three announced, two pointers passed);
    // `launch` checks the count before the driver, which is what this test shows.
    unsafe impl cuda_gl::KernelArgs for Lying {
        fn sizes(&self) -> Vec<usize> {
            vec![8, 4, 4]
        }
        fn count(&self) -> usize {
            3
        }
        fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut std::ffi::c_void]) -> R) -> R {
            f(&mut [
                (&mut self.0 as *mut u64).cast(),
                (&mut self.1 as *mut u32).cast(),
            ])
        }
    }
    let Some(g) = gpu() else { return };
    let out = DeviceBuffer::<u32>::zeroed(&g.ctx, 1).unwrap();
    let fill = g.kernels.function("fill_u32").unwrap();
    // SAFETY: refused before the launch.
    let err = unsafe {
        fill.launch(
            LaunchConfig::for_elements(1),
            &g.stream,
            Lying(out.device_ptr().as_raw(), 1),
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Usage(UsageError::KernelArgsImpl {
                pointers: 2,
                count: 3,
                sizes: 3
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("count() is 3"), "{err}");
    g.stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![0]);
}

#[test]
fn error_kernel_launched_with_wrong_arguments() {
    let Some(g) = gpu() else { return };
    let fill = g.kernels.function("fill_u32").unwrap();
    assert_eq!(fill.param_sizes(), Some(&[8usize, 4, 4][..]));
    // SAFETY: rejected before the launch.
    let err =
        unsafe { fill.launch(LaunchConfig::for_elements(1), &g.stream, (1u32, 2u32)) }.unwrap_err();
    assert!(
        matches!(
            err,
            Error::KernelArguments {
                expected: 3,
                given: 2,
                ..
            }
        ),
        "{err:?}"
    );
    // SAFETY: rejected before the launch (a u32 where a pointer is declared).
    let err = unsafe { fill.launch(LaunchConfig::for_elements(1), &g.stream, (1u32, 2u32, 3u32)) }
        .unwrap_err();
    assert!(matches!(err, Error::KernelArguments { .. }), "{err:?}");
    assert!(g.kernels.function("no_such_kernel").is_err());
}
