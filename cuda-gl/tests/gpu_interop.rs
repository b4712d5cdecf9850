//! The safe API on a real GPU: registration, mapping, kernels writing and reading GL objects,
//! batches, surfaces, error cases and drop behaviour. Needs `--features egl` and a GPU; skips
//! with a reason elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod gpu;

use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    DeviceBuffer, Error, GlDeviceList, ImageTarget, LaunchConfig, MapFlags, Module, PinnedBuffer,
    RegisterFlags, RegisteredBuffer, RegisteredImage, Resource, Stream, StreamFlags, gl_devices,
    map_all,
};
use gpu::*;

const N: usize = 64 * 1024;

#[test]
fn driver_devices_and_gl_devices() {
    let Some(g) = gpu() else { return };
    let version = cuda_gl::driver_version().unwrap();
    assert!(version >= 12000, "driver API version {version}");
    assert!(cuda_gl::Device::count().unwrap() >= 1);
    let name = g.device.name().unwrap();
    let (major, _) = g.device.compute_capability().unwrap();
    let total = g.device.total_memory().unwrap();
    eprintln!(
        "driver {version}, device 0: {name}, sm_{major}x, {} GiB",
        total >> 30
    );
    assert!(!name.is_empty() && major >= 5 && total > 0);
    assert!(
        g.gl.renderer().contains("NVIDIA"),
        "renderer {}",
        g.gl.renderer()
    );
    for list in [
        GlDeviceList::All,
        GlDeviceList::CurrentFrame,
        GlDeviceList::NextFrame,
    ] {
        let devices = gl_devices(list).unwrap();
        assert!(devices.contains(&g.device), "{list:?}: {devices:?}");
    }
}

#[test]
fn buffer_registers_with_each_flag_and_rejects_nonsense() {
    let Some(g) = gpu() else { return };
    let name = gl_buffer(4096, None);
    for flags in [
        RegisterFlags::NONE,
        RegisterFlags::READ_ONLY,
        RegisterFlags::WRITE_DISCARD,
    ] {
        let mut res = RegisteredBuffer::register(&g.ctx, name, flags).unwrap();
        assert_eq!(res.flags(), flags);
        let mapped = res.map(&g.stream).unwrap();
        assert_eq!(mapped.size(), 4096);
        mapped.unmap().unwrap();
        res.unregister().unwrap();
    }
    for bad in [
        RegisterFlags::READ_ONLY | RegisterFlags::WRITE_DISCARD,
        RegisterFlags::SURFACE_LOAD_STORE,
        RegisterFlags::TEXTURE_GATHER,
    ] {
        let err = RegisteredBuffer::register(&g.ctx, name, bad).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{bad:?}: {err}");
    }
    delete_buffer(name);
}

#[test]
fn kernel_writes_buffer_and_gl_reads_exact_bytes() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::WRITE_DISCARD);
    let fill = g.kernels.function("fill_u32").unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        // SAFETY: the mapped buffer holds N u32 words and stays mapped until the guard drops,
        // after the launch in stream order.
        unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), N, 0xABCD_u32) }.unwrap();
    }
    g.stream.synchronize().unwrap();
    assert_eq!(read_gl_buffer(name, N), pattern_words(N, 0xABCD));
    drop(res);
    delete_buffer(name);
}

#[test]
fn gl_writes_and_cuda_reads_read_only() {
    let Some(g) = gpu() else { return };
    let data = pattern_words(N, 77);
    let name = gl_buffer(N * 4, Some(&data));
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::READ_ONLY).unwrap();
    let copy = DeviceBuffer::<u32>::zeroed(&g.ctx, N).unwrap();
    let mismatches = DeviceBuffer::<u32>::zeroed(&g.ctx, 1).unwrap();
    let check = g.kernels.function("copy_check_u32").unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        // SAFETY: input N words (mapped), output N words, one counter word.
        unsafe {
            check.launch(
                LaunchConfig::for_elements(N as u32),
                &g.stream,
                (
                    mapped.device_ptr(),
                    copy.device_ptr(),
                    N as u32,
                    77u32,
                    mismatches.device_ptr(),
                ),
            )
        }
        .unwrap();
    }
    g.stream.synchronize().unwrap();
    assert_eq!(mismatches.to_vec().unwrap(), vec![0]);
    assert_eq!(copy.to_vec().unwrap(), data);
    drop(res);
    delete_buffer(name);
}

