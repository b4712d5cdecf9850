//! Faults: the GL context destroyed under a registered or mapped resource, the CUDA primary
//! context reset under live resources, a kernel that faults while a resource is mapped, a GL
//! buffer deleted while registered, double registration, registering from a thread with no GL
//! context.
//!
//! A fault can leave the CUDA context or the process broken, so each one runs in a child
//! process: the test re-executes this binary with its own name, `--exact`, and
//! `CUDA_GL_TEST_CHILD` naming the fault, under a timeout (`CUDA_GL_FAULT_TIMEOUT_S`, default
//! 120 s). The parent asserts that the child exited by itself with status 0, having reported a
//! typed error (`fault-error[Variant]` lines) or a logged warning (`log: WARN`/`log: ERROR`),
//! and that no step ended with the adviceless `Error::Cuda`, so a panic, an abort, a crash, a
//! hang or a vague error in the library fails the test. Each child then rebuilds
//! what the fault broke, as the README's "Faults and recovery" section tells users to, and checks
//! that interop works again.
//!
//! Two cases are destructive and run only with `CUDA_GL_DESTRUCTIVE_FAULTS=1`:
//! `kernel_faults_while_a_resource_is_mapped` and `primary_context_reset_under_live_resources`
//! (see [`destructive_fault_test`]). The kernel fault leaves the GPU unable to switch graphics
//! contexts until it is reset, so every later program that draws with GL on it hangs; they run
//! last, alone, on a machine that nobody needs afterwards.
//!
//! A binary of its own, not a module of `gpu_suite`: a fault can leave the GPU unable to draw
//! for whatever runs after it, so `ci/gpu/suite.sh` runs this binary last (and, with
//! `--faults-one-by-one`, each of its tests alone), and the destructive cases run as this binary
//! alone, the last command on a machine.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod gpu;
mod harness;

use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    Context, Device, Error, ImageTarget, LaunchConfig, Module, RegisterFlags, RegisteredBuffer,
    RegisteredImage, Stream, StreamFlags,
};
use gpu::*;
use harness::*;
use std::time::Duration;

const N: usize = 16 * 1024;

/// Runs `body` on the test GPU ([`gpu`]) when this process is the child for `test` (without a
/// GPU it says so and skips); otherwise runs the child and checks how it ended.
fn fault_test(test: &str, body: fn(Gpu)) {
    if is_child(test) {
        capture_log();
        if let Some(g) = gpu() {
            body(g);
            println!("fault-done: {test}");
        }
        return;
    }
    let timeout = Duration::from_secs(env_or("CUDA_GL_FAULT_TIMEOUT_S", 120));
    let run = run_child(test, test, timeout);
    eprintln!(
        "---- child process for {test}: {:?} after {:.2} s ----\n{}\n---- end of child ----",
        run.status,
        run.elapsed.as_secs_f64(),
        run.output.trim_end()
    );
    if !run.output.contains("fault-done:") && run.output.contains("skipped:") && !require_gpu() {
        eprintln!("skipped: the child found no GPU");
        return;
    }
    let status = run.status.unwrap_or_else(|| {
        panic!("{test}: the child hung and was killed after {timeout:?}");
    });
    assert!(
        run.exited_cleanly(),
        "{test}: the child did not exit cleanly ({status}); a panic, abort or crash"
    );
    assert!(
        run.output.contains(&format!("fault-done: {test}")),
        "{test}: the child did not finish its body"
    );
    let typed = run.output.matches("fault-error[").count();
    // `Error::Cuda` is the variant with no advice: every fault must get one that says what to do.
    let vague = run.output.matches("fault-error[Cuda]").count();
    assert_eq!(
        vague, 0,
        "{test}: {vague} step(s) ended with Error::Cuda, which says nothing about what to do"
    );
    let logged = run.output.matches("log: WARN").count() + run.output.matches("log: ERROR").count();
    assert!(
        typed + logged > 0,
        "{test}: the fault ended with neither a typed error nor a logged warning"
    );
    eprintln!(
        "FAULT {test}: exit 0 in {:.2} s, {typed} typed error(s), {logged} logged warning(s)",
        run.elapsed.as_secs_f64()
    );
}

/// The variable that lets the destructive cases run.
const DESTRUCTIVE_FAULTS: &str = "CUDA_GL_DESTRUCTIVE_FAULTS";

