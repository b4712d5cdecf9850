//! [`ErrorKind`], a stable name for each error, and [`Error::is_unsupported_setup`], which tells
//! "this machine or setup cannot do this" from a bug.

use super::{Error, UsageError};
use cuda_gl_sys::CUresult;

/// What an [`Error`] is, without its fields: one variant per variant of [`Error`] and of
/// [`UsageError`] (whose errors reach callers as [`Error::Usage`]), each with a stable name
/// ([`ErrorKind::as_str`]: the variant's name in snake case) for logs, metrics and tests.
///
/// New kinds may be added in minor releases; names never change.
// strum's derives give the names (the public `From<ErrorKind> for &'static str` is std's
// trait) and, in tests, the list of every kind; no strum type is part of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::VariantArray))]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Error::Load`]
    Load,
    /// [`Error::Cuda`]
    Cuda,
    /// [`Error::NoGlContext`]
    NoGlContext,
    /// [`Error::NotAGlObject`]
    NotAGlObject,
    /// [`Error::WrongDevice`]
    WrongDevice,
    /// [`Error::AlreadyRegistered`]
    AlreadyRegistered,
    /// [`Error::PtxTooNew`]
    PtxTooNew,
    /// [`Error::InvalidModule`]
    InvalidModule,
    /// [`Error::NotNvidiaGl`]
    NotNvidiaGl,
    /// [`Error::InvalidSubresource`]
    InvalidSubresource,
    /// [`Error::InvalidArgument`]
    InvalidArgument,
    /// [`Error::Internal`]
    Internal,
    /// [`Error::ExternalMemoryUnsupported`]
    ExternalMemoryUnsupported,
    /// [`Error::DriverLibraryMismatch`]
    DriverLibraryMismatch,
    /// [`Error::KernelArguments`]
    KernelArguments,
    /// [`Error::SliceLayout`]
    SliceLayout,
    /// [`Error::CopySize`]
    CopySize,
    /// [`Error::NvrtcUnavailable`]
    NvrtcUnavailable,
    /// [`Error::Compile`]
    Compile,
    /// [`Error::DeferredDrop`]
    DeferredDrop,
    /// `Error::Egl` (feature `egl`)
    Egl,
    /// `Error::Wgpu` (feature `wgpu`)
    Wgpu,
    /// [`Error::MissingGlExtension`]
    MissingGlExtension,
    /// [`Error::MissingGlFunction`]
    MissingGlFunction,
    /// [`Error::GlCall`]
    GlCall,
    /// [`Error::WrongGlContext`]
    WrongGlContext,
    /// [`Error::GlContextGone`]
    GlContextGone,
    /// [`Error::GlPlatformUnknown`]
    GlPlatformUnknown,
    /// [`Error::GlCheckUnavailable`]
    GlCheckUnavailable,
    /// [`Error::StreamCapturing`]
    StreamCapturing,
    /// [`Error::Timeout`]
    Timeout,
    /// [`Error::UnsupportedImage`]
    UnsupportedImage,
    /// [`Error::ContextUnusable`]
    ContextUnusable,
    /// [`Error::WrongImageTarget`]
    WrongImageTarget,
    /// [`Error::UnknownTextureTarget`]
    UnknownTextureTarget,
    /// [`Error::MappingStateLost`]
    MappingStateLost,
    /// [`Error::ImportNotShared`]
    ImportNotShared,
    /// [`UsageError::WrongCudaContext`]
    WrongCudaContext,
    /// [`UsageError::OutOfRange`]
    OutOfRange,
    /// [`UsageError::SizeMismatch`]
    SizeMismatch,
    /// [`UsageError::ZeroSize`]
    ZeroSize,
    /// [`UsageError::TooLarge`]
    TooLarge,
    /// [`UsageError::AddressOverflow`]
    AddressOverflow,
    /// [`UsageError::ReadOnlyMapping`]
    ReadOnlyMapping,
    /// [`UsageError::NotSurfaceRegistered`]
    NotSurfaceRegistered,
    /// [`UsageError::ZeroGlName`]
    ZeroGlName,
    /// [`UsageError::ContradictoryFlags`]
    ContradictoryFlags,
    /// [`UsageError::ImageOnlyFlags`]
    ImageOnlyFlags,
    /// [`UsageError::NulByte`]
    NulByte,
    /// [`UsageError::BadFrameStreamShape`]
    BadFrameStreamShape,
    /// [`UsageError::BadRingSlots`]
    BadRingSlots,
    /// [`UsageError::EventWithoutTiming`]
    EventWithoutTiming,
    /// [`UsageError::KernelArgsImpl`]
    KernelArgsImpl,
    /// [`UsageError::ArrayOfAnotherMapping`]
    ArrayOfAnotherMapping,
    /// [`UsageError::NotOfThisBatch`]
    NotOfThisBatch,
    /// [`UsageError::Unregistered`]
    Unregistered,
    /// [`UsageError::FrameMapFailed`]
    FrameMapFailed,
    /// [`UsageError::EmptyBatch`]
    EmptyBatch,
    /// [`UsageError::UncopyableFormat`]
    UncopyableFormat,
    /// [`UsageError::OverlappingCopy`]
    OverlappingCopy,
    /// [`UsageError::MappedOnOtherStream`]
    MappedOnOtherStream,
    /// [`UsageError::EmptyGlBuffer`]
    EmptyGlBuffer,
    /// [`UsageError::OffscreenSize`]
    OffscreenSize,
    /// [`UsageError::TargetSize`]
    TargetSize,
    /// [`UsageError::DisplayObjectReplaced`]
    DisplayObjectReplaced,
    /// [`UsageError::ColorMapRange`]
    ColorMapRange,
    /// [`UsageError::PitchedSource`]
    PitchedSource,
    /// [`UsageError::NeedsCudarcStream`]
    NeedsCudarcStream,
    /// [`UsageError::PinnedBufferUntracked`]
    PinnedBufferUntracked,
}

