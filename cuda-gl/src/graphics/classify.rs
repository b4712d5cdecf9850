//! The driver's refusals of a registration, turned into the variants that say what to do.

use super::{Kind, RegisterFlags};
use crate::context::Context;
use crate::device::{GlDeviceList, gl_devices};
use crate::error::Error;
use crate::glapi::{self, GlFns, query};
use crate::result;
use crate::result::CudaError;
use cuda_gl_sys as sys;

pub(super) fn classify_register_error(
    e: CudaError,
    fns: &GlFns,
    name: u32,
    kind: Kind,
    ctx: &Context,
) -> Error {
    use sys::CUresult as R;
    let kind_text = kind.describe().to_string();
    match e.code {
        R::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT => Error::NoGlContext { source: e },
        R::CUDA_ERROR_INVALID_DEVICE => Error::WrongDevice {
            gl_devices: gl_devices(GlDeviceList::All)
                .map(|ds| ds.iter().map(|d| d.label()).collect())
                .unwrap_or_default(),
            cuda: Box::new(ctx.device().label()),
        },
        R::CUDA_ERROR_OPERATING_SYSTEM | R::CUDA_ERROR_UNKNOWN | R::CUDA_ERROR_NO_DEVICE => {
            // Which of the two: a GL context that is not NVIDIA's, or no GL context at all.
            match gl_devices(GlDeviceList::All) {
                Err(Error::NoGlContext { .. }) => Error::NoGlContext { source: e },
                // An NVIDIA GL context is current: the object itself was refused (the driver
                // says UNKNOWN for an object it cannot register).
                Ok(devices) if !devices.is_empty() && e.code == R::CUDA_ERROR_UNKNOWN => {
                    Error::NotAGlObject {
                        name,
                        kind: kind_text,
                        source: e,
                    }
                }
                Ok(devices) if !devices.is_empty() => e.into(),
                _ => Error::NotNvidiaGl { source: e },
            }
        }
        // The driver says "out of memory" for a buffer without storage.
        R::CUDA_ERROR_OUT_OF_MEMORY
            if kind == Kind::Buffer && query::buffer_size(fns, name) == Some(0) =>
        {
            Error::NotAGlObject {
                name,
                kind: kind_text,
                source: e,
            }
        }
        R::CUDA_ERROR_INVALID_VALUE if glapi::current() == glapi::Current::None => {
            Error::NoGlContext { source: e }
        }
        R::CUDA_ERROR_INVALID_VALUE
        | R::CUDA_ERROR_INVALID_HANDLE
        | R::CUDA_ERROR_NOT_SUPPORTED
        | R::CUDA_ERROR_INVALID_IMAGE => Error::NotAGlObject {
            name,
            kind: kind_text,
            source: e,
        },
        _ => e.into(),
    }
}

/// Refines [`Error::NotAGlObject`] for an image that GL says exists into
/// [`Error::UnsupportedImage`]: when CUDA takes it without the surface and gather flags, those
/// flags are what its format cannot do; otherwise its target or format is refused.
pub(super) fn explain_refused_image(
    error: Error,
    fns: &GlFns,
    name: u32,
    kind: Kind,
    flags: RegisterFlags,
) -> Error {
    let Error::NotAGlObject { source, .. } = &error else {
        return error;
    };
    let Some(target) = kind.image_enum() else {
        return error;
    };
    let unsupported = |flags_only| Error::UnsupportedImage {
        name,
        kind: kind.describe().to_string(),
        flags,
        flags_only,
        source: source.clone(),
    };
    let special = RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::TEXTURE_GATHER;
    if flags.intersects(special) {
        // SAFETY: the probe handle is unregistered just below and never escapes.
        let probe =
            unsafe { result::graphics::register_image(name, target, (flags - special).bits()) };
        if let Ok(raw) = probe {
            // SAFETY: registered just above, never mapped.
            if let Err(e) = unsafe { result::graphics::unregister(raw) } {
                log::warn!("cuda-gl: unregistering a probe registration of GL image {name}: {e}");
            }
            return unsupported(true);
        }
    }
    if query::exists(fns, kind, name) {
        return unsupported(false);
    }
    error
}