#[test]
fn batch_maps_eight_mixed_resources_in_one_call() {
    let Some(g) = gpu() else { return };
    let names: Vec<u32> = (0..6).map(|_| gl_buffer(N * 4, None)).collect();
    let textures: Vec<u32> = (0..2).map(|_| gl_texture_rgba8(64, 32, 1)).collect();
    let mut buffers: Vec<RegisteredBuffer> = names
        .iter()
        .map(|&n| RegisteredBuffer::register(&g.ctx, n, RegisterFlags::WRITE_DISCARD).unwrap())
        .collect();
    let mut images: Vec<RegisteredImage> = textures
        .iter()
        .map(|&t| {
            RegisteredImage::register(
                &g.ctx,
                t,
                ImageTarget::Texture2D,
                RegisterFlags::SURFACE_LOAD_STORE,
            )
            .unwrap()
        })
        .collect();
    let fill = g.kernels.function("fill_u32").unwrap();
    {
        let mut list: Vec<Resource<'_>> = buffers.iter_mut().map(Resource::from).collect();
        list.extend(images.iter_mut().map(Resource::from));
        let batch = map_all(list, &g.stream).unwrap();
        assert_eq!(batch.len(), 8);
        for i in 0..6 {
            let (ptr, size) = batch.buffer(i).unwrap();
            assert_eq!(size, N * 4);
            // SAFETY: each mapped buffer holds N words, mapped until the batch drops.
            unsafe {
                fill.launch(
                    LaunchConfig::for_elements(N as u32),
                    &g.stream,
                    (ptr, N as u32, i as u32),
                )
            }
            .unwrap();
        }
        for i in 6..8 {
            let array = batch.image_array(i, 0, 0).unwrap();
            assert_eq!(
                (array.width(), array.height(), array.channels()),
                (64, 32, 4)
            );
            assert!(matches!(batch.buffer(i), Err(Error::InvalidArgument(_))));
        }
        assert!(matches!(
            batch.image_array(0, 0, 0),
            Err(Error::InvalidArgument(_))
        ));
        batch.unmap().unwrap();
    }
    g.stream.synchronize().unwrap();
    for (i, &n) in names.iter().enumerate() {
        assert_eq!(
            read_gl_buffer(n, N),
            pattern_words(N, i as u32),
            "buffer {i}"
        );
    }
    drop(buffers);
    drop(images);
    names.into_iter().for_each(delete_buffer);
    textures.into_iter().for_each(delete_texture);
}

#[test]
fn set_map_flags_then_map() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::NONE);
    let fill = g.kernels.function("fill_u32").unwrap();
    for (flags, seed) in [
        (MapFlags::WriteDiscard, 5u32),
        (MapFlags::None, 6),
        (MapFlags::ReadOnly, 6),
    ] {
        res.set_map_flags(flags).unwrap();
        assert_eq!(res.map_flags(), flags);
        let mapped = res.map(&g.stream).unwrap();
        if flags != MapFlags::ReadOnly {
            // SAFETY: N words, mapped until the guard drops.
            unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), N, seed) }.unwrap();
        }
        drop(mapped);
        g.stream.synchronize().unwrap();
        assert_eq!(read_gl_buffer(name, N), pattern_words(N, seed), "{flags:?}");
    }
    drop(res);
    delete_buffer(name);
}

#[test]
fn surface_write_into_texture_that_gl_reads() {
    let Some(g) = gpu() else { return };
    let (w, h) = (333usize, 97usize);
    let (tex, mut res) = surface_texture_rgba8(&g.ctx, w, h);
    let write = g.kernels.function("surface_fill_rgba8").unwrap();
    for seed in [1u32, 2, 3] {
        let mapped = res.map(&g.stream).unwrap();
        let surface = mapped.surface().unwrap();
        // SAFETY: the surface covers the w x h texture and lives until the guard drops.
        unsafe { launch_image(&write, &g.stream, surface, (w, h), seed) }.unwrap();
        drop(mapped);
        g.stream.synchronize().unwrap();
        let texels = read_texture_rgba8(tex, w, h, 0);
        assert_eq!(texels, pattern_words(w * h, seed), "seed {seed}");
    }
    drop(res);
    delete_texture(tex);
}

