//! [`ErrorKind`], the coarse class of an error with a stable name, and
//! [`Error::is_unsupported_setup`], which tells "this machine or setup cannot do this" from a bug.

use super::{Error, UsageError};
use cuda_gl_sys::CUresult;

/// What class of failure an [`Error`] is, like [`std::io::ErrorKind`]: what a program branches
/// on (fall back, fix the call, recreate a context, report a bug), with a stable name
/// ([`ErrorKind::as_str`], snake case) for logs, metrics and tests. The variant of [`Error`]
/// (and of [`UsageError`]) says exactly what failed; the kind says what to do about it.
///
/// New kinds may be added in minor releases; names never change.
// strum's derives give the names (the public `From<ErrorKind> for &'static str` is std's
// trait) and, in tests, the list of every kind; no strum type is part of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::VariantArray))]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The call was refused because of its arguments or the state of what it was given: fix the
    /// call. Every [`Error::Usage`] but a wrong CUDA context, [`Error::InvalidArgument`], kernel
    /// arguments, copy sizes and slice layouts, a GL name that is not an object of the kind
    /// registered or is registered already, an image target or format CUDA cannot register, a
    /// sub-resource out of range, a stream that is capturing a graph, and the display's and
    /// the video's refusals ([`Error::Display`], [`Error::Video`]).
    Usage,
    /// The call needs another context current or given: no GL context current
    /// ([`Error::NoGlContext`]), another GL context than the object's
    /// ([`Error::WrongGlContext`]), or a stream or resource of another CUDA context
    /// ([`UsageError::WrongCudaContext`]).
    WrongContext,
    /// A context the call depends on is gone: the CUDA context after a kernel fault or a reset
    /// ([`Error::ContextUnusable`]), or the GL context that owned an object
    /// ([`Error::GlContextGone`], [`Error::MappingStateLost`]). Drop the handles of that context.
    ContextLost,
    /// This machine or setup cannot do it, whatever the program does: see
    /// [`Error::is_unsupported_setup`] for the list. A program falls back or says what to
    /// install.
    UnsupportedSetup,
    /// The CUDA driver library cannot be opened or is too old ([`Error::Load`]).
    Load,
    /// The CUDA driver refused a call with a code that has no more specific meaning
    /// ([`Error::Cuda`]), or misbehaved ([`Error::ImportNotShared`]).
    Driver,
    /// Kernel code could not be compiled or loaded ([`Error::Compile`],
    /// [`Error::InvalidModule`]).
    Compile,
    /// A GL call of cuda-gl's own failed ([`Error::GlCall`]).
    Gl,
    /// An EGL call failed (`Error::Egl`, feature `egl`), other than for a missing or incomplete
    /// EGL.
    Egl,
    /// A wgpu or Vulkan call of cuda-gl's wgpu interop failed (`Error::Wgpu`, feature `wgpu`),
    /// other than for a setup that cannot do it (another GPU, a missing extension).
    Wgpu,
    /// A wait for the GPU did not end within its limit ([`Error::Timeout`]).
    Timeout,
    /// A `Drop` failed earlier, and this reports it ([`Error::DeferredDrop`]).
    DeferredDrop,
    /// A bug of cuda-gl or of the driver ([`Error::Internal`]).
    Internal,
}

impl ErrorKind {
    /// Every kind, in the order they are declared (tests).
    #[cfg(test)]
    pub(crate) const ALL: &'static [ErrorKind] = <ErrorKind as strum::VariantArray>::VARIANTS;

