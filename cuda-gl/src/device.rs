//! CUDA devices, and the devices behind the current OpenGL context.

use crate::error::{DeviceLabel, Error, Result, UsageError};
use crate::result;
use crate::result::CudaError;
use cuda_gl_sys as sys;

/// A CUDA device, by ordinal.
///
/// Ordinals follow the driver's numbering, which `CUDA_VISIBLE_DEVICES` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    raw: sys::CUdevice,
}

impl Device {
    /// How many CUDA devices the driver sees.
    ///
    /// # Errors
    /// [`Error::Load`](crate::Error::Load) without a driver; [`Error::Cuda`](crate::Error::Cuda)
    /// when `cuInit` fails (for example `CUDA_ERROR_NO_DEVICE`).
    #[doc(alias = "cuDeviceGetCount")]
    pub fn count() -> Result<usize> {
        Ok(result::device::count()?.max(0) as usize)
    }

    /// The device with this ordinal.
    ///
    /// # Errors
    /// As [`Device::count`], and `CUDA_ERROR_INVALID_DEVICE` for an ordinal out of range.
    #[doc(alias = "cuDeviceGet")]
    pub fn get(ordinal: usize) -> Result<Device> {
        let ordinal = i32::try_from(ordinal).map_err(|_| UsageError::TooLarge {
            what: "the device ordinal",
            value: ordinal as u128,
            max: i32::MAX as u128,
        })?;
        Ok(Device {
            raw: result::device::get(ordinal)?,
        })
    }

    /// Wraps a raw `CUdevice` handle (which is the device's ordinal).
    pub fn from_raw(raw: sys::CUdevice) -> Device {
        Device { raw }
    }

    /// The raw `CUdevice` handle.
    pub fn raw(&self) -> sys::CUdevice {
        self.raw
    }

    /// The CUDA ordinal.
    pub fn ordinal(&self) -> usize {
        self.raw.max(0) as usize
    }

    /// The device's name, e.g. `NVIDIA H200`.
    ///
    /// # Errors
    /// The driver's error from `cuDeviceGetName`.
    #[doc(alias = "cuDeviceGetName")]
    pub fn name(&self) -> Result<String> {
        Ok(result::device::name(self.raw)?)
    }

    /// The PCI bus id, `domain:bus:device.function`.
    ///
    /// # Errors
    /// The driver's error from `cuDeviceGetPCIBusId`.
    #[doc(alias = "cuDeviceGetPCIBusId")]
    pub fn pci_bus_id(&self) -> Result<String> {
        Ok(result::device::pci_bus_id(self.raw)?)
    }

    /// The compute capability as (major, minor).
    ///
    /// # Errors
    /// The driver's error from `cuDeviceGetAttribute`.
    #[doc(alias = "cuDeviceGetAttribute")]
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        use sys::CUdevice_attribute as A;
        Ok((
            result::device::attribute(self.raw, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            result::device::attribute(self.raw, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ))
    }

    /// Any device attribute.
    ///
    /// # Errors
    /// The driver's error from `cuDeviceGetAttribute`.
    #[doc(alias = "cuDeviceGetAttribute")]
    pub fn attribute(&self, attribute: sys::CUdevice_attribute) -> Result<i32> {
        Ok(result::device::attribute(self.raw, attribute)?)
    }

    /// Total device memory in bytes.
    ///
    /// # Errors
    /// The driver's error from `cuDeviceTotalMem`.
    #[doc(alias = "cuDeviceTotalMem")]
    pub fn total_memory(&self) -> Result<usize> {
        Ok(result::device::total_mem(self.raw)?)
    }

    /// A label for messages: ordinal, name and PCI bus id (unknown parts are marked so).
    pub fn label(&self) -> DeviceLabel {
        DeviceLabel {
            ordinal: self.raw,
            name: self.name().unwrap_or_else(|_| "unknown name".into()),
            pci_bus_id: self.pci_bus_id().unwrap_or_else(|_| "unknown".into()),
        }
    }
}

/// Which devices [`gl_devices`] asks for (`CUGLDeviceList`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GlDeviceList {
    /// Every CUDA device the current GL context uses.
    #[default]
    All,
    /// The devices rendering the current frame (SLI).
    CurrentFrame,
    /// The devices rendering the next frame (SLI).
    NextFrame,
}

impl GlDeviceList {
    fn raw(self) -> sys::CUGLDeviceList {
        match self {
            GlDeviceList::All => sys::CUGLDeviceList::CU_GL_DEVICE_LIST_ALL,
            GlDeviceList::CurrentFrame => sys::CUGLDeviceList::CU_GL_DEVICE_LIST_CURRENT_FRAME,
            GlDeviceList::NextFrame => sys::CUGLDeviceList::CU_GL_DEVICE_LIST_NEXT_FRAME,
        }
    }
}

/// The CUDA devices behind the OpenGL context current on this thread.
///
/// # Errors
/// [`Error::NoGlContext`](crate::Error::NoGlContext) when no GL context is current;
/// [`Error::NotNvidiaGl`](crate::Error::NotNvidiaGl) when the current context is not on an NVIDIA
/// GPU (for example Mesa's llvmpipe); otherwise the driver's error.
#[doc(alias = "cuGLGetDevices")]
pub fn gl_devices(list: GlDeviceList) -> Result<Vec<Device>> {
    match result::device::gl_devices(list.raw()) {
        Ok(devices) => Ok(devices.into_iter().map(Device::from_raw).collect()),
        Err(result::DriverError::Cuda(e)) => Err(classify_gl_error(e)),
        Err(e) => Err(e.into()),
    }
}

/// Refuses `device` unless the OpenGL context current on this thread runs on it
/// (`cuGLGetDevices` lists it): where CUDA can register that context's objects for `device`.
///
/// # Errors
/// As [`gl_devices`] ([`Error::NoGlContext`], [`Error::NotNvidiaGl`], the driver's);
/// [`Error::WrongDevice`] when the list does not name `device` (an empty list included).
#[cfg(feature = "wgpu-gl")]
pub(crate) fn check_gl_runs_on(device: &Device) -> Result<()> {
    let devices = gl_devices(GlDeviceList::All)?;
    if devices.contains(device) {
        return Ok(());
    }
    Err(Error::WrongDevice {
        gl_devices: devices.iter().map(Device::label).collect(),
        cuda: Box::new(device.label()),
    })
}

/// Turns the driver's error from a GL-device query into the variant that says what to do.
fn classify_gl_error(e: CudaError) -> Error {
    use sys::CUresult as R;
    match e.code {
        R::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT | R::CUDA_ERROR_INVALID_CONTEXT => {
            Error::NoGlContext { source: e }
        }
        R::CUDA_ERROR_NO_DEVICE | R::CUDA_ERROR_OPERATING_SYSTEM | R::CUDA_ERROR_UNKNOWN => {
            Error::NotNvidiaGl { source: e }
        }
        _ => e.into(),
    }
}
