//! The run-time half of the safety model on a real GPU: objects are not destroyed under running
//! kernels, calls with the wrong GL context current are refused, and a GL object is registered
//! once per process however many contexts ask. Needs `--features egl` and a GPU; skips with a
//! reason elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{Error, Event, ImageTarget, LaunchConfig, RegisterFlags};
use cuda_gl::{MappedImage, RegisteredImage, Stream};
use cuda_gl::{RegisteredBuffer, UsageError};
use std::time::{Duration, Instant};

/// How long the slow kernel spins before it writes: long enough that the host reaches the
/// destruction points well before the kernel ends.
const SPIN: Duration = Duration::from_millis(300);
const W: usize = 256;
const H: usize = 128;

fn surface_texture(g: &Gpu) -> (u32, RegisteredImage) {
    let tex = gl_texture_rgba8(W as i32, H as i32, 1);
    let image = RegisteredImage::register(
        &g.ctx,
        tex,
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE,
    )
    .unwrap();
    (tex, image)
}

/// Queues the slow surface writer (pattern `seed` after [`SPIN`]) on `stream`.
fn launch_slow_write(g: &Gpu, stream: &Stream, surface: cuda_gl::Surface<'_>, seed: u32) {
    let slow = g.kernels.function("surface_fill_rgba8_slow").unwrap();
    // A grid that fits on the GPU at once, so the kernel takes about SPIN in all.
    let config = LaunchConfig::for_image(W as u32, H as u32);
    // SAFETY: the surface covers the W x H texture and stays valid until the work queued before
    // the unmap is done (what this test checks); the kernel runs on the map's stream.
    unsafe {
        slow.launch(
            config,
            stream,
            (surface, W as i32, H as i32, seed, SPIN.as_nanos() as u64),
        )
    }
    .unwrap();
}

/// Maps `image` on `g.stream`, queues the slow writer of pattern `seed` through a surface object
/// of its own over array 0, drops that object while the kernel runs (the image retires it) and
/// unmaps. Returns the event recorded after the kernel.
fn retire_under_slow_write(g: &Gpu, image: &mut RegisteredImage, seed: u32) -> Event {
    let mapped: MappedImage<'_> = image.map(&g.stream).unwrap();
    let array = mapped.array(0, 0).unwrap();
    let surface = mapped.create_surface(&array).unwrap();
    launch_slow_write(g, &g.stream, surface.handle(), seed);
    drop(surface);
    mapped.unmap().unwrap();
    mark(g)
}

/// Maps `image` on `g.stream` and queues the slow writer of pattern `seed` through the
/// mapping's cached surface object; returns the mapping (which borrows the stream).
fn slow_write_through_cached_surface<'i>(
    g: &'i Gpu,
    image: &'i mut RegisteredImage,
    seed: u32,
) -> MappedImage<'i> {
    let mapped = image.map(&g.stream).unwrap();
    launch_slow_write(g, &g.stream, mapped.surface().unwrap(), seed);
    mapped
}

/// With the kernels done, a map and unmap on `stream` frees every retired object; then the
/// texture holds the kernel's pattern `seed`, and the image unregisters with no drop error
/// recorded before the texture is deleted.
fn map_frees_retired_and_release(
    g: &Gpu,
    stream: &Stream,
    (tex, mut image): (u32, RegisteredImage),
    seed: u32,
) {
    image.map(stream).unwrap().unmap().unwrap();
    assert_eq!(image.retired_objects(), 0, "freed once the kernel is done");
    assert_eq!(read_texture_rgba8(tex, W, H, 0), pattern_words(W * H, seed));
    image.unregister().unwrap();
    g.ctx.check_drop_errors().unwrap();
    delete_texture(tex);
}

fn mark(g: &Gpu) -> Event {
    let event = Event::new(&g.ctx, false).unwrap();
    event.record(&g.stream).unwrap();
    event
}

#[test]
fn surface_object_dropped_while_its_kernel_runs_waits_for_it() {
    let Some(g) = gpu() else { return };
    let (tex, mut image) = surface_texture(&g);
    let kernel_done = retire_under_slow_write(&g, &mut image, 7);
    assert!(
        !kernel_done.query().unwrap(),
        "the slow kernel ended before the host got here; raise SPIN"
    );
    assert_eq!(
        image.retired_objects(),
        1,
        "a surface object under a running kernel must wait, not be destroyed"
    );
    // The next map destroys it only once the kernel is done: here it still runs.
    image.map(&g.stream).unwrap().unmap().unwrap();
    if !kernel_done.query().unwrap() {
        assert_eq!(image.retired_objects(), 1);
    }
    g.stream.synchronize().unwrap();
    map_frees_retired_and_release(&g, &g.stream, (tex, image), 7);
}