/// [`fault_test`] for a case that can leave the GPU broken for every later process: it runs only
/// when [`DESTRUCTIVE_FAULTS`] is `1`, and otherwise prints why and passes.
///
/// Skipping here never fails, not even under `CUDA_GL_REQUIRE_GPU=1`: that variable turns a GPU
/// that *cannot* be tested into a failure, while an unset [`DESTRUCTIVE_FAULTS`] is the default
/// decision not to harm a shared machine, which every ordinary GPU run makes.
fn destructive_fault_test(test: &str, body: fn(Gpu)) {
    if std::env::var(DESTRUCTIVE_FAULTS).is_ok_and(|v| v == "1") {
        fault_test(test, body);
    } else {
        eprintln!(
            "skipped (opt-in): {test} can leave the GPU unable to run GL until it is reset; \
             set {DESTRUCTIVE_FAULTS}=1 to run it, last and alone on a machine nobody needs next"
        );
    }
}

/// Prints a step's outcome: `fault-step: STEP: ok` or `fault-error[Variant]: STEP: message`.
fn outcome<T>(step: &str, result: cuda_gl::Result<T>) -> Option<T> {
    match result {
        Ok(v) => {
            println!("fault-step: {step}: ok");
            Some(v)
        }
        Err(e) => {
            println!("fault-error[{}]: {step}: {e}", variant(&e));
            None
        }
    }
}

/// Like [`outcome`] for a recovery attempt (`fault-probe-ok:`/`fault-probe[Variant]:`): what
/// happens after a raw driver call the test makes itself is reported, not judged.
fn probe<T>(step: &str, result: cuda_gl::Result<T>) -> Option<T> {
    match result {
        Ok(v) => {
            println!("fault-probe-ok: {step}");
            Some(v)
        }
        Err(e) => {
            println!("fault-probe[{}]: {step}: {e}", variant(&e));
            None
        }
    }
}

/// The variant name of an error, from its `Debug` form.
fn variant(e: &Error) -> String {
    let debug = format!("{e:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Prints the drop failures the context recorded, then how many.
fn report_drop_errors(ctx: &Context) {
    let errors = ctx.take_drop_errors();
    for e in &errors {
        println!("fault-drop-error: {e}");
    }
    println!("drop errors recorded: {}", errors.len());
}

/// Registers GL buffer `name` in `ctx`, lets a kernel write it, and checks the bytes from GL: the
/// proof that interop works (again) after a fault.
fn interop_works(ctx: &std::sync::Arc<Context>, name: u32, seed: u32) -> cuda_gl::Result<()> {
    let stream = Stream::new(ctx, StreamFlags::NonBlocking)?;
    let kernels = Module::from_ptx(ctx, TEST_PTX)?;
    let fill = kernels.function("fill_u32")?;
    let mut res = RegisteredBuffer::register(ctx, name, RegisterFlags::WRITE_DISCARD)?;
    let mapped = res.map(&stream)?;
    // SAFETY: the mapped buffer holds N words and stays mapped until the unmap below, which is
    // ordered after the launch on the same stream.
    unsafe { launch_words(&fill, &stream, mapped.device_ptr(), N, seed) }?;
    mapped.unmap()?;
    stream.synchronize()?;
    assert_eq!(read_gl_buffer(name, N), pattern_words(N, seed));
    res.unregister()?;
    ctx.check_drop_errors()
}

/// Makes `g`'s GL context current again and maps `res` once more (printing the outcome as
/// `what`), then unregisters it (printing the outcome) and the drop errors recorded, then the
/// recovery: objects of the surviving GL context work as before.
fn map_again_and_recover(g: &Gpu, mut res: RegisteredBuffer, what: &str, seed: u32) {
    g.gl.make_current().unwrap();
    outcome(what, res.map(&g.stream).map(|m| m.size()));
    outcome("unregister", res.unregister());
    report_drop_errors(&g.ctx);
    let fresh = gl_buffer(N * 4, None);
    interop_works(&g.ctx, fresh, seed).unwrap();
    println!("recovery: a buffer of the surviving GL context maps and is written again");
    delete_buffer(fresh);
}

/// A second GL context on `g`'s device, made current on this thread, and a buffer of N words
/// it owns, registered with no flags.
fn buffer_of_second_context(g: &Gpu) -> (HeadlessContext, RegisteredBuffer) {
    let owner = HeadlessContext::for_cuda_device(&g.device).unwrap();
    let (_, res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::NONE);
    (owner, res)
}

#[test]
fn gl_context_destroyed_while_registered() {
    fault_test("gl_context_destroyed_while_registered", |g| {
        // A second GL context owns the buffer; it is destroyed while current on this thread.
        let (owner, mut res) = buffer_of_second_context(&g);
        drop(owner);
        outcome(
            "map with no GL context current (the owner was destroyed)",
            res.map(&g.stream).map(|m| m.size()),
        );
        map_again_and_recover(&g, res, "map with another GL context current", 11);
    });
}

#[test]
fn gl_context_destroyed_while_mapped() {
    fault_test("gl_context_destroyed_while_mapped", |g| {
        let (owner, mut res) = buffer_of_second_context(&g);
        let fill = g.kernels.function("fill_u32").unwrap();
        {
            let mapped = res.map(&g.stream).unwrap();
            // SAFETY: N words, mapped until the unmap below; the stream is synchronized before
            // the GL context goes away, so the kernel is done with the memory.
            unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), N, 3u32) }.unwrap();
            g.stream.synchronize().unwrap();
            drop(owner); // the window closes while the buffer is mapped
            outcome(
                "unmap with no GL context current (the owner was destroyed)",
                mapped.unmap(),
            );
        }
        println!("still marked mapped after that: {}", res.is_mapped());
        let what = "map again with another GL context current";
        map_again_and_recover(&g, res, what, 12);
    });
}

