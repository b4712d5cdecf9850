//! The device queries of the result layer: count, handles, names, attributes and the GL devices.

use super::*;

/// `cuDeviceGetCount`.
pub(crate) fn count() -> Result<i32> {
    init()?;
    let mut n = 0;
    // SAFETY: `n` is a valid out-pointer; the driver is initialised.
    unsafe { drv!(cuDeviceGetCount(&mut n)) }.map(|()| n)
}

/// `cuDeviceGet`.
pub(crate) fn get(ordinal: i32) -> Result<sys::CUdevice> {
    init()?;
    let mut dev = 0;
    // SAFETY: `dev` is a valid out-pointer; the driver is initialised.
    unsafe { drv!(cuDeviceGet(&mut dev, ordinal)) }.map(|()| dev)
}

/// `cuDeviceGetName`.
pub(crate) fn name(dev: sys::CUdevice) -> Result<String> {
    let mut buf = [0 as c_char; 256];
    // SAFETY: the buffer is 256 bytes long and the driver writes at most `len` bytes.
    unsafe { drv!(cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, dev)) }?;
    // SAFETY: the driver NUL-terminates the name within the buffer.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// `cuDeviceGetPCIBusId`.
pub(crate) fn pci_bus_id(dev: sys::CUdevice) -> Result<String> {
    let mut buf = [0 as c_char; 64];
    // SAFETY: the buffer is 64 bytes long and the driver writes at most `len` bytes.
    unsafe {
        drv!(cuDeviceGetPCIBusId(
            buf.as_mut_ptr(),
            buf.len() as c_int,
            dev
        ))
    }?;
    // SAFETY: the driver NUL-terminates the id within the buffer.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// `cuDeviceGetAttribute`.
pub(crate) fn attribute(dev: sys::CUdevice, attr: sys::CUdevice_attribute) -> Result<i32> {
    let mut v = 0;
    // SAFETY: `v` is a valid out-pointer.
    unsafe { drv!(cuDeviceGetAttribute(&mut v, attr, dev)) }.map(|()| v)
}

/// `cuDeviceTotalMem`.
pub(crate) fn total_mem(dev: sys::CUdevice) -> Result<usize> {
    let mut v = 0;
    // SAFETY: `v` is a valid out-pointer.
    unsafe { drv!(cuDeviceTotalMem_v2(&mut v, dev)) }.map(|()| v)
}

/// `cuDeviceGetUuid`: the device's 16-byte UUID.
pub(crate) fn uuid(dev: sys::CUdevice) -> Result<[u8; 16]> {
    let mut uuid = sys::CUuuid::default();
    // SAFETY: `uuid` is a valid out-pointer; the device handle came from the driver.
    unsafe { drv!(cuDeviceGetUuid_v2(&mut uuid, dev)) }?;
    Ok(uuid.bytes.map(|b| b as u8))
}

/// `cuGLGetDevices`: the CUDA devices behind the GL context current on this thread.
pub(crate) fn gl_devices(list: sys::CUGLDeviceList) -> Result<Vec<sys::CUdevice>> {
    init()?;
    let mut devices = [0 as sys::CUdevice; 16];
    let mut n: c_uint = 0;
    // SAFETY: `devices` holds 16 entries and the driver writes at most `cudaDeviceCount`
    // (16) of them; `n` is a valid out-pointer.
    unsafe {
        drv!(cuGLGetDevices_v2(
            &mut n,
            devices.as_mut_ptr(),
            devices.len() as c_uint,
            list
        ))
    }?;
    Ok(devices[..(n as usize).min(devices.len())].to_vec())
}
