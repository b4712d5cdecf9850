//! Tests of [`ErrorKind`](super::ErrorKind) and
//! [`Error::is_unsupported_setup`](super::Error::is_unsupported_setup).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::error::DeviceLabel;
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
        U::FrameMapFailed { what: "texture" },
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
        U::TargetSize {
            width: 0,
            height: 5,
            max: 32768,
        },
        U::DisplayObjectReplaced {
            object: "texture",
            name: 7,
        },
        U::ColorMapRange,
        U::PitchedSource {
            what: "the device buffer",
            width: 3,
            height: 2,
            pitch: 8,
            row_bytes: 12,
            needed: 24,
            given: 20,
        },
        U::NeedsCudarcStream,
        U::PinnedBufferUntracked,
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
fn kind_names_are_unique_stable_snake_case() {
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
    assert_eq!(ErrorKind::NotNvidiaGl.as_str(), "not_nvidia_gl");
    assert_eq!(ErrorKind::WrongCudaContext.as_str(), "wrong_cuda_context");
    assert_eq!(ErrorKind::ZeroGlName.as_str(), "zero_gl_name");
}

#[test]
fn every_usage_error_has_its_own_kind_and_a_help_line() {
    let all = every_usage_error();
    let kinds: HashSet<ErrorKind> = all.iter().map(UsageError::kind).collect();
    assert_eq!(kinds.len(), all.len(), "two usage errors share a kind");
    for e in all {
        let err = Error::from(e.clone());
        assert_eq!(err.kind(), e.kind(), "Error::Usage gives the inner kind");
        assert!(matches!(&err, Error::Usage(inner) if *inner == e));
        assert!(!err.is_unsupported_setup(), "{err}");
        assert!(err.cuda().is_none());
        let message = err.to_string();
        let help = message.rsplit_once("\nhelp: ").map(|(_, help)| help);
        assert!(help.is_some_and(|h| !h.is_empty()), "{message}");
    }
}

#[test]
fn kinds_of_the_flat_variants() {
    let cases = [
        (
            Error::Load(cuda_gl_sys::LoadError::NotFound { tried: Vec::new() }),
            ErrorKind::Load,
        ),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_INVALID_VALUE)),
            ErrorKind::Cuda,
        ),
        (
            Error::from(cuda(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)),
            ErrorKind::ContextUnusable,
        ),
        (
            Error::NotNvidiaGl {
                source: cuda(CUresult::CUDA_ERROR_NO_DEVICE),
            },
            ErrorKind::NotNvidiaGl,
        ),
        (
            Error::Internal {
                what: "descriptor -1".into(),
            },
            ErrorKind::Internal,
        ),
        (
            Error::InvalidArgument("x".into()),
            ErrorKind::InvalidArgument,
        ),
        (
            Error::ExternalMemoryUnsupported {
                device: Box::new(label()),
                feature: "virtual memory management",
            },
            ErrorKind::ExternalMemoryUnsupported,
        ),
        (
            Error::DriverLibraryMismatch {
                cuda_gl_device: 0,
                owner_device: 1,
            },
            ErrorKind::DriverLibraryMismatch,
        ),
    ];
    for (err, kind) in cases {
        assert_eq!(err.kind(), kind, "{err}");
    }
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
    assert_eq!(missing.kind(), ErrorKind::Egl);
    let busy = Error::Egl(EglError::MakeCurrent {
        code: EglErrorCode(0x3002),
    });
    assert!(!busy.is_unsupported_setup());
}