impl ErrorKind {
    /// Every kind, in the order they are declared (tests).
    #[cfg(test)]
    pub(crate) const ALL: &'static [ErrorKind] = <ErrorKind as strum::VariantArray>::VARIANTS;

    /// The kind's stable name, in snake case: `"not_nvidia_gl"` for [`ErrorKind::NotNvidiaGl`].
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The driver codes that mean "this machine or its driver cannot do this": no device, a stub or
/// mismatched driver library, a device that is unavailable or lacks the feature, a kernel image
/// or PTX this driver cannot run.
const SETUP_CODES: [CUresult; 12] = [
    CUresult::CUDA_ERROR_NO_DEVICE,
    CUresult::CUDA_ERROR_STUB_LIBRARY,
    CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
    CUresult::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
    CUresult::CUDA_ERROR_SYSTEM_NOT_READY,
    CUresult::CUDA_ERROR_DEVICE_UNAVAILABLE,
    CUresult::CUDA_ERROR_DEVICE_NOT_LICENSED,
    CUresult::CUDA_ERROR_NOT_SUPPORTED,
    CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU,
    CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
    CUresult::CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
    CUresult::CUDA_ERROR_JIT_COMPILATION_DISABLED,
];

impl Error {
    /// What this error is, without its fields; [`Error::Usage`] gives the [`UsageError`]'s kind.
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            Error::Load(_) => K::Load,
            Error::Cuda(_) => K::Cuda,
            Error::NoGlContext { .. } => K::NoGlContext,
            Error::NotAGlObject { .. } => K::NotAGlObject,
            Error::WrongDevice { .. } => K::WrongDevice,
            Error::AlreadyRegistered { .. } => K::AlreadyRegistered,
            Error::PtxTooNew { .. } => K::PtxTooNew,
            Error::InvalidModule { .. } => K::InvalidModule,
            Error::NotNvidiaGl { .. } => K::NotNvidiaGl,
            Error::InvalidSubresource { .. } => K::InvalidSubresource,
            Error::Usage(e) => e.kind(),
            Error::InvalidArgument(_) => K::InvalidArgument,
            Error::Internal { .. } => K::Internal,
            Error::ExternalMemoryUnsupported { .. } => K::ExternalMemoryUnsupported,
            Error::DriverLibraryMismatch { .. } => K::DriverLibraryMismatch,
            Error::KernelArguments { .. } => K::KernelArguments,
            Error::SliceLayout { .. } => K::SliceLayout,
            Error::CopySize { .. } => K::CopySize,
            Error::NvrtcUnavailable { .. } => K::NvrtcUnavailable,
            Error::Compile { .. } => K::Compile,
            Error::DeferredDrop(_) => K::DeferredDrop,
            #[cfg(feature = "egl")]
            Error::Egl(_) => K::Egl,
            #[cfg(feature = "wgpu")]
            Error::Wgpu(_) => K::Wgpu,
            Error::MissingGlExtension { .. } => K::MissingGlExtension,
            Error::MissingGlFunction { .. } => K::MissingGlFunction,
            Error::GlCall { .. } => K::GlCall,
            Error::WrongGlContext { .. } => K::WrongGlContext,
            Error::GlContextGone { .. } => K::GlContextGone,
            Error::GlPlatformUnknown { .. } => K::GlPlatformUnknown,
            Error::GlCheckUnavailable { .. } => K::GlCheckUnavailable,
            Error::StreamCapturing { .. } => K::StreamCapturing,
            Error::Timeout { .. } => K::Timeout,
            Error::UnsupportedImage { .. } => K::UnsupportedImage,
            Error::ContextUnusable { .. } => K::ContextUnusable,
            Error::WrongImageTarget { .. } => K::WrongImageTarget,
            Error::UnknownTextureTarget { .. } => K::UnknownTextureTarget,
            Error::MappingStateLost { .. } => K::MappingStateLost,
            Error::ImportNotShared { .. } => K::ImportNotShared,
        }
    }

    /// Whether this error means "this machine or setup cannot do this", rather than a bug of the
    /// program (or of cuda-gl) to fix: the cases where a program falls back (to the CPU, to
    /// another path) or tells the user what to install, instead of reporting a bug.
    ///
    /// The rule: `true` when the same call would fail the same way whatever the program did,
    /// because of what is installed or present:
    /// - no usable CUDA driver: [`Error::Load`] (missing or too old), [`Error::Cuda`] with a code
    ///   that says so (`CUDA_ERROR_NO_DEVICE`, `_STUB_LIBRARY`, `_SYSTEM_DRIVER_MISMATCH`,
    ///   `_COMPAT_NOT_SUPPORTED_ON_DEVICE`, `_SYSTEM_NOT_READY`, `_DEVICE_UNAVAILABLE`,
    ///   `_DEVICE_NOT_LICENSED`, `_NOT_SUPPORTED`, `_NO_BINARY_FOR_GPU`,
    ///   `_UNSUPPORTED_PTX_VERSION`, `_JIT_COMPILER_NOT_FOUND`, `_JIT_COMPILATION_DISABLED`),
    ///   [`Error::PtxTooNew`], [`Error::DriverLibraryMismatch`];
    /// - an OpenGL that CUDA cannot work with: [`Error::NotNvidiaGl`], [`Error::WrongDevice`]
    ///   (GL and CUDA on different GPUs), [`Error::GlPlatformUnknown`] (no EGL or GLX),
    ///   [`Error::MissingGlFunction`], [`Error::MissingGlExtension`],
    ///   [`Error::GlCheckUnavailable`];
    /// - a missing optional part: [`Error::NvrtcUnavailable`],
    ///   [`Error::ExternalMemoryUnsupported`], and `Error::Egl` when EGL is missing or
    ///   incomplete (`egl::EglError::is_unsupported_setup`, feature `egl`).
    ///
    /// `false` for everything else: refused arguments ([`Error::Usage`],
    /// [`Error::InvalidArgument`]), no GL context current ([`Error::NoGlContext`]), kernel faults
    /// ([`Error::ContextUnusable`]), [`Error::Internal`] and the other driver errors.
    pub fn is_unsupported_setup(&self) -> bool {
        match self {
            Error::Load(_)
            | Error::PtxTooNew { .. }
            | Error::DriverLibraryMismatch { .. }
            | Error::NotNvidiaGl { .. }
            | Error::WrongDevice { .. }
            | Error::GlPlatformUnknown { .. }
            | Error::MissingGlFunction { .. }
            | Error::MissingGlExtension { .. }
            | Error::GlCheckUnavailable { .. }
            | Error::NvrtcUnavailable { .. }
            | Error::ExternalMemoryUnsupported { .. } => true,
            Error::Cuda(e) => SETUP_CODES.contains(&e.code),
            // A valid cubin built for another GPU architecture: this GPU cannot run it.
            Error::InvalidModule { source, .. } => {
                source.code == CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
            }
            #[cfg(feature = "egl")]
            Error::Egl(e) => e.is_unsupported_setup(),
            #[cfg(feature = "wgpu")]
            Error::Wgpu(e) => e.is_unsupported_setup(),
            _ => false,
        }
    }
}