#[test]
fn images_of_each_kind_map_as_arrays() {
    let Some(g) = gpu() else { return };
    // SAFETY (all GL blocks below): the test's GL context is current on this thread.
    // A mipmapped 2D texture: level n is (64 >> n) x (32 >> n).
    let tex = gl_texture_rgba8(64, 32, 4);
    let mut res =
        RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        for level in 0..4u32 {
            let a = mapped.array(0, level).unwrap();
            assert_eq!(
                (a.width(), a.height()),
                (64 >> level, 32 >> level),
                "level {level}"
            );
            let m = mapped.mipmapped_array().unwrap().level(level).unwrap();
            assert_eq!(m.width(), 64 >> level);
        }
        let err = mapped.array(0, 9).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSubresource { level: 9, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("mip level"), "{err}");
    }
    drop(res);
    delete_texture(tex);

    // A renderbuffer.
    let rb = gl_renderbuffer_rgba8(48, 16);
    let mut res =
        RegisteredImage::register(&g.ctx, rb, ImageTarget::Renderbuffer, RegisterFlags::NONE)
            .unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        let a = mapped.array(0, 0).unwrap();
        assert_eq!((a.width(), a.height()), (48, 16));
    }
    drop(res);
    delete_renderbuffer(rb);

    // A 2D array texture with 3 layers.
    let arr = gl_texture_storage(gl::TEXTURE_2D_ARRAY, 1, 16, 8, 3);
    let mut res = RegisteredImage::register(
        &g.ctx,
        arr,
        ImageTarget::Texture2DArray,
        RegisterFlags::SURFACE_LOAD_STORE,
    )
    .unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        for layer in 0..3 {
            let a = mapped.array(layer, 0).unwrap();
            assert_eq!((a.width(), a.height()), (16, 8), "layer {layer}");
        }
        let err = mapped.array(3, 0).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSubresource { index: 3, .. }),
            "{err}"
        );
    }
    drop(res);
    delete_texture(arr);
}

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
        matches!(err, Error::InvalidArgument(ref m) if m.contains("GL name 0")),
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
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
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

#[test]
fn panic_inside_a_mapped_scope_unmaps() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _mapped = res.map(&g.stream).unwrap();
        panic!("boom inside the mapped scope");
    }));
    assert!(outcome.is_err());
    assert!(!res.is_mapped(), "unwinding must unmap");
    res.map(&g.stream).unwrap().unmap().unwrap();
    unregister_and_delete(&g.ctx, res, name);
}

#[test]
fn forgotten_guard_is_recovered_before_the_next_map_and_unregister() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    std::mem::forget(res.map(&g.stream).unwrap());
    assert!(res.is_mapped());
    let mapped = res.map(&g.stream).unwrap();
    assert_eq!(mapped.size(), 4096);
    drop(mapped);
    std::mem::forget(res.map(&g.stream).unwrap());
    unregister_and_delete(&g.ctx, res, name);
}

#[test]
fn resource_dropped_on_another_thread() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    res.map(&g.stream).unwrap().unmap().unwrap();
    // With the GL context moved along and made current there, the drop unregisters cleanly.
    let Gpu {
        gl,
        kernels,
        stream,
        ctx,
        device,
    } = g;
    gl.release_current().unwrap();
    let gl = std::thread::spawn(move || {
        gl.make_current().unwrap();
        drop(res);
        gl.release_current().unwrap();
        gl
    })
    .join()
    .unwrap();
    gl.make_current().unwrap();
    ctx.check_drop_errors().unwrap();

    // On a thread where no GL context is current, the driver refuses to unregister: the drop
    // neither panics nor aborts; it logs and records a NoGlContext error that says what to do.
    let mut res = RegisteredBuffer::register(&ctx, name, RegisterFlags::NONE).unwrap();
    res.map(&stream).unwrap().unmap().unwrap();
    std::thread::spawn(move || drop(res)).join().unwrap();
    let errors = ctx.take_drop_errors();
    eprintln!("drop without a GL context: {errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].name, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT");
    drop((kernels, stream, ctx, device));
    delete_buffer(name);
}

#[test]
fn map_from_a_thread_without_gl_context_says_what_to_do() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    let ctx = g.ctx.clone();
    let err = std::thread::scope(|s| {
        s.spawn(|| {
            let stream = cuda_gl::Stream::new(&ctx, cuda_gl::StreamFlags::NonBlocking).unwrap();
            res.map(&stream).map(|_| ()).unwrap_err()
        })
        .join()
        .unwrap()
    });
    eprintln!("map on a thread with no GL context: {err}");
    assert!(matches!(err, Error::NoGlContext { .. }), "{err:?}");
    assert!(!res.is_mapped());
    res.map(&g.stream).unwrap().unmap().unwrap();
    drop(res);
    delete_buffer(name);
}

