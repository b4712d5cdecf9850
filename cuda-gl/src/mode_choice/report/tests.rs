//! The one-line report's tests.
use super::*;
use crate::result::CudaError;
use cuda_gl_sys::CUresult;

fn report(refused: Vec<(Mode, Error)>) -> Report {
    Report {
        target: "display",
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
    let planes = Report {
        target: "video planes",
        ..report(Vec::new())
    };
    assert!(
        planes
            .to_string()
            .starts_with("video planes: interop; GL: ")
    );
}

/// Interop refused for the driver's export limit, which is the mode's, not the size's: no
/// usage error, no setup that `find_adapter` and `open_device` fix, its message gives both
/// sizes; the report names it, and gives no fix of a device (the device is the right one;
/// staged is the answer).
#[cfg(feature = "wgpu")]
#[test]
fn an_export_limit_names_itself_and_no_device_fix() {
    use crate::wgpu_interop::WgpuError;
    let limit = WgpuError::ExportTooLarge {
        call: "cuda_gl::wgpu_interop::SharedTexture::new",
        format: "R8_UNORM".into(),
        size: (40000, 16),
        max: (32768, 32000),
    };
    let text = limit.to_string();
    assert!(
        text.contains("32768x32000") && text.contains("40000x16"),
        "{text}"
    );
    assert_eq!(limit.reason(), "export_limit");
    assert!(!limit.fixed_by_open_device() && !limit.is_unsupported_setup());
    let line = report(vec![(Mode::Interop, limit.into())]).to_string();
    assert!(
        line.starts_with("display: staged (interop refused: export_limit)"),
        "{line}"
    );
    assert!(!line.contains("fix:"), "{line}");
    let other_gpu = WgpuError::OtherGpu {
        call: "c",
        what: "device",
        vulkan: "llvmpipe".into(),
        cuda: "H200".into(),
    };
    let line = report(vec![(Mode::Interop, other_gpu.into())]).to_string();
    assert!(
        line.contains("fix: find the wgpu adapter with cuda_gl::wgpu_interop::find_adapter"),
        "{line}"
    );
}

/// The GL route refused for a device on wgpu's own GL context: the report names it and gives
/// the GL route's fix, not the Vulkan one.
#[cfg(feature = "wgpu")]
#[test]
fn a_wgpu_owned_gl_context_names_itself_and_the_gl_routes_fix() {
    use crate::wgpu_interop::WgpuError;
    let own = WgpuError::GlOwnContext {
        call: "cuda_gl::wgpu_interop::check_gl_device",
    };
    let mut report = report(vec![(Mode::Interop, own.into())]);
    report.api = "wgpu GL";
    let line = report.to_string();
    assert!(
        line.starts_with("display: staged (interop refused: wgpu_own_gl_context); wgpu GL: "),
        "{line}"
    );
    assert!(
        line.contains("fix: open the wgpu adapter with cuda_gl::wgpu_interop::open_gl_adapter"),
        "{line}"
    );
    assert!(!line.contains("find_adapter"), "{line}");
}