impl UsageError {
    /// What this error is, without its fields.
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            UsageError::WrongCudaContext { .. } => K::WrongCudaContext,
            UsageError::OutOfRange { .. } => K::OutOfRange,
            UsageError::SizeMismatch { .. } => K::SizeMismatch,
            UsageError::ZeroSize { .. } => K::ZeroSize,
            UsageError::TooLarge { .. } => K::TooLarge,
            UsageError::AddressOverflow { .. } => K::AddressOverflow,
            UsageError::ReadOnlyMapping { .. } => K::ReadOnlyMapping,
            UsageError::NotSurfaceRegistered { .. } => K::NotSurfaceRegistered,
            UsageError::ZeroGlName { .. } => K::ZeroGlName,
            UsageError::ContradictoryFlags => K::ContradictoryFlags,
            UsageError::ImageOnlyFlags { .. } => K::ImageOnlyFlags,
            UsageError::NulByte { .. } => K::NulByte,
            UsageError::BadFrameStreamShape { .. } => K::BadFrameStreamShape,
            UsageError::BadRingSlots { .. } => K::BadRingSlots,
            UsageError::EventWithoutTiming => K::EventWithoutTiming,
            UsageError::KernelArgsImpl { .. } => K::KernelArgsImpl,
            UsageError::ArrayOfAnotherMapping { .. } => K::ArrayOfAnotherMapping,
            UsageError::NotOfThisBatch { .. } => K::NotOfThisBatch,
            UsageError::Unregistered { .. } => K::Unregistered,
            UsageError::FrameMapFailed { .. } => K::FrameMapFailed,
            UsageError::EmptyBatch => K::EmptyBatch,
            UsageError::UncopyableFormat { .. } => K::UncopyableFormat,
            UsageError::OverlappingCopy => K::OverlappingCopy,
            UsageError::MappedOnOtherStream { .. } => K::MappedOnOtherStream,
            UsageError::EmptyGlBuffer { .. } => K::EmptyGlBuffer,
            UsageError::OffscreenSize { .. } => K::OffscreenSize,
            UsageError::TargetSize { .. } => K::TargetSize,
            UsageError::DisplayObjectReplaced { .. } => K::DisplayObjectReplaced,
            UsageError::ColorMapRange => K::ColorMapRange,
            UsageError::PitchedSource { .. } => K::PitchedSource,
            UsageError::NeedsCudarcStream => K::NeedsCudarcStream,
            UsageError::PinnedBufferUntracked => K::PinnedBufferUntracked,
        }
    }
}

#[cfg(test)]
mod tests;
