//! Kernels compiled at run time with NVRTC (`--features nvrtc,egl`). The compile-error test
//! needs only NVRTC; the launch needs a GPU too. Without NVRTC (set `CUDA_GL_NVRTC_PATH` to a
//! `libnvrtc.so.12`, e.g. the one `cargo xtask ptx` unpacks under `target/xtask/`) they skip
//! with the reason, and fail under `CUDA_GL_REQUIRE_GPU=1`.
#![cfg(all(feature = "nvrtc", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::{DeviceBuffer, Error, Module, nvrtc};

const ADD: &str = r#"
extern "C" __global__ void api_nvrtc_add(unsigned* v, unsigned n, unsigned k)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        v[i] += k * i;
    }
}
"#;

/// NVRTC's version, or `None` after printing why it cannot be opened.
fn nvrtc_or_skip() -> Option<(i32, i32)> {
    match nvrtc::version() {
        Ok((version, path)) => {
            eprintln!("NVRTC {version:?} from {}", path.display());
            Some(version)
        }
        Err(e) => skip(format!("no NVRTC: {e}")),
    }
}

#[test]
fn a_syntax_error_gives_the_compile_log() {
    if nvrtc_or_skip().is_none() {
        return;
    }
    let err = nvrtc::compile_ptx(
        "extern \"C\" __global__ void broken(int* p) { *p = ; }",
        &[],
    )
    .unwrap_err();
    eprintln!("{err}");
    match &err {
        Error::Compile {
            call, log, message, ..
        } => {
            assert_eq!(*call, "nvrtcCompileProgram");
            assert!(message.contains("COMPILATION"), "{message}");
            assert!(
                log.contains("cuda_gl_source.cu") && log.contains("error"),
                "{log}"
            );
        }
        other => panic!("expected Error::Compile, got {other:?}"),
    }
    assert!(err.to_string().contains("help:"), "{err}");
    let err = nvrtc::compile_ptx(ADD, &["--no-such-option"]).unwrap_err();
    assert!(matches!(err, Error::Compile { .. }), "{err:?}");
}

#[test]
fn compiled_kernel_launches_and_computes() {
    if nvrtc_or_skip().is_none() {
        return;
    }
    let ptx = nvrtc::compile_ptx(ADD, &["--std=c++17"]).unwrap();
    assert!(ptx.contains(".entry api_nvrtc_add"), "{ptx}");
    let Some(g) = gpu() else { return };
    let module = Module::from_cuda_source(&g.ctx, ADD, &["--std=c++17"]).unwrap();
    let add = module.function("api_nvrtc_add").unwrap();
    assert_eq!(add.param_sizes(), Some(&[8, 4, 4][..]));
    const N: usize = 10_000;
    let start = pattern_words(N, 9);
    let values = DeviceBuffer::from_slice(&g.ctx, &start).unwrap();
    // SAFETY: api_nvrtc_add(unsigned*, unsigned, unsigned) touches the N words of `values`,
    // which outlives the stream synchronization below.
    unsafe { launch_words(&add, &g.stream, values.device_ptr(), N, 3u32) }.unwrap();
    g.stream.synchronize().unwrap();
    let expected: Vec<u32> = start
        .iter()
        .enumerate()
        .map(|(i, &v)| v.wrapping_add(3 * i as u32))
        .collect();
    assert_eq!(values.to_vec().unwrap(), expected);
}
