//! Tests of [`ErrorKind`](super::ErrorKind) and
//! [`Error::is_unsupported_setup`](super::Error::is_unsupported_setup).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::error::{DeviceLabel, DisplayError, VideoError};
use crate::gl_object::RegisterFlags;
use crate::result::CudaError;
use std::collections::HashSet;

/// One of each [`UsageError`], so that a new variant must be added here (with its kind).
fn every_usage_error() -> Vec<UsageError> {
    use UsageError as U;
    vec![
        U::WrongCudaContext {
            what: "stream",
            owner: "the device buffer".into(),
        },
        U::OutOfRange {
            what: "ring slot",
            index: 2,
            len: 2,
        },
        U::SizeMismatch {
            what: "the device buffer",
            expected: 4,
            given: 5,
        },
        U::ZeroSize {
            what: "a device buffer",
        },
        U::TooLarge {
            what: "the device ordinal",
            value: 1 << 40,
            max: i32::MAX as u128,
        },
        U::AddressOverflow {
            address: u64::MAX,
            bytes: 1,
        },
        U::ReadOnlyMapping {
            kind: "buffer",
            name: 3,
            what: "a copy into it",
        },
        U::NotSurfaceRegistered { name: 3 },
        U::ZeroGlName { kind: "buffer" },
        U::ContradictoryFlags,
        U::ImageOnlyFlags {
            flags: RegisterFlags::SURFACE_LOAD_STORE,
        },
        U::NulByte {
            what: "the PTX text",
        },
        U::BadFrameStreamShape {
            slots: 2,
            burst: 3,
            max_slots: 64,
        },
        U::BadRingSlots { slots: 0, max: 16 },
        U::EventWithoutTiming,
        U::KernelArgsImpl {
            pointers: 2,
            count: 3,
            sizes: 3,
        },
        U::NotOfThisBatch {
            what: "a mutable cudarc view",
        },
        U::ArrayOfAnotherMapping {
            what: "surface object",
            array: "GL GL_TEXTURE_2D texture 3".into(),
            mapping: "GL GL_TEXTURE_2D texture 4".into(),
        },
        U::Unregistered {
            name: 3,
            kind: "buffer".into(),
        },
        U::EmptyBatch,
        U::UncopyableFormat {
            format: cuda_gl_sys::CUarray_format(0xb0),
        },
        U::OverlappingCopy,
        U::MappedOnOtherStream { what: "buffer" },
        U::EmptyGlBuffer { name: 3 },
        U::OffscreenSize {
            width: 0,
            height: 5,
            max: 32768,
        },
        U::NeedsCudarcStream,
        U::PinnedBufferUntracked,
        U::BadWaitLimit {
            given: std::time::Duration::ZERO,
            max: std::time::Duration::from_secs(3600),
        },
    ]
}

fn cuda(code: CUresult) -> CudaError {
    CudaError {
        call: "cuTest",
        code,
        name: format!("CUresult {}", code.0),
        description: String::new(),
    }
}

fn label() -> DeviceLabel {
    DeviceLabel {
        ordinal: 0,
        name: "NVIDIA H200".into(),
        pci_bus_id: "0000:01:00.0".into(),
    }
}

#[test]
fn kind_names_are_unique_snake_case() {
    let names: HashSet<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names.len(), ErrorKind::ALL.len(), "duplicate names");
    for kind in ErrorKind::ALL {
        let name = kind.as_str();
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name}"
        );
        assert_eq!(kind.to_string(), name);
    }
}

/// The stable names, as published, in the order the kinds are declared: a derive that spelled
/// one differently would change what logs and metrics key on, and a new kind must be added here.
#[test]
fn the_stable_names_stay() {
    let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        names.join(" "),
        "usage wrong_context context_lost unsupported_setup load driver compile gl egl wgpu \
         timeout deferred_drop internal"
    );
    assert_eq!(ErrorKind::UnsupportedSetup.as_str(), "unsupported_setup");
}

/// Every refusal before the driver is misuse to fix, but one: a stream or resource of another
/// CUDA context, which is the wrong context. Each says what to do.
#[test]
fn usage_errors_are_usage_or_wrong_context_with_a_help_line() {
    for e in every_usage_error() {
        let err = Error::from(e.clone());
        let expected = if matches!(e, UsageError::WrongCudaContext { .. }) {
            ErrorKind::WrongContext
        } else {
            ErrorKind::Usage
        };
        assert_eq!(e.kind(), expected, "{e}");
        assert_eq!(err.kind(), expected, "Error::Usage gives the inner kind");
        assert!(!err.is_unsupported_setup(), "{err}");
        assert!(err.cuda().is_none());
        let message = err.to_string();
        let help = message.rsplit_once("\nhelp: ").map(|(_, help)| help);
        assert!(help.is_some_and(|h| !h.is_empty()), "{message}");
    }
}