    /// The kind's stable name, in snake case: `"unsupported_setup"` for
    /// [`ErrorKind::UnsupportedSetup`].
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
    /// What class of failure this is. A new variant of [`Error`] gets its kind here, in this one
    /// match; [`Error::Usage`] gives its [`UsageError`]'s kind.
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            Error::Usage(e) => e.kind(),
            Error::Display(_)
            | Error::Video(_)
            | Error::InvalidArgument(_)
            | Error::KernelArguments { .. }
            | Error::SliceLayout { .. }
            | Error::CopySize { .. }
            | Error::NotAGlObject { .. }
            | Error::AlreadyRegistered { .. }
            | Error::InvalidSubresource { .. }
            | Error::UnsupportedImage { .. }
            | Error::WrongImageTarget { .. }
            | Error::UnknownTextureTarget { .. }
            | Error::StreamCapturing { .. } => K::Usage,
            Error::NoGlContext { .. } | Error::WrongGlContext { .. } => K::WrongContext,
            Error::ContextUnusable { .. }
            | Error::GlContextGone { .. }
            | Error::MappingStateLost { .. } => K::ContextLost,
            Error::NotNvidiaGl { .. }
            | Error::WrongDevice { .. }
            | Error::PtxTooNew { .. }
            | Error::DriverLibraryMismatch { .. }
            | Error::GlPlatformUnknown { .. }
            | Error::MissingGlFunction { .. }
            | Error::MissingGlExtension { .. }
            | Error::GlCheckUnavailable { .. }
            | Error::GlNoErrorContext { .. }
            | Error::NvrtcUnavailable { .. }
            | Error::ExternalMemoryUnsupported { .. } => K::UnsupportedSetup,
            Error::Load(_) => K::Load,
            Error::Cuda(e) if SETUP_CODES.contains(&e.code) => K::UnsupportedSetup,
            Error::Cuda(_) | Error::ImportNotShared { .. } => K::Driver,
            // A valid cubin built for another GPU architecture: this GPU cannot run it.
            Error::InvalidModule { source, .. }
                if source.code == CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU =>
            {
                K::UnsupportedSetup
            }
            Error::InvalidModule { .. } | Error::Compile { .. } => K::Compile,
            Error::GlCall { .. } => K::Gl,
            #[cfg(feature = "egl")]
            Error::Egl(e) if e.is_unsupported_setup() => K::UnsupportedSetup,
            #[cfg(feature = "egl")]
            Error::Egl(_) => K::Egl,
            #[cfg(feature = "wgpu")]
            Error::Wgpu(e) if e.is_unsupported_setup() => K::UnsupportedSetup,
            #[cfg(feature = "wgpu")]
            Error::Wgpu(_) => K::Wgpu,
            Error::Timeout { .. } => K::Timeout,
            Error::DeferredDrop(_) => K::DeferredDrop,
            Error::Internal { .. } => K::Internal,
        }
    }

    /// Whether this error means "this machine or setup cannot do this", rather than a bug of the
    /// program (or of cuda-gl) to fix: the cases where a program falls back (to the CPU, to
    /// another path) or tells the user what to install, instead of reporting a bug. It is the
    /// kinds [`ErrorKind::Load`] and [`ErrorKind::UnsupportedSetup`].
    ///
    /// The rule: `true` when the same call would fail the same way whatever the program did,
    /// because of what is installed or present:
    /// - no usable CUDA driver: [`Error::Load`] (missing or too old), [`Error::Cuda`] with a code
    ///   that says so (`CUDA_ERROR_NO_DEVICE`, `_STUB_LIBRARY`, `_SYSTEM_DRIVER_MISMATCH`,
    ///   `_COMPAT_NOT_SUPPORTED_ON_DEVICE`, `_SYSTEM_NOT_READY`, `_DEVICE_UNAVAILABLE`,
    ///   `_DEVICE_NOT_LICENSED`, `_NOT_SUPPORTED`, `_NO_BINARY_FOR_GPU`,
    ///   `_UNSUPPORTED_PTX_VERSION`, `_JIT_COMPILER_NOT_FOUND`, `_JIT_COMPILATION_DISABLED`),
    ///   [`Error::PtxTooNew`], [`Error::InvalidModule`] of a cubin for another GPU
    ///   (`_NO_BINARY_FOR_GPU`), [`Error::DriverLibraryMismatch`];
    /// - an OpenGL that CUDA cannot work with: [`Error::NotNvidiaGl`], [`Error::WrongDevice`]
    ///   (GL and CUDA on different GPUs), [`Error::GlPlatformUnknown`] (no EGL or GLX),
    ///   [`Error::MissingGlFunction`], [`Error::MissingGlExtension`],
    ///   [`Error::GlCheckUnavailable`], [`Error::GlNoErrorContext`];
    /// - a missing optional part: [`Error::NvrtcUnavailable`],
    ///   [`Error::ExternalMemoryUnsupported`], and `Error::Egl` when EGL is missing or
    ///   incomplete (`egl::EglError::is_unsupported_setup`, feature `egl`), and `Error::Wgpu`
    ///   of an adapter that cannot share with CUDA (feature `wgpu`).
    ///
    /// `false` for everything else: refused arguments ([`Error::Usage`],
    /// [`Error::InvalidArgument`]), no GL context current ([`Error::NoGlContext`]), kernel faults
    /// ([`Error::ContextUnusable`]), [`Error::Internal`] and the other driver errors.
    pub fn is_unsupported_setup(&self) -> bool {
        matches!(self.kind(), ErrorKind::Load | ErrorKind::UnsupportedSetup)
    }
}

impl UsageError {
    /// What class of failure this is: [`ErrorKind::WrongContext`] for a stream or resource of
    /// another CUDA context, [`ErrorKind::Usage`] for every other refusal.
    pub fn kind(&self) -> ErrorKind {
        match self {
            UsageError::WrongCudaContext { .. } => ErrorKind::WrongContext,
            _ => ErrorKind::Usage,
        }
    }
}

#[cfg(test)]
mod tests;
