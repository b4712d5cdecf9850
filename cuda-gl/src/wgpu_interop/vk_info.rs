//! What a Vulkan physical device is and offers, asked through ash: its name, device UUID and API
//! version, timeline semaphores, and whether an image format or a timeline semaphore can be
//! exported as an `OPAQUE_FD`.

use super::WgpuError;
use ash::vk;
use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};

/// A physical device as the checks name it.
#[derive(Debug, Clone)]
pub(super) struct PhysicalInfo {
    /// `VkPhysicalDeviceProperties::deviceName`.
    pub name: String,
    /// `VkPhysicalDeviceIDProperties::deviceUUID`, which NVIDIA's driver makes equal to
    /// `cuDeviceGetUuid`'s.
    pub uuid: [u8; 16],
    /// `VkPhysicalDeviceProperties::apiVersion`.
    pub api_version: u32,
}

impl PhysicalInfo {
    /// `name (UUID)`, as errors print a device.
    pub fn label(&self) -> String {
        format!("{} ({})", self.name, uuid_string(&self.uuid))
    }
}

/// A 16-byte UUID in its usual 8-4-4-4-12 hex form.
pub(super) fn uuid_string(uuid: &[u8; 16]) -> String {
    let hex: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The `*2` queries below are Vulkan 1.1 instance functions: ash resolves them from the instance,
/// and calling one that the instance's API version lacks would call a missing entry point.
fn require_instance_1_1(call: &'static str, instance_api: u32) -> Result<(), WgpuError> {
    if instance_api >= vk::API_VERSION_1_1 {
        Ok(())
    } else {
        Err(WgpuError::Missing {
            call,
            device: "(instance)".into(),
            missing: format!(
                "a Vulkan 1.1 instance (the instance is {})",
                version_string(instance_api)
            ),
        })
    }
}

/// `major.minor.patch` of a Vulkan version number.
pub(super) fn version_string(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

/// Name, UUID and API version of `phd`.
///
/// # Safety
/// 1. `phd` is a physical device of `instance`, whose API version is `instance_api`.
pub(super) unsafe fn physical_info(
    instance: &ash::Instance,
    instance_api: u32,
    phd: vk::PhysicalDevice,
) -> Result<PhysicalInfo, WgpuError> {
    require_instance_1_1("vkGetPhysicalDeviceProperties2", instance_api)?;
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
    // SAFETY: (1); the instance is Vulkan 1.1 (checked above), so the core entry point exists;
    // the chain is two valid structures that outlive the call.
    unsafe { instance.get_physical_device_properties2(phd, &mut props) };
    let name = props
        .properties
        .device_name_as_c_str()
        .map(CStr::to_string_lossy)
        .unwrap_or_default()
        .into_owned();
    let api_version = props.properties.api_version;
    Ok(PhysicalInfo {
        name,
        uuid: id.device_uuid,
        api_version,
    })
}

/// Whether `phd` supports timeline semaphores (`VkPhysicalDeviceVulkan12Features`).
///
/// # Safety
/// As [`physical_info`], and `phd`'s API version is 1.2 or later.
pub(super) unsafe fn supports_timeline(instance: &ash::Instance, phd: vk::PhysicalDevice) -> bool {
    let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut timeline);
    // SAFETY: (1) of `physical_info`; a valid chain that outlives the call.
    unsafe { instance.get_physical_device_features2(phd, &mut features) };
    timeline.timeline_semaphore == vk::TRUE
}

/// Whether a timeline semaphore of `phd` can be exported as an `OPAQUE_FD` and imported again.
///
/// # Safety
/// As [`supports_timeline`].
pub(super) unsafe fn timeline_exportable(
    instance: &ash::Instance,
    phd: vk::PhysicalDevice,
) -> bool {
    let mut kind =
        vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
    let info = vk::PhysicalDeviceExternalSemaphoreInfo::default()
        .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD)
        .push_next(&mut kind);
    let mut props = vk::ExternalSemaphoreProperties::default();
    // SAFETY: (1) of `physical_info`, a 1.1 entry point; valid structures.
    unsafe { instance.get_physical_device_external_semaphore_properties(phd, &info, &mut props) };
    props.external_semaphore_features.contains(
        vk::ExternalSemaphoreFeatureFlags::EXPORTABLE
            | vk::ExternalSemaphoreFeatureFlags::IMPORTABLE,
    )
}