#[test]
fn gl_context_destroyed_before_the_resource() {
    let Some(g) = gpu() else { return };
    // A second GL context on the same device owns the buffer and goes away first.
    let other = HeadlessContext::for_cuda_device(&g.device).unwrap();
    let (_, res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    drop(other);
    g.gl.make_current().unwrap();
    drop(res); // must not panic or abort; a failure is logged and recorded
    let errors = g.ctx.take_drop_errors();
    eprintln!(
        "drop after the GL context was destroyed recorded {} error(s): {errors:?}",
        errors.len()
    );
}

#[test]
fn two_threads_with_their_own_gl_contexts() {
    let Some(g) = gpu() else { return };
    let device = g.device;
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let handles: Vec<_> = (0..2u32)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let gl = HeadlessContext::for_cuda_device(&device).unwrap();
                let ctx = cuda_gl::Context::new(&device).unwrap();
                let stream = cuda_gl::Stream::new(&ctx, cuda_gl::StreamFlags::NonBlocking).unwrap();
                let kernels = Module::from_ptx(&ctx, TEST_PTX).unwrap();
                let fill = kernels.function("fill_u32").unwrap();
                let (name, mut res) = registered_buffer(&ctx, N * 4, RegisterFlags::WRITE_DISCARD);
                barrier.wait();
                for i in 0..50u32 {
                    let seed = t * 1000 + i;
                    {
                        let m = res.map(&stream).unwrap();
                        // SAFETY: N words, mapped until the guard drops.
                        unsafe { launch_words(&fill, &stream, m.device_ptr(), N, seed) }.unwrap();
                    }
                    stream.synchronize().unwrap();
                    assert_eq!(read_gl_buffer(name, N), pattern_words(N, seed));
                }
                drop(res);
                delete_buffer(name);
                drop(gl);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn event_query_reports_pending_and_finished_work() {
    let Some(g) = gpu() else { return };
    let event = cuda_gl::Event::new(&g.ctx, false).unwrap();
    assert!(
        event.query().unwrap(),
        "an event never recorded counts as finished"
    );
    const N: usize = 1024;
    let out = cuda_gl::DeviceBuffer::<u32>::zeroed(&g.ctx, N).unwrap();
    let slow = g.kernels.function("ext_fill_u32_slow").unwrap();
    // SAFETY: `out` holds N words and outlives the stream synchronize below.
    unsafe {
        slow.launch(
            LaunchConfig::for_elements(N as u32),
            &g.stream,
            (out.device_ptr(), N as u32, 7u32, 50_000_000u64),
        )
    }
    .unwrap();
    event.record(&g.stream).unwrap();
    assert!(
        !event.query().unwrap(),
        "the event follows a 50 ms kernel, so it cannot have finished yet"
    );
    event.synchronize().unwrap();
    assert!(event.query().unwrap());
    assert_eq!(out.to_vec().unwrap(), pattern_words(N, 7));
}

#[test]
fn try_unregister_without_gl_hands_the_resource_back() {
    let Some(g) = gpu() else { return };
    let name = gl_buffer(4096, None);
    let tex = gl_texture_rgba8(16, 16, 1);
    let buffer = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
    let image = RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
        .unwrap();
    g.gl.release_current().unwrap();
    let (buffer, err) = buffer.try_unregister().unwrap_err();
    assert!(matches!(err, Error::NoGlContext { .. }), "{err:?}");
    let (image, err) = image.try_unregister().unwrap_err();
    assert!(matches!(err, Error::NoGlContext { .. }), "{err:?}");
    g.gl.make_current().unwrap();
    buffer.try_unregister().map_err(|(_, e)| e).unwrap();
    image.try_unregister().map_err(|(_, e)| e).unwrap();
    // Nothing was left behind: the objects register again, and no drop error was recorded.
    RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE)
        .unwrap()
        .unregister()
        .unwrap();
    RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
        .unwrap()
        .unregister()
        .unwrap();
    g.ctx.check_drop_errors().unwrap();
    delete_buffer(name);
    delete_texture(tex);
}

/// Queues `ext_fill_u32_slow` on the test stream: `out` = pattern(seed) after `spin_ms` of
/// spinning, in one wave of 1024 blocks (grid-stride over `out`).
fn slow_fill(g: &Gpu, out: &DeviceBuffer<u32>, seed: u32, spin_ms: u64) {
    let slow = g.kernels.function("ext_fill_u32_slow").unwrap();
    let config = LaunchConfig {
        grid: (1024, 1, 1),
        ..LaunchConfig::for_elements(256)
    };
    // SAFETY: `out` holds `len` words and outlives the test's synchronization of the stream
    // (every caller reads it back with a call that waits for the stream or the context).
    unsafe {
        slow.launch(
            config,
            &g.stream,
            (
                out.device_ptr(),
                out.len() as u32,
                seed,
                spin_ms * 1_000_000,
            ),
        )
    }
    .unwrap();
}

/// How many of `words` (sampled every `step`) differ from pattern(seed).
fn stale_words(words: &[u32], seed: u32, step: usize) -> usize {
    (0..words.len())
        .step_by(step)
        .filter(|&i| words[i] != pattern(i as u32, seed))
        .count()
}

/// A pinned read right after an asynchronous copy sees the copied data: `as_slice` waits for
/// the copy's event. Without that wait (the raw read below shows it) the read sees the zeroes
/// the buffer held before, as seen on an H200. Dropping a buffer under a copy waits too, and
/// records no error.
#[test]
fn pinned_read_right_after_an_async_copy_sees_the_copied_data() {
    let Some(g) = gpu() else { return };
    const WORDS: usize = 64 << 20; // 256 MiB
    let device = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    slow_fill(&g, &device, 0x5EED, 50);
    pinned.copy_from_device_async(&device, &g.stream).unwrap();
    let raw = pinned.as_ptr();
    // SAFETY: `raw` points to WORDS live words. The DMA may be writing them: volatile reads,
    // as of memory-mapped I/O, return some value of each word (any bits are a valid u32). This
    // shows the hazard `as_slice` closes; only the count is printed, nothing is asserted on it.
    let raw_stale = (0..WORDS)
        .step_by(4099)
        .filter(|&i| unsafe { raw.add(i).read_volatile() } != pattern(i as u32, 0x5EED))
        .count();
    eprintln!(
        "raw read before the wait: {raw_stale} of {} sampled words stale",
        WORDS.div_ceil(4099)
    );
    let words = pinned.as_slice().unwrap();
    assert_eq!(stale_words(words, 0x5EED, 1), 0, "as_slice saw stale words");
    // A copy on another stream is ordered after the first (both write the buffer).
    let other = Stream::new(&g.ctx, StreamFlags::NonBlocking).unwrap();
    slow_fill(&g, &device, 0xF00D, 50);
    pinned.copy_from_device_async(&device, &g.stream).unwrap();
    let mut second = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    second.memset_async(0x11, &other).unwrap();
    pinned.copy_from_device_async(&second, &other).unwrap();
    let words = pinned.as_mut_slice().unwrap();
    assert!(words.iter().step_by(4099).all(|&w| w == 0x1111_1111));
    // Dropped under a copy: the drop waits, then frees.
    slow_fill(&g, &device, 0xBEEF, 50);
    pinned.copy_from_device_async(&device, &g.stream).unwrap();
    drop(pinned);
    g.ctx.check_drop_errors().unwrap();
}

/// The plain copies are ordered after kernels on a `NonBlocking` stream: `to_vec` waits for the
/// context, `copy_from_slice` waits before and after. Without those waits they run on the legacy
/// default stream while the kernels still spin, and read (or are overwritten by) the kernels'
/// old data. The stream-taking forms are ordered on their stream.
#[test]
fn plain_copies_are_ordered_after_kernels_on_a_non_blocking_stream() {
    let Some(g) = gpu() else { return };
    const WORDS: usize = 1 << 20;
    let mut buf = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    for seed in 1..=8 {
        slow_fill(&g, &buf, seed, 10);
    }
    let words = buf.to_vec().unwrap();
    assert_eq!(
        stale_words(&words, 8, 1),
        0,
        "to_vec read before the kernels ended"
    );
    // The kernel would overwrite the copy if the copy did not wait for it.
    slow_fill(&g, &buf, 9, 50);
    let data = pattern_words(WORDS, 10);
    buf.copy_from_slice(&data).unwrap();
    assert_eq!(stale_words(&buf.to_vec().unwrap(), 10, 1), 0);
    // Stream-ordered forms.
    slow_fill(&g, &buf, 11, 50);
    assert_eq!(stale_words(&buf.to_vec_on(&g.stream).unwrap(), 11, 1), 0);
    slow_fill(&g, &buf, 12, 50);
    buf.copy_from_slice_on(&pattern_words(WORDS, 13), &g.stream)
        .unwrap();
    assert_eq!(stale_words(&buf.to_vec_on(&g.stream).unwrap(), 13, 1), 0);
    let zeroes = DeviceBuffer::<u32>::zeroed_on(&g.ctx, WORDS, &g.stream).unwrap();
    assert!(zeroes.to_vec_on(&g.stream).unwrap().iter().all(|&w| w == 0));
    let copy = DeviceBuffer::from_slice(&g.ctx, &data).unwrap();
    assert_eq!(copy.to_vec().unwrap(), data);
}
