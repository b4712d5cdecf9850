//! The one-line report's tests.
use super::*;
use crate::result::CudaError;
use cuda_gl_sys::CUresult;

fn report(refused: Vec<(Mode, Error)>) -> Report {
    Report {
        mode: if refused.is_empty() {
            Mode::Interop
        } else {
            Mode::Staged
        },
        refused,
        api: "GL",
        renderer: "llvmpipe".into(),
        vendor: "Mesa".into(),
        cuda_device: "device 0 (NVIDIA H200)".into(),
    }
}

#[test]
fn one_line_with_the_refusals_and_the_fix() {
    let not_nvidia = Error::NotNvidiaGl {
        source: CudaError::new(
            "cuGraphicsGLRegisterImage",
            CUresult::CUDA_ERROR_OPERATING_SYSTEM,
        ),
    };
    let line = report(vec![(Mode::Interop, not_nvidia)]).to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.starts_with("display: staged (interop refused: not_nvidia_gl); GL: llvmpipe"),
        "{line}"
    );
    assert!(line.contains("__NV_PRIME_RENDER_OFFLOAD=1"), "{line}");
    assert!(line.contains("HeadlessContext::for_cuda_device"), "{line}");
    let clean = report(Vec::new()).to_string();
    assert_eq!(
        clean,
        "display: interop; GL: llvmpipe, Mesa; CUDA: device 0 (NVIDIA H200)"
    );
}
