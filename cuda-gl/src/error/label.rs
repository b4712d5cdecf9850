//! [`DeviceLabel`], how error messages name a device.

use std::fmt;

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
