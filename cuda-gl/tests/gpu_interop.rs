//! The safe API on a real GPU: registration, mapping, kernels writing and reading GL objects,
//! batches, surfaces, error cases and drop behaviour. Needs `--features egl` and a GPU; skips
//! with a reason elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    DeviceBuffer, Error, GlDeviceList, ImageTarget, LaunchConfig, MapFlags, Module, RegisterFlags,
    RegisteredBuffer, RegisteredImage, Resource, gl_devices, map_all,
};

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
    let name = gl_buffer(N * 4, None);
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::WRITE_DISCARD).unwrap();
    let fill = g.kernels.function("fill_u32").unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        // SAFETY: the mapped buffer holds N u32 words and stays mapped until the guard drops,
        // after the launch in stream order.
        unsafe {
            fill.launch(
                LaunchConfig::for_elements(N as u32),
                &g.stream,
                (mapped.device_ptr(), N as u32, 0xABCD_u32),
            )
        }
        .unwrap();
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
    let name = gl_buffer(N * 4, None);
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
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
            unsafe {
                fill.launch(
                    LaunchConfig::for_elements(N as u32),
                    &g.stream,
                    (mapped.device_ptr(), N as u32, seed),
                )
            }
            .unwrap();
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
    let tex = gl_texture_rgba8(w as i32, h as i32, 1);
    let mut res = RegisteredImage::register(
        &g.ctx,
        tex,
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
    )
    .unwrap();
    let write = g.kernels.function("surface_fill_rgba8").unwrap();
    for seed in [1u32, 2, 3] {
        let mapped = res.map(&g.stream).unwrap();
        let surface = mapped.surface().unwrap();
        // SAFETY: the surface covers the w x h texture and lives until the guard drops.
        unsafe {
            write.launch(
                LaunchConfig::for_image(w as u32, h as u32),
                &g.stream,
                (surface, w as i32, h as i32, seed),
            )
        }
        .unwrap();
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
    let mut rb = 0;
    // SAFETY: see above.
    unsafe {
        gl::GenRenderbuffers(1, &mut rb);
        gl::BindRenderbuffer(gl::RENDERBUFFER, rb);
        gl::RenderbufferStorage(gl::RENDERBUFFER, gl::RGBA8, 48, 16);
        gl::BindRenderbuffer(gl::RENDERBUFFER, 0);
    }
    check_gl();
    let mut res =
        RegisteredImage::register(&g.ctx, rb, ImageTarget::Renderbuffer, RegisterFlags::NONE)
            .unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        let a = mapped.array(0, 0).unwrap();
        assert_eq!((a.width(), a.height()), (48, 16));
    }
    drop(res);
    // SAFETY: see above.
    unsafe { gl::DeleteRenderbuffers(1, &rb) };

    // A 2D array texture with 3 layers.
    let mut arr = 0;
    // SAFETY: see above.
    unsafe {
        gl::GenTextures(1, &mut arr);
        gl::BindTexture(gl::TEXTURE_2D_ARRAY, arr);
        gl::TexStorage3D(gl::TEXTURE_2D_ARRAY, 1, gl::RGBA8, 16, 8, 3);
        gl::BindTexture(gl::TEXTURE_2D_ARRAY, 0);
    }
    check_gl();
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
    let name = gl_buffer(256, None);
    let first = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
    let err = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, Error::AlreadyRegistered { .. }), "{err:?}");
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
    let future = common::TEST_PTX.replacen(".version 8.0", ".version 99.9", 1);
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
    let err = Module::from_cubin(&g.ctx, b"\x7fELF not really").unwrap_err();
    assert!(
        matches!(err, Error::InvalidModule { .. } | Error::Cuda(_)),
        "{err:?}"
    );
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
    let name = gl_buffer(4096, None);
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _mapped = res.map(&g.stream).unwrap();
        panic!("boom inside the mapped scope");
    }));
    assert!(outcome.is_err());
    assert!(!res.is_mapped(), "unwinding must unmap");
    res.map(&g.stream).unwrap().unmap().unwrap();
    res.unregister().unwrap();
    g.ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

#[test]
fn forgotten_guard_is_recovered_before_the_next_map_and_unregister() {
    let Some(g) = gpu() else { return };
    let name = gl_buffer(4096, None);
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
    std::mem::forget(res.map(&g.stream).unwrap());
    assert!(res.is_mapped());
    let mapped = res.map(&g.stream).unwrap();
    assert_eq!(mapped.size(), 4096);
    drop(mapped);
    std::mem::forget(res.map(&g.stream).unwrap());
    res.unregister().unwrap();
    g.ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

#[test]
fn resource_dropped_on_another_thread() {
    let Some(g) = gpu() else { return };
    let name = gl_buffer(4096, None);
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
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
    let name = gl_buffer(4096, None);
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
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
    let name = gl_buffer(4096, None);
    let res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
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
                let name = gl_buffer(N * 4, None);
                let mut res =
                    RegisteredBuffer::register(&ctx, name, RegisterFlags::WRITE_DISCARD).unwrap();
                barrier.wait();
                for i in 0..50u32 {
                    let seed = t * 1000 + i;
                    {
                        let m = res.map(&stream).unwrap();
                        // SAFETY: N words, mapped until the guard drops.
                        unsafe {
                            fill.launch(
                                LaunchConfig::for_elements(N as u32),
                                &stream,
                                (m.device_ptr(), N as u32, seed),
                            )
                        }
                        .unwrap();
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