/// One of each [`DisplayError`], so that a new variant must be added here.
fn every_display_error() -> Vec<DisplayError> {
    use DisplayError as D;
    vec![
        D::TargetSize {
            width: 0,
            height: 5,
            max: 32768,
        },
        D::PitchedSource {
            what: "the device buffer",
            width: 3,
            height: 2,
            pitch: 8,
            row_bytes: 12,
            needed: 24,
            given: 20,
        },
        D::FrameMapFailed { what: "texture" },
        D::ObjectReplaced {
            object: "texture",
            name: 7,
        },
        D::ColorMapRange,
        D::ModeUnavailable {
            target: "WgpuTarget::new",
            mode: "stream",
            modes: "Mode::Interop, Mode::Staged",
        },
    ]
}

/// Checks that `err` is misuse to fix, with what to do (a `help:` line); gives its message.
fn usage_with_help(err: Error) -> String {
    assert_eq!(err.kind(), ErrorKind::Usage, "{err}");
    assert!(!err.is_unsupported_setup(), "{err}");
    let message = err.to_string();
    let help = message.rsplit_once("\nhelp: ").map(|(_, help)| help);
    assert!(help.is_some_and(|h| !h.is_empty()), "{message}");
    message
}

/// The display's refusals are misuse to fix, each with what to do.
#[test]
fn display_errors_are_usage_with_a_help_line() {
    for e in every_display_error() {
        usage_with_help(Error::from(e));
    }
}

/// One of each [`VideoError`], so that a new variant must be added here.
fn every_video_error() -> Vec<VideoError> {
    use VideoError as V;
    let call = "VideoLayout::new";
    vec![
        V::ZeroSize {
            call,
            width: 0,
            height: 2,
        },
        V::PitchTooSmall {
            call,
            plane: "luma",
            pitch: 3,
            row_bytes: 4,
        },
        V::OddP010 {
            call,
            what: "luma pitch",
            value: 7,
        },
        V::ChromaOverlapsLuma {
            call,
            chroma_offset: 3,
            luma_bytes: 4,
        },
        V::TooLarge {
            call,
            width: 8,
            height: 8,
        },
        V::FrameTooSmall {
            call,
            what: "the source buffer",
            needed: 6,
            given: 5,
        },
        V::DestinationFormat {
            call,
            format: "R8".into(),
        },
        V::DestinationSize {
            call,
            frame: (2, 2),
            image: (2, 3),
        },
        V::PlaneFormat {
            call,
            frame: "P010".into(),
            planes: "Nv12".into(),
        },
        V::PlaneTexture {
            call,
            plane: "chroma",
            got: "4 x 4 of GL_RG8".into(),
            want: "2 x 2 of GL_RG8".into(),
        },
        V::PlaneStorage {
            call,
            plane: "luma",
            texture: 7,
            storage: "mutable storage (glTexImage2D)".into(),
        },
    ]
}

/// The video's refusals are misuse to fix: each names its call and says what to do.
#[test]
fn video_errors_are_usage_naming_the_call_with_a_help_line() {
    for e in every_video_error() {
        let message = usage_with_help(Error::from(e));
        assert!(message.starts_with("VideoLayout::new: "), "{message}");
    }
}

/// Errors whose kind depends on more than the variant, and one error of every kind: the kind
/// follows the driver's code where the code says "this machine cannot", and no kind is left
/// that no error has.
fn errors_with_their_kinds() -> Vec<(Error, ErrorKind)> {
    use ErrorKind as K;
    vec![
        (
            Error::Usage(UsageError::ZeroGlName { kind: "buffer" }),
            K::Usage,
        ),
        (Error::InvalidArgument("x".into()), K::Usage),
        (
            Error::AlreadyRegistered {
                name: 3,
                kind: "buffer".into(),
            },
            K::Usage,
        ),
        (
            Error::StreamCapturing {
                call: "cuMemcpyAsync",
            },
            K::Usage,
        ),
        (
            Error::NoGlContext {
                source: cuda(CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
            },
            K::WrongContext,
        ),
        (
            Error::from(UsageError::WrongCudaContext {
                what: "stream",
                owner: "the device buffer".into(),
            }),
            K::WrongContext,
        ),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)),
            K::ContextLost,
        ),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED)),
            K::ContextLost,
        ),
        (
            Error::MappingStateLost {
                name: 3,
                kind: "buffer".into(),
                source: cuda(CUresult::CUDA_ERROR_ALREADY_MAPPED),
            },
            K::ContextLost,
        ),
        (
            Error::Load(cuda_gl_sys::LoadError::NotFound { tried: Vec::new() }),
            K::Load,
        ),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_INVALID_VALUE)),
            K::Driver,
        ),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_OUT_OF_MEMORY)),
            K::Driver,
        ),
        (Error::ImportNotShared { attempts: 3 }, K::Driver),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_NO_DEVICE)),
            K::UnsupportedSetup,
        ),
        (
            Error::NotNvidiaGl {
                source: cuda(CUresult::CUDA_ERROR_NO_DEVICE),
            },
            K::UnsupportedSetup,
        ),
        (
            Error::InvalidModule {
                log: String::new(),
                source: cuda(CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU),
            },
            K::UnsupportedSetup,
        ),
        (
            Error::InvalidModule {
                log: String::new(),
                source: cuda(CUresult::CUDA_ERROR_INVALID_PTX),
            },
            K::Compile,
        ),
        (
            Error::GlCall {
                call: "glBufferStorageMemEXT",
                code: 0x0502,
            },
            K::Gl,
        ),
        (
            Error::Timeout {
                what: "a fence".into(),
                timeout: std::time::Duration::from_secs(1),
            },
            K::Timeout,
        ),
        (
            Error::DeferredDrop(vec![cuda(CUresult::CUDA_ERROR_INVALID_VALUE)]),
            K::DeferredDrop,
        ),
        (Error::Internal { what: "x".into() }, K::Internal),
    ]
}

