//! What cuda-gl must not trust (the second soundness round, issue 25), each shown on the GPU:
//! the `gl` crate's global function pointers, which any safe code can overwrite; GL context
//! handle values, which NVIDIA's EGL hands out again after a context is destroyed; GL buffers
//! that cuda-gl made itself; two handles of one array's storage; and two threads importing the
//! same memory. (Streams under capture are in `tests/cudarc_interop.rs`: only cudarc's safe API
//! can begin a capture.) Each test failed on the code before these checks (see
//! `records/gpu-runs.md`). Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::external::{gl_copy, load_gl};
use crate::gpu::*;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::external::{ExportableMemory, ExternalRing, FrameStream, GlMemoryBuffer};
use cuda_gl::{Context, Device, Error, ImageTarget, RegisterFlags, RegisteredBuffer};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

const BYTES: usize = 4096;

/// How often [`junk`] was called.
static JUNK_CALLS: AtomicUsize = AtomicUsize::new(0);

/// What the `gl` crate's pointers are overwritten with: a function that only counts its calls
/// (its arguments, whatever the caller passes, are ignored, and 0 is every GL call's "nothing").
extern "system" fn junk() -> usize {
    JUNK_CALLS.fetch_add(1, Ordering::SeqCst);
    0
}

/// Runs `body` in a child process of this binary (it changes process-wide state: the `gl`
/// crate's pointers, or depends on which EGL handle comes next) and asserts that it passed.
fn in_child(name: &str, body: impl FnOnce()) {
    crate::harness::in_child(module_path!(), name, body);
}

/// Points the `gl` crate back at the test context's entry points.
fn reload_gl(g: &Gpu) {
    gl::load_with(|name| g.gl.get_proc_address(name));
}

/// After safe code overwrote the `gl` crate's pointers (`gl::load_with` is a safe function),
/// registering a GL buffer calls none of them, and still works.
#[test]
fn the_gl_crates_pointers_are_never_called() {
    in_child("the_gl_crates_pointers_are_never_called", || {
        let Some(g) = gpu() else { return };
        let buffer = GlObject::buffer(gl_buffer(BYTES, None));
        gl::load_with(|_| junk as *const c_void);
        let registered = RegisteredBuffer::register(&g.ctx, *buffer, RegisterFlags::NONE);
        let calls = JUNK_CALLS.load(Ordering::SeqCst);
        reload_gl(&g);
        assert_eq!(
            calls, 0,
            "cuda-gl called the gl crate's overwritten pointers {calls} times"
        );
        drop(registered.unwrap());
        drop(buffer);
        g.check_no_errors();
    });
}

/// With the `gl` crate not loaded (null pointers, as in an application that draws with glow),
/// a `GL_TEXTURE_2D` registered as a cube map is still refused: the target check does not
/// switch off.
#[test]
fn the_target_check_needs_no_gl_crate() {
    in_child("the_target_check_needs_no_gl_crate", || {
        let Some(g) = gpu() else { return };
        let texture = GlObject::texture(gl_texture_rgba8(16, 16, 1));
        gl::load_with(|_| std::ptr::null());
        let registered = cuda_gl::RegisteredImage::register(
            &g.ctx,
            *texture,
            ImageTarget::CubeMap,
            RegisterFlags::NONE,
        );
        reload_gl(&g);
        match registered {
            Err(Error::WrongImageTarget { .. }) => {}
            Err(e) => panic!("refused, but not as the wrong target: {e}"),
            Ok(_) => panic!(
                "a GL_TEXTURE_2D was registered as a cube map while the gl crate was not loaded"
            ),
        }
        drop(texture);
        g.check_no_errors();
    });
}

/// Objects of a destroyed GL context are never mapped, waited on, relabelled or deleted through
/// the context that got its handle value next (NVIDIA's EGL hands the value out again).
///
/// In a child process: which handle EGL hands out next depends on the contexts the process
/// made and destroyed before.
#[test]
fn a_reused_context_handle_is_not_the_old_context() {
    in_child(
        "a_reused_context_handle_is_not_the_old_context",
        reused_context_handle,
    );
}

fn reused_context_handle() {
    let Ok(device) = Device::get(0) else {
        skip::<()>("no CUDA device");
        return;
    };
    let old = match HeadlessContext::for_cuda_device(&device) {
        Ok(c) => c,
        Err(e) => return skip(e).unwrap_or(()),
    };
    gl::load_with(|name| old.get_proc_address(name));
    let old_handle = egl_current_context();
    let ctx = Context::new(&device).unwrap();
    let stream = cuda_gl::Stream::new(&ctx, cuda_gl::StreamFlags::NonBlocking).unwrap();
    let (old_buffer, mut registered) = registered_buffer(&ctx, BYTES, RegisterFlags::NONE);
    let ext = cuda_gl::external::ExternalGl::current().unwrap();
    let mut ring = ExternalRing::new(&ctx, &ext, 2, BYTES).unwrap();
    ring.write(0, &stream).unwrap().finish().unwrap();
    ring.read(0).unwrap().finish().unwrap(); // leaves a GL fence of the old context
    let ring_names: Vec<u32> = (0..2).map(|i| ring.gl_buffer(i).unwrap().0).collect();
    drop(old);
    let new = HeadlessContext::for_cuda_device(&device).unwrap();
    gl::load_with(|name| new.get_proc_address(name));
    let new_handle = egl_current_context();
    print_handle_reuse(old_handle, new_handle);
    // The new context's own buffers, with the names the old context's objects had.
    let mut mine = Vec::new();
    let wanted: Vec<u32> = ring_names.iter().copied().chain([old_buffer]).collect();
    while !wanted.iter().all(|n| mine.contains(n)) && mine.len() < 64 {
        mine.push(gl_buffer(16, None));
    }
    for &name in &mine {
        set_buffer_label(name, "mine");
    }
    assert!(
        registered.map(&stream).map(drop).is_err(),
        "a buffer of the destroyed context was mapped with the new context current"
    );
    assert!(
        ring.wait_idle().is_err(),
        "a GL fence of the destroyed context was waited on in the new context"
    );
    drop(registered);
    drop(ring);
    for &name in &wanted {
        assert!(
            gl_is(gl::IsBuffer, name),
            "dropping an object of the destroyed context deleted the new context's buffer {name}"
        );
        assert_eq!(
            buffer_label(name),
            "mine",
            "an object of the destroyed context relabelled the new context's buffer {name}"
        );
    }
    mine.into_iter().for_each(delete_buffer);
    check_gl();
}

