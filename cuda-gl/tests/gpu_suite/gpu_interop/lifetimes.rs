//! Resources that outlive their scope, thread or GL context: panics and leaked guards while
//! mapped, drops on other threads, a GL context destroyed first, and unregistering without GL.

use super::*;

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
    drop_and_delete_buffer(res, name);
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