#[test]
fn kinds_follow_the_variant_and_the_code() {
    let cases = errors_with_their_kinds();
    for (err, kind) in &cases {
        assert_eq!(err.kind(), *kind, "{err}");
    }
    let seen: HashSet<ErrorKind> = cases.iter().map(|(_, kind)| *kind).collect();
    // `Egl` and `Wgpu` are seen only with their features (`egl`'s own test below; wgpu's in
    // error/wgpu.rs).
    let unseen: Vec<&ErrorKind> = ErrorKind::ALL
        .iter()
        .filter(|k| !seen.contains(k) && !matches!(k, ErrorKind::Egl | ErrorKind::Wgpu))
        .collect();
    assert!(unseen.is_empty(), "kinds no error has: {unseen:?}");
}

#[test]
fn new_flat_variants_end_with_help() {
    for err in [
        Error::Internal {
            what: "cuMemExportToShareableHandle succeeded but returned descriptor -1".into(),
        },
        Error::ExternalMemoryUnsupported {
            device: Box::new(label()),
            feature: "POSIX file descriptor handles",
        },
        Error::DriverLibraryMismatch {
            cuda_gl_device: 0,
            owner_device: 1,
        },
    ] {
        let message = err.to_string();
        assert!(message.contains("\nhelp: "), "{message}");
    }
}

#[test]
fn unsupported_setup_is_the_machine_not_the_program() {
    let setup = [
        Error::Load(cuda_gl_sys::LoadError::NotFound { tried: Vec::new() }),
        Error::from(cuda(CUresult::CUDA_ERROR_NO_DEVICE)),
        Error::from(cuda(CUresult::CUDA_ERROR_STUB_LIBRARY)),
        Error::from(cuda(CUresult::CUDA_ERROR_NOT_SUPPORTED)),
        Error::NotNvidiaGl {
            source: cuda(CUresult::CUDA_ERROR_NO_DEVICE),
        },
        Error::WrongDevice {
            gl_devices: vec![label()],
            cuda: Box::new(label()),
        },
        Error::PtxTooNew {
            driver_version: 12020,
            source: cuda(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
        },
        Error::GlPlatformUnknown { call: "glTest" },
        Error::GlNoErrorContext { call: "glTest" },
        Error::InvalidModule {
            log: String::new(),
            source: cuda(CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU),
        },
        Error::MissingGlFunction {
            function: "glImportMemoryFdEXT",
        },
        Error::MissingGlExtension {
            extension: "GL_EXT_memory_object_fd",
            renderer: "llvmpipe".into(),
        },
        Error::GlCheckUnavailable {
            check: "which GL context owns an object",
            why: "OpenGL 3.3".into(),
        },
        Error::NvrtcUnavailable { tried: Vec::new() },
        Error::ExternalMemoryUnsupported {
            device: Box::new(label()),
            feature: "virtual memory management",
        },
        Error::DriverLibraryMismatch {
            cuda_gl_device: 0,
            owner_device: 1,
        },
    ];
    for err in setup {
        assert!(err.is_unsupported_setup(), "{err}");
    }
    let bugs = [
        Error::InvalidModule {
            log: String::new(),
            source: cuda(CUresult::CUDA_ERROR_INVALID_PTX),
        },
        Error::from(cuda(CUresult::CUDA_ERROR_INVALID_VALUE)),
        Error::from(cuda(CUresult::CUDA_ERROR_OUT_OF_MEMORY)),
        Error::from(cuda(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)),
        Error::NoGlContext {
            source: cuda(CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
        },
        Error::Usage(UsageError::ZeroGlName { kind: "buffer" }),
        Error::InvalidArgument("x".into()),
        Error::Internal { what: "x".into() },
        Error::Timeout {
            what: "a fence".into(),
            timeout: std::time::Duration::from_secs(1),
        },
    ];
    for err in bugs {
        assert!(!err.is_unsupported_setup(), "{err}");
    }
}

#[cfg(feature = "egl")]
#[test]
fn egl_errors_of_a_missing_installation_are_unsupported_setup() {
    use crate::error::egl::{EglError, EglErrorCode};
    let missing = Error::Egl(EglError::LibraryNotFound {
        reason: "libEGL.so.1: cannot open shared object file".into(),
    });
    assert!(missing.is_unsupported_setup());
    assert_eq!(missing.kind(), ErrorKind::UnsupportedSetup);
    let busy = Error::Egl(EglError::MakeCurrent {
        code: EglErrorCode(0x3002),
    });
    assert!(!busy.is_unsupported_setup());
    assert_eq!(busy.kind(), ErrorKind::Egl);
}
