//! Two GPUs: GL and CUDA on different devices give the typed wrong-GPU error, and a headless
//! context for device N lands on device N. Skips with fewer than two GPUs, unless
//! `CUDA_GL_REQUIRE_MULTI_GPU=1` makes that a failure.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{Context, Device, Error, GlDeviceList, RegisterFlags, RegisteredBuffer, gl_devices};

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
        let gl = HeadlessContext::for_cuda_device(d.raw()).unwrap();
        assert_eq!(gl.cuda_device(), Some(d.raw()));
        let devices = gl_devices(GlDeviceList::All).unwrap();
        eprintln!(
            "EGL context for CUDA {}: GL devices {devices:?}",
            d.ordinal()
        );
        assert_eq!(devices, vec![d]);
    }
}

#[test]
fn gl_and_cuda_on_different_gpus_is_a_typed_error() {
    let Some((d0, d1)) = two_devices() else {
        return;
    };
    let _gl = HeadlessContext::for_cuda_device(d1.raw()).unwrap();
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