#[test]
fn unregister_waits_for_kernels_using_cached_surfaces() {
    let Some(g) = gpu() else { return };
    let (tex, mut image) = surface_texture(&g);
    let mapped = slow_write_through_cached_surface(&g, &mut image, 9);
    mapped.unmap().unwrap();
    let kernel_done = mark(&g);
    assert_eq!(image.cached_surfaces(), 1);
    let start = Instant::now();
    image.unregister().unwrap();
    let waited = start.elapsed();
    assert!(
        kernel_done.query().unwrap(),
        "unregister destroyed the cached surface while its kernel still ran (returned after \
         {waited:?})"
    );
    eprintln!("unregister waited {waited:?} for the kernel");
    g.ctx.check_drop_errors().unwrap();
    assert_eq!(read_texture_rgba8(tex, W, H, 0), pattern_words(W * H, 9));
    delete_texture(tex);
}

#[test]
fn dropping_a_resource_waits_for_kernels_using_its_surfaces() {
    let Some(g) = gpu() else { return };
    let (tex, mut image) = surface_texture(&g);
    let mapped = slow_write_through_cached_surface(&g, &mut image, 11);
    drop(mapped);
    let kernel_done = mark(&g);
    drop(image);
    assert!(
        kernel_done.query().unwrap(),
        "dropped under a running kernel"
    );
    g.ctx.check_drop_errors().unwrap();
    delete_texture(tex);
}

#[test]
fn calls_with_another_gl_context_current_are_refused() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    let other = HeadlessContext::for_cuda_device(&g.device).unwrap();
    other.make_current().unwrap();

    let err = res.map(&g.stream).map(|_| ()).unwrap_err();
    eprintln!("map with another GL context current: {err}");
    assert!(matches!(err, Error::WrongGlContext { .. }), "{err:?}");
    assert!(err.to_string().contains("help:"), "{err}");
    assert!(!res.is_mapped());

    let (mut res, err) = res.try_unregister().unwrap_err();
    assert!(matches!(err, Error::WrongGlContext { .. }), "{err:?}");

    // A leaked mapping is not recovered under the wrong context either.
    g.gl.make_current().unwrap();
    std::mem::forget(res.map(&g.stream).unwrap());
    other.make_current().unwrap();
    let (res, err) = res.try_unregister().unwrap_err();
    assert!(matches!(err, Error::WrongGlContext { .. }), "{err:?}");
    assert!(res.is_mapped());

    g.gl.make_current().unwrap();
    res.unregister().unwrap();
    drop(other);
    g.gl.make_current().unwrap();
    g.ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

#[test]
fn one_name_in_two_unrelated_contexts_registers_twice_but_one_object_once() {
    let Some(g) = gpu() else { return };
    let (name, first) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    second_registration_refused(&g.ctx, name);

    // Another context that shares nothing has its own buffer of the same number: the share
    // group's identity tells the two apart.
    let other = HeadlessContext::for_cuda_device(&g.device).unwrap();
    other.make_current().unwrap();
    let mut names = Vec::new();
    while names.last().is_none_or(|&n| n < name) {
        names.push(gl_buffer(4096, None));
    }
    assert!(
        names.contains(&name),
        "the other context never handed out GL name {name}: {names:?}"
    );
    let second = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
    second.unregister().unwrap();
    for n in names {
        delete_buffer(n);
    }
    drop(other);

    g.gl.make_current().unwrap();
    first.unregister().unwrap();
    assert_eq!(
        buffer_label(name),
        "",
        "cuda-gl left a label on the object (it labels only its own canaries)"
    );
    check_gl();
    delete_buffer(name);
}

#[test]
fn a_retired_object_stays_covered_when_the_next_unmap_is_on_another_stream() {
    let Some(g) = gpu() else { return };
    let (tex, mut image) = surface_texture(&g);
    let other = Stream::new(&g.ctx, cuda_gl::StreamFlags::NonBlocking).unwrap();
    let kernel_done = retire_under_slow_write(&g, &mut image, 13);
    // Two more mappings on another stream, whose own work ends at once: the second map would
    // destroy the retired object if the event covered only the last unmap's stream.
    image.map(&other).unwrap().unmap().unwrap();
    image.map(&other).unwrap().unmap().unwrap();
    if !kernel_done.query().unwrap() {
        assert_eq!(
            image.retired_objects(),
            1,
            "destroyed while the kernel on the first stream still runs"
        );
    }
    // The event's last record is on the other stream, behind its unmaps: once both streams are
    // done, the next map frees the object.
    g.stream.synchronize().unwrap();
    other.synchronize().unwrap();
    map_frees_retired_and_release(&g, &other, (tex, image), 13);
}