/// Whether an optimal-tiling 2D image of `format` and `usage` can be exported as an `OPAQUE_FD`,
/// and the largest extent the driver allows for it.
///
/// # Safety
/// As [`supports_timeline`].
pub(super) unsafe fn image_export(
    instance: &ash::Instance,
    phd: vk::PhysicalDevice,
    format: vk::Format,
    usage: vk::ImageUsageFlags,
) -> Option<vk::Extent3D> {
    let mut external = vk::PhysicalDeviceExternalImageFormatInfo::default()
        .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
    let info = vk::PhysicalDeviceImageFormatInfo2::default()
        .format(format)
        .ty(vk::ImageType::TYPE_2D)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(usage)
        .push_next(&mut external);
    let mut external_props = vk::ExternalImageFormatProperties::default();
    let mut props = vk::ImageFormatProperties2::default().push_next(&mut external_props);
    // SAFETY: (1) of `physical_info`, a 1.1 entry point; valid chains.
    let ok =
        unsafe { instance.get_physical_device_image_format_properties2(phd, &info, &mut props) }
            .is_ok();
    let max = props.image_format_properties.max_extent;
    let exportable = external_props
        .external_memory_properties
        .external_memory_features
        .contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE);
    (ok && exportable).then_some(max)
}

/// wgpu-hal's `ash::Device` (its handle and function table), which has no `Debug` of its own.
#[derive(Clone)]
pub(super) struct DeviceFns(pub ash::Device);

impl std::fmt::Debug for DeviceFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "VkDevice({:?})",
            ash::vk::Handle::as_raw(self.0.handle())
        )
    }
}

impl std::ops::Deref for DeviceFns {
    type Target = ash::Device;
    fn deref(&self) -> &ash::Device {
        &self.0
    }
}

/// The extensions that a device must have enabled for the hand-off.
pub(super) const DEVICE_EXTENSIONS: [&CStr; 2] = [
    ash::khr::external_memory_fd::NAME,
    ash::khr::external_semaphore_fd::NAME,
];

/// `vk::Result` as a [`WgpuError::Vulkan`] naming `call`.
pub(super) fn vk_error(call: &'static str, help: &'static str) -> impl Fn(vk::Result) -> WgpuError {
    move |result| WgpuError::Vulkan {
        call,
        result: format!("{result:?} ({})", result.as_raw()),
        help,
    }
}

/// The descriptor that an `OPAQUE_FD` export (`call`: `vkGetMemoryFdKHR` or
/// `vkGetSemaphoreFdKHR`) returned, owned by the caller.
///
/// # Safety
/// 1. `exported` is what that export call just returned.
pub(super) unsafe fn exported_fd(
    call: &'static str,
    exported: Result<i32, vk::Result>,
) -> Result<OwnedFd, WgpuError> {
    let fd = exported.map_err(vk_error(
        call,
        "the process may be out of file descriptors (ulimit -n)",
    ))?;
    // SAFETY: (1); each export returns a new descriptor that the caller owns ("each call creates
    // a new reference ... ownership of the file descriptor is transferred to the application",
    // Vulkan spec).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn uuids_print_in_their_usual_form() {
        let uuid = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
            0xcd, 0xef,
        ];
        assert_eq!(uuid_string(&uuid), "12345678-9abc-def0-0123-456789abcdef");
    }

    #[test]
    fn an_instance_older_than_1_1_is_refused_before_any_call() {
        let e = require_instance_1_1("vkGetPhysicalDeviceProperties2", vk::API_VERSION_1_0)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("Vulkan 1.1 instance (the instance is 1.0.0)"),
            "{e}"
        );
        assert!(require_instance_1_1("x", vk::API_VERSION_1_3).is_ok());
    }

    #[test]
    fn vulkan_errors_name_the_call_and_the_code() {
        let e = vk_error("vkAllocateMemory", "free some memory")(
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        );
        let text = e.to_string();
        assert!(
            text.starts_with("vkAllocateMemory failed: ERROR_OUT_OF_DEVICE_MEMORY (-2)"),
            "{text}"
        );
        assert!(text.ends_with("help: free some memory"), "{text}");
    }
}