/// `cuDevicePrimaryCtxReset` on the device, as another library in the process might call it.
fn reset_primary_context(device: &Device) -> cuda_gl::sys::CUresult {
    let driver = cuda_gl::sys::driver().unwrap();
    // SAFETY: resetting the primary context is what this test is about; the device handle is
    // valid, and no other thread uses the context now.
    unsafe { driver.cuDevicePrimaryCtxReset_v2(device.raw()) }
}

/// (flags, active) from `cuDevicePrimaryCtxGetState`.
fn primary_state(device: &Device) -> (u32, i32) {
    let driver = cuda_gl::sys::driver().unwrap();
    let (mut flags, mut active) = (0, 0);
    // SAFETY: both are valid out-pointers; the device handle is valid.
    let rc = unsafe { driver.cuDevicePrimaryCtxGetState(device.raw(), &mut flags, &mut active) };
    assert!(rc.is_success(), "cuDevicePrimaryCtxGetState: {rc:?}");
    (flags, active)
}

/// Resets the CUDA primary context (`cuDevicePrimaryCtxReset`) under a registered buffer, a
/// registered texture, a module and a device buffer, then rebuilds. Destructive, so opt-in
/// ([`destructive_fault_test`]): a reset tears down the context while GL still shares its
/// registrations, which is not known to leave the GPU healthy for later GL programs. Run it last,
/// alone, on a machine nobody needs afterwards, then check `dmesg | grep Xid`.
#[test]
fn primary_context_reset_under_live_resources() {
    destructive_fault_test("primary_context_reset_under_live_resources", |g| {
        let name = gl_buffer(N * 4, None);
        let tex = gl_texture_rgba8(64, 64, 1);
        let mut buf = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE).unwrap();
        let mut img = RegisteredImage::register(
            &g.ctx,
            tex,
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LOAD_STORE,
        )
        .unwrap();
        let scratch = cuda_gl::DeviceBuffer::<u32>::zeroed(&g.ctx, N).unwrap();
        let fill = g.kernels.function("fill_u32").unwrap();
        buf.map(&g.stream).unwrap().unmap().unwrap();

        println!(
            "primary context state before the reset: {:?}",
            primary_state(&g.device)
        );
        let rc = reset_primary_context(&g.device);
        println!("cuDevicePrimaryCtxReset: {rc:?}");
        println!(
            "primary context state after the reset: {:?}",
            primary_state(&g.device)
        );
        outcome(
            "map the registered buffer",
            buf.map(&g.stream).map(|m| m.size()),
        );
        // SAFETY: the scratch buffer holds N words (if the launch is accepted at all).
        let launched = unsafe { launch_words(&fill, &g.stream, scratch.device_ptr(), N, 1u32) };
        outcome("launch a kernel", launched);
        outcome("synchronize the stream", g.stream.synchronize());
        outcome(
            "copy a device buffer to the host",
            scratch.to_vec().map(|v| v.len()),
        );
        outcome(
            "map the registered image",
            img.map(&g.stream).map(|m| m.raw_stream().is_null()),
        );
        outcome("unregister the buffer", buf.unregister());
        outcome("unregister the image", img.unregister());
        drop((fill, scratch, g.kernels, g.stream));
        report_drop_errors(&g.ctx);
        drop(g.ctx);

        // Recovery: every handle of the old context is gone; a new Context works, and the same
        // GL objects register again.
        let ctx = outcome("create a new Context", Context::new(&g.device)).unwrap();
        interop_works(&ctx, name, 13).unwrap();
        let mut img = RegisteredImage::register(
            &ctx,
            tex,
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LOAD_STORE,
        )
        .unwrap();
        let stream = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
        img.map(&stream).unwrap().unmap().unwrap();
        img.unregister().unwrap();
        println!("recovery: a new Context registers, maps and writes the same GL objects");
        delete_buffer(name);
        delete_texture(tex);
        drop(g.gl);
    });
}

