//! Two GPUs: GL and CUDA on different devices give the typed wrong-GPU error, and a headless
//! context for device N lands on device N. Skips with fewer than two GPUs, unless
//! `CUDA_GL_REQUIRE_MULTI_GPU=1` makes that a failure.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use crate::harness::{is_child, run_child_with, test_path};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::gl_devices;
use cuda_gl::{Context, Device, Error, GlDeviceList, RegisterFlags, RegisteredBuffer, UsageError};
use std::time::Duration;

fn two_devices() -> Option<(Device, Device)> {
    let count = match Device::count() {
        Ok(n) => n,
        Err(e) => return skip(format!("no CUDA driver: {e}")),
    };
    if count < 2 {
        let reason = format!("{count} CUDA device(s); this test needs two");
        if std::env::var("CUDA_GL_REQUIRE_MULTI_GPU").is_ok_and(|v| v == "1") {
            panic!("CUDA_GL_REQUIRE_MULTI_GPU=1: {reason}");
        }
        eprintln!("skipped: {reason}");
        return None;
    }
    Some((Device::get(0).unwrap(), Device::get(1).unwrap()))
}

#[test]
fn headless_context_lands_on_the_device_asked_for() {
    let Some((d0, d1)) = two_devices() else {
        return;
    };
    for d in [d0, d1] {
        let _gl = gl_context_on(&d, &format!("EGL context for CUDA {}", d.ordinal()));
    }
}

/// A headless GL context for CUDA device `d`, made current, checked to be on `d` alone: EGL
/// says so, and GL lists `d` as its only device. `label` starts the line it prints.
fn gl_context_on(d: &Device, label: &str) -> HeadlessContext {
    let gl = HeadlessContext::for_cuda_device(d).unwrap();
    load_gl_crate(&gl);
    assert_eq!(gl.cuda_device(), Some(d.raw()));
    let devices = gl_devices(GlDeviceList::All).unwrap();
    eprintln!("{label}: GL ({}) devices {devices:?}", gl.renderer());
    assert_eq!(devices, vec![*d]);
    gl
}

#[test]
fn gl_and_cuda_on_different_gpus_is_a_typed_error() {
    let Some((d0, d1)) = two_devices() else {
        return;
    };
    let _gl = HeadlessContext::for_cuda_device(&d1).unwrap();
    load_gl_crate(&_gl);
    let ctx0 = Context::new(&d0).unwrap();
    let name = gl_buffer(256, None);
    let err = RegisteredBuffer::register(&ctx0, name, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    let Error::WrongDevice {
        gl_devices, cuda, ..
    } = &err
    else {
        panic!("expected WrongDevice, got {err:?}");
    };
    assert_eq!(cuda.ordinal, 0);
    assert_eq!(
        gl_devices.iter().map(|l| l.ordinal).collect::<Vec<_>>(),
        vec![1]
    );
    let text = err.to_string();
    assert!(text.contains(&d0.pci_bus_id().unwrap()), "{text}");
    assert!(text.contains(&d1.pci_bus_id().unwrap()), "{text}");
    // The fix the message names works: a CUDA context on the GL context's device.
    let ctx1 = Context::for_current_gl().unwrap();
    assert_eq!(ctx1.device(), &d1);
    RegisteredBuffer::register(&ctx1, name, RegisterFlags::NONE)
        .unwrap()
        .unregister()
        .unwrap();
    delete_buffer(name);
}

#[test]
fn headless_context_matches_under_cuda_visible_devices() {
    // The child runs this test alone (`--exact`), by its full name in this binary.
    let test = test_path(
        module_path!(),
        "headless_context_matches_under_cuda_visible_devices",
    );
    if is_child("visible_devices") {
        return visible_devices_child();
    }
    let Some((d0, d1)) = two_devices() else {
        return;
    };
    // CUDA_VISIBLE_DEVICES is read once, at cuInit, so each setting needs its own process.
    for (visible, physical) in [("1", &d1), ("0", &d0), ("1,0", &d1)] {
        let envs = [
            ("CUDA_VISIBLE_DEVICES", visible.to_owned()),
            ("CUDA_GL_EXPECT_PCI", physical.pci_bus_id().unwrap()),
        ];
        let run = run_child_with(&test, "visible_devices", &envs, Duration::from_secs(60));
        eprintln!(
            "--- child (CUDA_VISIBLE_DEVICES={visible}): {:?} after {:.2} s:\n{}---",
            run.status,
            run.elapsed.as_secs_f64(),
            run.output
        );
        assert!(
            run.exited_cleanly(),
            "the child for CUDA_VISIBLE_DEVICES={visible} failed: {:?}",
            run.status
        );
        assert!(run.output.contains("1 passed"), "the child ran no test");
    }
}

/// The child half of `headless_context_matches_under_cuda_visible_devices`: CUDA ordinal 0 is the
/// physical GPU the parent names, and the EGL context for CUDA ordinal 0 lands on it.
fn visible_devices_child() {
    let expect_pci = std::env::var("CUDA_GL_EXPECT_PCI").expect("run by the parent test");
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default();
    let count = Device::count().unwrap();
    assert_eq!(
        count,
        visible.split(',').count(),
        "CUDA_VISIBLE_DEVICES={visible}"
    );
    let d = Device::get(0).unwrap();
    assert_eq!(d.pci_bus_id().unwrap(), expect_pci);
    // Current on this thread until the end of the test.
    let _gl = gl_context_on(
        &d,
        &format!("CUDA_VISIBLE_DEVICES={visible}: CUDA 0 is {expect_pci}"),
    );
    // Interop works in the matched pair: a registration that the wrong pair would refuse.
    let ctx = Context::for_current_gl().unwrap();
    assert_eq!(ctx.device(), &d);
    let name = gl_buffer(256, None);
    RegisteredBuffer::register(&ctx, name, RegisterFlags::NONE)
        .unwrap()
        .unregister()
        .unwrap();
    delete_buffer(name);
}

/// What one GPU's interop loop did.
#[derive(Debug)]
struct LoopReport {
    ordinal: usize,
    frames: u64,
    words_checked: u64,
}

/// Interop on one GPU until `until`: map, a kernel writes a pattern seeded by this GPU and frame,
/// unmap, GL reads the buffer back, every word is checked.
fn interop_loop(ordinal: usize, until: std::time::Instant) -> LoopReport {
    const WORDS: usize = 1 << 18; // 1 MiB
    let g = gpu_on(ordinal).expect("GPU present (checked by the caller)");
    assert_eq!(g.gl.cuda_device(), Some(g.device.raw()));
    let fill = g.kernels.function("fill_u32").unwrap();
    let (name, mut res) = registered_buffer(&g.ctx, WORDS * 4, RegisterFlags::WRITE_DISCARD);
    let mut report = LoopReport {
        ordinal,
        frames: 0,
        words_checked: 0,
    };
    while std::time::Instant::now() < until {
        let seed = ((ordinal as u32) << 28) ^ (report.frames as u32).wrapping_mul(0x9E37_79B9);
        {
            let mapped = res.map(&g.stream).unwrap();
            // SAFETY: the buffer holds WORDS u32 words and stays mapped until the guard drops,
            // after the launch in stream order.
            unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), WORDS, seed) }.unwrap();
            mapped.unmap().unwrap();
        }
        let got = read_gl_buffer(name, WORDS);
        if let Some(i) = (0..WORDS).find(|&i| got[i] != pattern(i as u32, seed)) {
            panic!(
                "GPU {ordinal}, frame {}: word {i} is {:#x}, expected {:#x}",
                report.frames,
                got[i],
                pattern(i as u32, seed)
            );
        }
        report.frames += 1;
        report.words_checked += WORDS as u64;
    }
    res.unregister().unwrap();
    delete_buffer(name);
    g.ctx.check_drop_errors().unwrap();
    report
}