#[test]
fn objects_over_another_mappings_array_and_writes_into_read_only_buffers_are_refused() {
    let Some(g) = gpu() else { return };
    let (tex_a, mut a) = surface_texture(&g);
    let (tex_b, mut b) = surface_texture(&g);
    let pbo = gl_buffer(W * H * 4, None);
    let mut read_only = RegisteredBuffer::register(&g.ctx, pbo, RegisterFlags::READ_ONLY).unwrap();
    {
        let ma = a.map(&g.stream).unwrap();
        let mb = b.map(&g.stream).unwrap();
        let b_array = mb.array(0, 0).unwrap();
        let err = ma.create_surface(&b_array).map(|_| ()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Usage(UsageError::ArrayOfAnotherMapping {
                    what: "surface object",
                    ..
                })
            ),
            "{err:?}"
        );
        let desc = cuda_gl::TexDesc::default();
        let err = ma.create_tex(&b_array, &desc).map(|_| ()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Usage(UsageError::ArrayOfAnotherMapping {
                    what: "texture object",
                    ..
                })
            ),
            "{err:?}"
        );
        // The array's own guard may.
        drop(mb.create_surface(&b_array).unwrap());
        let buffer = read_only.map(&g.stream).unwrap();
        assert_refused(
            ma.array(0, 0).unwrap().copy_to_buffer(&buffer),
            |e| matches!(e, UsageError::ReadOnlyMapping { .. }),
            "read-only",
        );
    }
    drop((a, b, read_only));
    g.ctx.check_drop_errors().unwrap();
    delete_texture(tex_a);
    delete_texture(tex_b);
    delete_buffer(pbo);
}

/// Gives texture `tex` (bound to nothing) new mutable storage of `W` x `H` RGBA8, as an
/// application's own `glTexImage2D` does (level 0 only, no filtering over missing levels).
/// Returns the GL errors the call raised (the respecification of a texture registered with
/// CUDA may be refused).
fn specify_mutable_rgba8(tex: u32) -> Vec<gl::types::GLenum> {
    // SAFETY: a GL context is current; `tex` is a texture name of it; no pixels are passed and
    // no unpack buffer is bound.
    unsafe {
        gl::BindTexture(gl::TEXTURE_2D, tex);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MIN_FILTER, gl::NEAREST as i32);
        gl::TexImage2D(
            gl::TEXTURE_2D,
            0,
            gl::RGBA8 as i32,
            W as i32,
            H as i32,
            0,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            std::ptr::null(),
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    gl_kit::check::take_errors()
}

/// A mutable texture (`glTexImage2D`) respecified between maps with the same size and format,
/// a correct GL call of the application's: GL may give it new storage, and the driver a new
/// array, possibly at the handle of the freed old one (with the same shape). A kernel writing
/// through the mapping's surface (`MappedImage::surface`, kept across maps while the array
/// looks the same) must write the new storage: GL then reads its pattern. A surface object
/// kept over the old array would write memory GL no longer uses (a silent wrong result, or
/// freed memory). Several rounds, so that a reused handle has its chance. NVIDIA's GL (driver
/// 580.159.04, 2026-12-07) refuses the respecification of a registered texture
/// (`GL_INVALID_OPERATION`), so that its storage cannot change under the registration: the
/// rounds then check that the kernel's writes still reach the texture GL reads.
#[test]
fn a_surface_after_the_application_respecifies_its_texture_writes_the_new_storage() {
    let Some(g) = gpu() else { return };
    let mut tex = 0;
    // SAFETY: a GL context is current; `tex` is a valid out-pointer.
    unsafe { gl::GenTextures(1, &mut tex) };
    assert_eq!(specify_mutable_rgba8(tex), [], "the first specification");
    let mut refused = 0;
    let flags = RegisterFlags::SURFACE_LOAD_STORE;
    let mut image = RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, flags).unwrap();
    let fill = g.kernels.function("surface_fill_rgba8").unwrap();
    for seed in 1..=8u32 {
        let mapped = image.map(&g.stream).unwrap();
        let surface = mapped.surface().unwrap();
        // SAFETY: the surface covers the W x H texture; the kernel runs on the map's stream,
        // before the unmap; `surface_fill_rgba8(surface, int, int, unsigned)`.
        unsafe {
            fill.launch(
                LaunchConfig::for_image(W as u32, H as u32),
                &g.stream,
                (surface, W as i32, H as i32, seed),
            )
        }
        .unwrap();
        mapped.unmap().unwrap();
        g.stream.synchronize().unwrap();
        assert_eq!(
            read_texture_rgba8(tex, W, H, 0),
            pattern_words(W * H, seed),
            "round {seed}: GL does not see what the kernel wrote through the mapping's surface"
        );
        match specify_mutable_rgba8(tex).as_slice() {
            [] => {}
            [gl::INVALID_OPERATION] => refused += 1,
            other => panic!("round {seed}: the respecification raised {other:?}"),
        }
    }
    if refused == 8 {
        // The stale-surface case is then not in play on this GL: its storage cannot change
        // under the registration. What ran is eight rounds of writes through the cached surface.
        println!(
            "respecification not exercised: GL refused all 8 respecifications of the registered \
             texture (GL_INVALID_OPERATION); each round's writes reached GL"
        );
    } else {
        println!("GL refused {refused} of 8 respecifications of the registered texture");
    }
    image.unregister().unwrap();
    g.check_no_errors();
    delete_texture(tex);
}