/// Launches a kernel that stores to an unmapped address while a GL buffer is mapped, and checks
/// that the steps after it report `Error::ContextUnusable`. Destructive, so opt-in
/// ([`destructive_fault_test`]): the MMU fault logs Xid 31 and leaves the GPU unable to switch
/// graphics contexts, so every later process that draws with GL on it hangs (Xid 109, `CTX SWITCH
/// TIMEOUT`) until the GPU is reset. Run it last, alone, on a machine nobody needs afterwards.
#[test]
fn kernel_faults_while_a_resource_is_mapped() {
    destructive_fault_test("kernel_faults_while_a_resource_is_mapped", |g| {
        let (name, mut res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::NONE);
        let bad = g.kernels.function("fault_illegal_address").unwrap();
        let one = LaunchConfig {
            grid: (1, 1, 1),
            block: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut typed = Vec::new();
        {
            let mapped = res.map(&g.stream).unwrap();
            // SAFETY: deliberately not: the kernel stores far past the mapped buffer. This is the
            // fault under test, in a child process of its own.
            let launched = unsafe { bad.launch(one, &g.stream, (mapped.device_ptr(),)) };
            outcome("launch the faulting kernel", launched);
            let r = mapped.unmap();
            typed.push(r.as_ref().err().map(variant));
            outcome("unmap", r);
        }
        let r = g.stream.synchronize();
        typed.push(r.as_ref().err().map(variant));
        outcome("synchronize the stream", r);
        let r = res.map(&g.stream).map(|m| m.size());
        typed.push(r.as_ref().err().map(variant));
        outcome("map again", r);
        let r = res.unregister();
        typed.push(r.as_ref().err().map(variant));
        outcome("unregister", r);
        assert!(
            typed
                .iter()
                .flatten()
                .any(|v| v.as_str() == "ContextUnusable"),
            "no step reported Error::ContextUnusable: {typed:?}"
        );
        drop((bad, g.kernels, g.stream));
        report_drop_errors(&g.ctx);
        drop(g.ctx);

        // Recovery. NVIDIA documents these errors as leaving the process unusable for CUDA
        // until it exits; try what can be tried inside the process, in order, and report it.
        let mut how = None;
        if let Some(ctx) = outcome(
            "create a new Context after dropping every handle",
            Context::new(&g.device),
        ) && outcome("interop in that Context", interop_works(&ctx, name, 14)).is_some()
        {
            how = Some("dropping every handle, then a new Context");
        }
        if how.is_none() {
            println!(
                "cuDevicePrimaryCtxReset: {:?}",
                reset_primary_context(&g.device)
            );
            if let Some(ctx) = probe(
                "create a new Context after cuDevicePrimaryCtxReset",
                Context::new(&g.device),
            ) && probe("interop in that Context", interop_works(&ctx, name, 15)).is_some()
            {
                how = Some("dropping every handle, cuDevicePrimaryCtxReset, then a new Context");
            }
        }
        println!(
            "recovery: {}",
            how.unwrap_or("none inside this process: it has to be restarted")
        );
        delete_buffer(name);
        drop(g.gl);
    });
}

#[test]
fn gl_buffer_deleted_while_registered() {
    fault_test("gl_buffer_deleted_while_registered", |g| {
        let (name, mut res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::NONE);
        let fill = g.kernels.function("fill_u32").unwrap();
        delete_buffer(name);
        // SAFETY: the test's GL context is current on this thread.
        let gl_error = unsafe { gl::GetError() };
        println!("glDeleteBuffers of a registered buffer: GL error {gl_error:#x}");
        let written = res.map(&g.stream).and_then(|m| {
            // SAFETY: N words while mapped; if the driver kept the storage, it is still N words.
            unsafe { launch_words(&fill, &g.stream, m.device_ptr(), N, 4u32) }?;
            m.unmap()
        });
        outcome("map and write after glDeleteBuffers", written);
        outcome("synchronize the stream", g.stream.synchronize());
        // GL hands the freed name out again: registering the new buffer while the old
        // registration lives is refused, with what to do.
        let again = gl_buffer(N * 4, None);
        println!("the new GL buffer is {again} (the deleted one was {name})");
        let r = RegisteredBuffer::register(&g.ctx, again, RegisterFlags::NONE);
        if again == name {
            assert!(
                matches!(r, Err(Error::AlreadyRegistered { .. })),
                "a reused name while the old registration lives: {r:?}"
            );
        }
        let second = outcome(
            "register the new buffer while the old registration lives",
            r,
        );
        drop(second);
        outcome(
            "unregister the deleted buffer's registration",
            res.unregister(),
        );
        report_drop_errors(&g.ctx);
        interop_works(&g.ctx, again, 16).unwrap();
        println!("recovery: the new buffer registers and is written once the old one is gone");
        delete_buffer(again);
    });
}

#[test]
fn registering_the_same_object_twice() {
    fault_test("registering_the_same_object_twice", |g| {
        let tex = gl_texture_rgba8(32, 32, 1);
        let first =
            RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
                .unwrap();
        for flags in [RegisterFlags::NONE, RegisterFlags::SURFACE_LOAD_STORE] {
            let r = RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, flags);
            assert!(
                matches!(r, Err(Error::AlreadyRegistered { .. })),
                "{flags:?}: {r:?}"
            );
            outcome(&format!("register the texture again with {flags:?}"), r);
        }
        let rb = gl_renderbuffer_rgba8(16, 16);
        let rb_first =
            RegisteredImage::register_renderbuffer(&g.ctx, rb, RegisterFlags::NONE).unwrap();
        let r = RegisteredImage::register_renderbuffer(&g.ctx, rb, RegisterFlags::NONE);
        assert!(matches!(r, Err(Error::AlreadyRegistered { .. })), "{r:?}");
        outcome("register the renderbuffer again", r);
        // After the first registration is gone, registering again works.
        first.unregister().unwrap();
        rb_first.unregister().unwrap();
        RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap()
            .unregister()
            .unwrap();
        println!("recovery: after unregistering, the texture registers again");
        g.ctx.check_drop_errors().unwrap();
        delete_renderbuffer(rb);
        delete_texture(tex);
    });
}