#[test]
fn concurrent_interop_on_both_gpus() {
    let Some((_d0, _d1)) = two_devices() else {
        return;
    };
    let secs: f64 = std::env::var("CUDA_GL_MULTI_GPU_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let start = std::time::Instant::now();
    let until = start + std::time::Duration::from_secs_f64(secs);
    let count = Device::count().unwrap();
    let threads: Vec<_> = (0..count)
        .map(|ordinal| std::thread::spawn(move || interop_loop(ordinal, until)))
        .collect();
    let reports: Vec<LoopReport> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let elapsed = start.elapsed().as_secs_f64();
    for r in &reports {
        eprintln!(
            "GPU {}: {} frames verified ({} words, {:.0} frames/s) in {elapsed:.1} s",
            r.ordinal,
            r.frames,
            r.words_checked,
            r.frames as f64 / elapsed
        );
        assert!(r.frames > 0, "GPU {} ran no frame", r.ordinal);
    }
}

/// Memory calls refuse a stream (or a source buffer) of another context before the driver sees
/// it: queued there, the copy or memset would use handles the other context does not know.
#[test]
fn memory_calls_refuse_a_stream_or_buffer_of_another_context() {
    let Some((d0, d1)) = two_devices() else {
        return;
    };
    let (ctx0, ctx1) = (Context::new(&d0).unwrap(), Context::new(&d1).unwrap());
    let stream1 = cuda_gl::Stream::new(&ctx1, cuda_gl::StreamFlags::NonBlocking).unwrap();
    let mut buf0 = cuda_gl::DeviceBuffer::<u32>::zeroed(&ctx0, 16).unwrap();
    let buf1 = cuda_gl::DeviceBuffer::<u32>::zeroed(&ctx1, 16).unwrap();
    let mut pinned0 = cuda_gl::PinnedBuffer::<u32>::zeroed(&ctx0, 16).unwrap();
    let stream0 = cuda_gl::Stream::new(&ctx0, cuda_gl::StreamFlags::NonBlocking).unwrap();
    let refused = |what: &str, result: cuda_gl::Result<()>| {
        eprintln!("{what}: {result:?}");
        let wrong_context = |e: &UsageError| matches!(e, UsageError::WrongCudaContext { .. });
        assert_refused(result, wrong_context, "another CUDA context");
    };
    refused("memset_async", buf0.memset_async(1, &stream1));
    refused(
        "copy_from_slice_on",
        buf0.copy_from_slice_on(&[0; 16], &stream1),
    );
    refused("to_vec_on", buf0.to_vec_on(&stream1).map(drop));
    refused(
        "zeroed_on",
        cuda_gl::DeviceBuffer::<u32>::zeroed_on(&ctx0, 16, &stream1).map(drop),
    );
    refused(
        "copy_from_device_async (stream)",
        pinned0.copy_from_device_async(&buf0, &stream1),
    );
    refused(
        "copy_from_device_async (source)",
        pinned0.copy_from_device_async(&buf1, &stream0),
    );
    // Nothing was queued: the buffers still hold their zeroes.
    assert_eq!(pinned0.as_slice().unwrap(), &[0; 16]);
    assert_eq!(buf0.to_vec().unwrap(), vec![0; 16]);
}