/// The stable names, as they were first published: a derive that spelled one differently would
/// change what logs and metrics key on.
#[test]
fn the_stable_names_stay() {
    let names = [
        (ErrorKind::Load, "load"),
        (ErrorKind::Cuda, "cuda"),
        (ErrorKind::NoGlContext, "no_gl_context"),
        (ErrorKind::NotAGlObject, "not_a_gl_object"),
        (ErrorKind::WrongDevice, "wrong_device"),
        (ErrorKind::AlreadyRegistered, "already_registered"),
        (ErrorKind::PtxTooNew, "ptx_too_new"),
        (ErrorKind::InvalidModule, "invalid_module"),
        (ErrorKind::NotNvidiaGl, "not_nvidia_gl"),
        (ErrorKind::InvalidSubresource, "invalid_subresource"),
        (ErrorKind::InvalidArgument, "invalid_argument"),
        (ErrorKind::Internal, "internal"),
        (
            ErrorKind::ExternalMemoryUnsupported,
            "external_memory_unsupported",
        ),
        (ErrorKind::DriverLibraryMismatch, "driver_library_mismatch"),
        (ErrorKind::KernelArguments, "kernel_arguments"),
        (ErrorKind::SliceLayout, "slice_layout"),
        (ErrorKind::CopySize, "copy_size"),
        (ErrorKind::NvrtcUnavailable, "nvrtc_unavailable"),
        (ErrorKind::Compile, "compile"),
        (ErrorKind::DeferredDrop, "deferred_drop"),
        (ErrorKind::Egl, "egl"),
        (ErrorKind::Wgpu, "wgpu"),
        (ErrorKind::MissingGlExtension, "missing_gl_extension"),
        (ErrorKind::MissingGlFunction, "missing_gl_function"),
        (ErrorKind::GlCall, "gl_call"),
        (ErrorKind::WrongGlContext, "wrong_gl_context"),
        (ErrorKind::GlContextGone, "gl_context_gone"),
        (ErrorKind::GlPlatformUnknown, "gl_platform_unknown"),
        (ErrorKind::GlCheckUnavailable, "gl_check_unavailable"),
        (ErrorKind::StreamCapturing, "stream_capturing"),
        (ErrorKind::Timeout, "timeout"),
        (ErrorKind::UnsupportedImage, "unsupported_image"),
        (ErrorKind::ContextUnusable, "context_unusable"),
        (ErrorKind::WrongImageTarget, "wrong_image_target"),
        (ErrorKind::UnknownTextureTarget, "unknown_texture_target"),
        (ErrorKind::MappingStateLost, "mapping_state_lost"),
        (ErrorKind::ImportNotShared, "import_not_shared"),
        (ErrorKind::WrongCudaContext, "wrong_cuda_context"),
        (ErrorKind::OutOfRange, "out_of_range"),
        (ErrorKind::SizeMismatch, "size_mismatch"),
        (ErrorKind::ZeroSize, "zero_size"),
        (ErrorKind::TooLarge, "too_large"),
        (ErrorKind::AddressOverflow, "address_overflow"),
        (ErrorKind::ReadOnlyMapping, "read_only_mapping"),
        (ErrorKind::NotSurfaceRegistered, "not_surface_registered"),
        (ErrorKind::ZeroGlName, "zero_gl_name"),
        (ErrorKind::ContradictoryFlags, "contradictory_flags"),
        (ErrorKind::ImageOnlyFlags, "image_only_flags"),
        (ErrorKind::NulByte, "nul_byte"),
        (ErrorKind::BadFrameStreamShape, "bad_frame_stream_shape"),
        (ErrorKind::BadRingSlots, "bad_ring_slots"),
        (ErrorKind::EventWithoutTiming, "event_without_timing"),
        (ErrorKind::KernelArgsImpl, "kernel_args_impl"),
        (ErrorKind::ArrayOfAnotherMapping, "array_of_another_mapping"),
        (ErrorKind::NotOfThisBatch, "not_of_this_batch"),
        (ErrorKind::Unregistered, "unregistered"),
        (ErrorKind::FrameMapFailed, "frame_map_failed"),
        (ErrorKind::EmptyBatch, "empty_batch"),
        (ErrorKind::UncopyableFormat, "uncopyable_format"),
        (ErrorKind::OverlappingCopy, "overlapping_copy"),
        (ErrorKind::MappedOnOtherStream, "mapped_on_other_stream"),
        (ErrorKind::EmptyGlBuffer, "empty_gl_buffer"),
        (ErrorKind::OffscreenSize, "offscreen_size"),
        (ErrorKind::TargetSize, "target_size"),
        (ErrorKind::DisplayObjectReplaced, "display_object_replaced"),
        (ErrorKind::ColorMapRange, "color_map_range"),
        (ErrorKind::PitchedSource, "pitched_source"),
        (ErrorKind::NeedsCudarcStream, "needs_cudarc_stream"),
        (ErrorKind::PinnedBufferUntracked, "pinned_buffer_untracked"),
    ];
    for (kind, name) in names {
        assert_eq!(kind.as_str(), name);
    }
    assert_eq!(
        names.len(),
        ErrorKind::ALL.len(),
        "a kind without its published name"
    );
}