#[test]
fn registering_from_a_thread_without_gl_context() {
    fault_test("registering_from_a_thread_without_gl_context", |g| {
        let name = gl_buffer(N * 4, None);
        let tex = gl_texture_rgba8(16, 16, 1);
        let ctx = g.ctx.clone();
        let (buffer, image) = std::thread::scope(|s| {
            s.spawn(|| {
                let b = RegisteredBuffer::register(&ctx, name, RegisterFlags::NONE).map(drop);
                let i = RegisteredImage::register(
                    &ctx,
                    tex,
                    ImageTarget::Texture2D,
                    RegisterFlags::SURFACE_LOAD_STORE,
                )
                .map(drop);
                (b, i)
            })
            .join()
            .unwrap()
        });
        assert!(
            matches!(buffer, Err(Error::NoGlContext { .. })),
            "{buffer:?}"
        );
        assert!(matches!(image, Err(Error::NoGlContext { .. })), "{image:?}");
        outcome("register a buffer on a thread with no GL context", buffer);
        outcome("register a texture on a thread with no GL context", image);
        interop_works(&g.ctx, name, 17).unwrap();
        println!(
            "recovery: the same buffer registers on the thread where its GL context is current"
        );
        delete_buffer(name);
        delete_texture(tex);
    });
}