/// The GL buffers cuda-gl made itself (ring slots, stream slots, imports) cannot be registered
/// a second time: a mapping of one would be a second, unordered view of the slot.
#[test]
fn cuda_gls_own_buffers_cannot_be_registered() {
    let Some(g) = gpu() else { return };
    let Some(ext) = load_gl(&g) else { return };
    let ring = ExternalRing::new(&g.ctx, &ext, 2, BYTES).unwrap();
    let stream = FrameStream::new(&g.ctx, &ext, BYTES, 4, 2).unwrap();
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    let import = GlMemoryBuffer::import(&ext, &memory).unwrap();
    for (what, name) in [
        ("a ring slot", ring.gl_buffer(0).unwrap()),
        ("a stream slot", stream.gl_buffer(1).unwrap()),
        ("an import", import.buffer()),
    ] {
        match RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE) {
            Err(Error::AlreadyRegistered { .. }) => {}
            Err(e) => panic!(
                "{what}'s buffer {}: refused, but not as registered: {e}",
                name.0
            ),
            Ok(_) => panic!("{what}'s buffer {} was registered a second time", name.0),
        }
    }
    drop((ring, stream, import, memory));
    g.check_no_errors();
}

/// A copy from one handle of an array's storage to another handle of the same storage is
/// refused: `array(0, 0)` and level 0 of the mipmapped array are one storage, for a 2-D texture
/// and for a 2-D array of one layer.
#[test]
fn a_copy_onto_the_same_storage_is_refused() {
    let Some(g) = gpu() else { return };
    let plain = GlObject::texture(gl_texture_rgba8(32, 32, 1));
    let layered = GlObject::texture(gl_texture_array_rgba8(32, 32, 1, None));
    for (texture, target) in [
        (&plain, ImageTarget::Texture2D),
        (&layered, ImageTarget::Texture2DArray),
    ] {
        let mut image =
            cuda_gl::RegisteredImage::register(&g.ctx, **texture, target, RegisterFlags::NONE)
                .unwrap();
        let mapped = image.map(&g.stream).unwrap();
        let layer = mapped.array(0, 0).unwrap();
        let level = mapped.mipmapped_array().unwrap().level(0).unwrap();
        let copied = layer.copy_to_array(&level);
        assert!(
            copied.is_err(),
            "{target:?}: array(0, 0) was copied onto level 0 of the same texture"
        );
        mapped.unmap().unwrap();
    }
    drop((plain, layered));
    g.check_no_errors();
}

/// Two threads importing the same memory at once leave its bytes as they were: the import's
/// check borrows none of them while another import runs.
#[test]
fn concurrent_imports_keep_the_memorys_bytes() {
    let Some(g) = gpu() else { return };
    let fill = g.kernels.function("fill_u32").unwrap();
    let words = BYTES / 4;
    let memory = Arc::new(ExportableMemory::new(&g.ctx, BYTES).unwrap());
    // SAFETY: the memory holds `words` words and lives until the synchronize below.
    unsafe { launch_words(&fill, &g.stream, memory.device_ptr().unwrap(), words, 7u32) }.unwrap();
    g.stream.synchronize().unwrap();
    let rounds = 40;
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (memory, barrier, device) = (memory.clone(), barrier.clone(), g.device);
            std::thread::spawn(move || {
                let _own = HeadlessContext::for_cuda_device(&device).unwrap();
                let ext = cuda_gl::external::ExternalGl::current().unwrap();
                for _ in 0..rounds {
                    barrier.wait();
                    drop(GlMemoryBuffer::import(&ext, &memory).unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    g.gl.make_current().unwrap();
    let ext = load_gl(&g).unwrap();
    let import = GlMemoryBuffer::import(&ext, &memory).unwrap();
    let scratch = gl_buffer(BYTES, None);
    gl_copy(import.buffer().0, scratch, 0, BYTES);
    let seen = read_gl_buffer(scratch, words);
    let want = pattern_words(words, 7);
    let changed = (0..words).filter(|&i| seen[i] != want[i]).count();
    assert_eq!(
        changed, 0,
        "{changed} words of the memory changed after {rounds} rounds of two concurrent imports"
    );
    drop(import);
    delete_buffer(scratch);
    g.check_no_errors();
}
