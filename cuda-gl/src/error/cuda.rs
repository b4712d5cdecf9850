//! [`CudaError`], a failed driver call with the driver's name and description of its code, and
//! [`DeviceLabel`], how error messages name a device.

use cuda_gl_sys::CUresult;
use std::fmt;

/// A failed CUDA driver call: the call, the raw code, and the driver's name and description of it.
///
/// The code is kept as the raw [`CUresult`] newtype, so a code that a newer driver returns and
/// these bindings do not know is reported by its number, never misread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaError {
    /// The driver entry point that failed, e.g. `cuGraphicsGLRegisterBuffer`.
    pub call: &'static str,
    /// The raw result code.
    pub code: CUresult,
    /// The code's name from `cuGetErrorName`, e.g. `CUDA_ERROR_INVALID_VALUE`.
    pub name: String,
    /// The code's description from `cuGetErrorString`.
    pub description: String,
}

impl CudaError {
    /// Builds the error for `code` returned by `call`, asking the driver for its name and text.
    pub(crate) fn new(call: &'static str, code: CUresult) -> Self {
        let (name, description) = describe(code);
        Self {
            call,
            code,
            name,
            description,
        }
    }

    /// The raw numeric code.
    pub fn raw_code(&self) -> u32 {
        self.code.0
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed with {} ({}): {}",
            self.call, self.name, self.code.0, self.description
        )
    }
}

impl std::error::Error for CudaError {}

/// The driver's name and description for `code`, or a numbered placeholder for codes it does not
/// know.
fn describe(code: CUresult) -> (String, String) {
    if cuda_gl_sys::driver().is_err() {
        return (format!("CUresult {}", code.0), "(driver not loaded)".into());
    }
    (
        crate::result::error::name(code).unwrap_or_else(|| format!("unknown CUresult {}", code.0)),
        crate::result::error::string(code)
            .unwrap_or_else(|| "a code this driver does not describe".to_string()),
    )
}

/// A description of a CUDA device for error messages: ordinal, name and PCI bus id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceLabel {
    /// The CUDA ordinal (as renumbered by `CUDA_VISIBLE_DEVICES`).
    pub ordinal: i32,
    /// The device name.
    pub name: String,
    /// The PCI bus id, `domain:bus:device.function`.
    pub pci_bus_id: String,
}

impl fmt::Display for DeviceLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CUDA device {} ({}, PCI {})",
            self.ordinal, self.name, self.pci_bus_id
        )
    }
}

/// The devices of `list`, comma-separated, for error messages.
pub(super) fn labels(list: &[DeviceLabel]) -> String {
    if list.is_empty() {
        return "no CUDA device".into();
    }
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
