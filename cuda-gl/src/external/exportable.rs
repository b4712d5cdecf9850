//! The CUDA side of external memory: [`ExportableMemory`], allocated with the virtual memory
//! management API and exported as POSIX file descriptors.

use crate::context::Context;
use crate::device::Device;
use crate::error::{Error, Result, UsageError};
use crate::fresh::fill_fresh;
use crate::memory::DevicePtr;
use crate::result;
use crate::wait::{InDrop, legacy_stream_within, wait_limit};
use cuda_gl_sys as sys;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Device memory from `cuMemCreate`, exportable as a POSIX file descriptor, mapped into this
/// context's address space with read/write access.
///
/// The size is rounded up to the allocation granularity (2 MiB on current GPUs); the memory is
/// zeroed when created. Dropping it waits for the context's work (as `cuMemFree` does; that
/// includes the put-back of an import check that gave up, see [`device_ptr`](Self::device_ptr)),
/// then unmaps it, frees the address range and releases the handle; the physical memory lives on
/// while a GL import of it does (see the [module docs](super#release-order)). That wait gives up
/// after the [wait limit](crate::wait_limit) (10 s by default; a kernel that does not end): the
/// memory is then leaked, not unmapped under work that may still use it, and the timeout is
/// recorded for [`Context::check_drop_errors`](crate::Context::check_drop_errors).
#[derive(Debug)]
pub struct ExportableMemory {
    ctx: Arc<Context>,
    handle: sys::CUmemGenericAllocationHandle,
    ptr: sys::CUdeviceptr,
    size: usize,
    requested: usize,
    reserved: bool,
    mapped: bool,
    /// Given up on ([`ExportableMemory::leak`]): the drop releases nothing.
    leaked: bool,
    /// How many import checks gave up while their writes of the first bytes (the marker, then
    /// the put-back) may still have been queued on the legacy default stream, and how many of
    /// those a wait has since seen done (the legacy stream idle after them). While they differ,
    /// a put-back may still be queued: [`device_ptr`](Self::device_ptr) and the next import
    /// wait for it first, so that it cannot overwrite a later write (see
    /// [`wait_for_checks`](Self::wait_for_checks)).
    checks_left: AtomicU64,
    checks_seen_done: AtomicU64,
}

impl ExportableMemory {
    /// Allocates at least `bytes` bytes on the context's device.
    ///
    /// # Errors
    /// [`UsageError::ZeroSize`] for zero bytes; [`Error::ExternalMemoryUnsupported`] for a device
    /// without virtual memory management or POSIX file descriptor handles; [`UsageError::TooLarge`]
    /// for a size that overflows when rounded up to the allocation granularity; otherwise the
    /// driver's error from `cuMemGetAllocationGranularity`, `cuMemCreate`, `cuMemAddressReserve`,
    /// `cuMemMap`, `cuMemSetAccess`, `cuStreamCreate`, `cuMemsetD8Async` or `cuStreamQuery`;
    /// [`Error::Timeout`] when the zeroing (on a non-blocking stream of its own, which waits for no
    /// work of yours) has not finished within the wait limit (only a GPU kept full by other work
    /// delays it that long): the allocation is then leaked, not released under the memset, as after
    /// an error of `cuStreamQuery`.
    #[doc(alias = "cuMemCreate")]
    #[doc(alias = "cuMemMap")]
    pub fn new(ctx: &Arc<Context>, bytes: usize) -> Result<ExportableMemory> {
        if bytes == 0 {
            return Err(UsageError::ZeroSize {
                what: "exportable memory",
            }
            .into());
        }
        ctx.bind()?;
        let device = ctx.device();
        for (attribute, what) in [
            (
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                "virtual memory management (cuMemCreate)",
            ),
            (
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                "POSIX file descriptor memory handles",
            ),
        ] {
            if result::device::attribute(device.raw(), attribute)? == 0 {
                return Err(Error::ExternalMemoryUnsupported {
                    device: Box::new(device.label()),
                    feature: what,
                });
            }
        }
        let prop = allocation_prop(device);
        let granularity = result::vmm::granularity(&prop)?;
        let size = bytes.checked_next_multiple_of(granularity.max(1)).ok_or(
            UsageError::TooLarge {
                what: "the size of the exportable memory in bytes, rounded up to the allocation \
                       granularity",
                value: (bytes as u128).next_multiple_of(granularity.max(1) as u128),
                max: usize::MAX as u128,
            },
        )?;
        // `size` is a multiple of the granularity of `prop`, which describes pinned device
        // memory on the context's device.
        let handle = result::vmm::create(size, &prop)?;
        // Owned from here on: an error below releases what was done so far (in Drop).
        let mut memory = ExportableMemory {
            ctx: ctx.clone(),
            handle,
            ptr: 0,
            size,
            requested: bytes,
            reserved: false,
            mapped: false,
            leaked: false,
            checks_left: AtomicU64::new(0),
            checks_seen_done: AtomicU64::new(0),
        };
        let ptr = result::vmm::address_reserve(size)?;
        memory.ptr = ptr;
        memory.reserved = true;
        // SAFETY: (1) the range [ptr, ptr + size) was just reserved and is not mapped; (2) the
        // handle was just created, `size` long.
        unsafe { result::vmm::map(ptr, size, handle) }?;
        memory.mapped = true;
        let access = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: (1) the range is mapped (above).
        unsafe { result::vmm::set_access(ptr, size, &access) }?;
        // Zeroed on a stream of its own: the memory is known to no other work yet, so a kernel
        // elsewhere (on a blocking stream too) does not hold the zeroing up.
        let filled = fill_fresh(ctx, "the zeroing of new exportable memory", |s| {
            // SAFETY: (1) the range is mapped and accessible, in the bound context, and stays
            // so until the memset has run (leaked otherwise, below); `s` is a live stream of it.
            Ok(unsafe { result::mem::memset_d8_async(ptr, 0, size, s) }?)
        });
        if let Err(e) = filled {
            // The memset may still run: the allocation is not released under it.
            return Err(e.leaking(|| memory.leak()));
        }
        Ok(memory)
    }

    /// The size in bytes that was asked for.
    pub fn requested_size(&self) -> usize {
        self.requested
    }

    /// The size of the allocation in bytes: [`requested_size`](Self::requested_size) rounded
    /// up to the allocation granularity. This is the size a GL import names.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device address, for kernel arguments.
    ///
    /// When a [`GlMemoryBuffer::import`](super::GlMemoryBuffer::import) of this memory gave up
    /// with [`Error::Timeout`] while its check's writes of the first 16 bytes were still queued
    /// (the put-back of the old bytes, on the legacy default stream, behind other work), it first
    /// waits for them, at most the [wait limit](crate::wait_limit): a write queued with the
    /// returned address on any stream then comes after the put-back, which cannot overwrite it.
    /// Otherwise it returns at once.
    ///
    /// # Errors
    /// [`Error::Timeout`] when such a put-back is still queued after the wait limit (ask again
    /// later: the address is not handed out before it has run); the driver's error from
    /// `cuStreamQuery`, such as an earlier kernel's fault.
    pub fn device_ptr(&self) -> Result<DevicePtr<'_>> {
        self.wait_for_checks("ExportableMemory::device_ptr")?;
        Ok(self.device_ptr_unchecked())
    }

    /// The device address, with no wait for an import check's writes: for this module's slots,
    /// whose memory is only ever handed out once its import has succeeded.
    pub(super) fn device_ptr_unchecked(&self) -> DevicePtr<'_> {
        DevicePtr::new(self.ptr)
    }

    /// Records that an import check gave up while its writes of the first bytes may still be
    /// queued on the legacy default stream (called after they were queued).
    pub(super) fn check_left_queued(&self) {
        self.checks_left.fetch_add(1, Ordering::AcqRel);
    }

    /// Waits, at most the wait limit, for the writes that import checks which gave up left
    /// queued on the legacy default stream (returns at once when there are none): the legacy
    /// stream seen idle after them. `call` names the waiting call in a timeout. The count is read
    /// before the wait, so a check that gives up meanwhile stays counted for the next wait.
    pub(super) fn wait_for_checks(&self, call: &str) -> Result<()> {
        let left = self.checks_left.load(Ordering::Acquire);
        if self.checks_seen_done.load(Ordering::Acquire) >= left {
            return Ok(());
        }
        self.ctx.bind()?;
        legacy_stream_within(
            wait_limit(),
            &format!(
                "{call}: the put-back of the memory's first 16 bytes, left queued on the legacy \
                 default stream by an import check that gave up"
            ),
        )?;
        self.checks_seen_done.fetch_max(left, Ordering::AcqRel);
        Ok(())
    }

    /// The device address as the driver's handle, for this module's checks.
    pub(super) fn raw_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// The context the memory belongs to.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Gives the allocation up: nothing is unmapped, freed or released, for work that may still
    /// use it (a wait for it failed); the caller has logged or recorded why.
    pub(super) fn leak(mut self) {
        self.leaked = true;
    }

    /// Exports a new file descriptor for the allocation (`CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`).
    ///
    /// Each call returns a new descriptor. An importer that takes ownership (GL does) needs its
    /// own; a descriptor that is dropped unused is closed.
    ///
    /// # Errors
    /// The driver's error from `cuMemExportToShareableHandle`.
    #[doc(alias = "cuMemExportToShareableHandle")]
    pub fn export_fd(&self) -> Result<OwnedFd> {
        self.ctx.bind()?;
        // SAFETY: (1) the handle is live (released only in Drop) and was created with POSIX
        // file descriptor handles requested (`allocation_prop`).
        let fd = unsafe { result::vmm::export_fd(self.handle) }?;
        if fd < 0 {
            return Err(Error::Internal {
                what: format!(
                    "cuMemExportToShareableHandle succeeded but returned descriptor {fd}"
                ),
            });
        }
        // SAFETY: the driver created `fd` for the caller, who owns it from now on.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// Pinned device memory on `device`, exportable as a POSIX file descriptor.
fn allocation_prop(device: &Device) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes:
            sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: device.raw(),
        },
        ..Default::default()
    }
}

impl Drop for ExportableMemory {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        if self.leaked || !self.ctx.bind_for_drop("release exportable memory") {
            // Given up on (leaked), or the context was reset or is unusable (its allocations
            // are gone with it).
            return;
        }
        if self.mapped {
            // Waits for every kernel that may still use the range, at most the wait limit. When
            // that wait fails (a kernel that does not end, or a capture in the context that forbids
            // it), the memory is leaked rather than unmapped under work that may still use it.
            if let Err(e) = self.ctx.synchronize_within(wait_limit()) {
                self.ctx.record_drop_wait(
                    "waiting for the context's work before releasing exportable memory (leaked \
                     instead)",
                    "cuCtxSynchronize",
                    e,
                );
                return;
            }
            // SAFETY: (1) the whole mapped range, unmapped once; (2) nothing uses it after
            // this (the context was synchronized above).
            if let Err(e) = unsafe { result::vmm::unmap(self.ptr, self.size) } {
                self.ctx.record_drop_error("cuMemUnmap", e);
            }
        }
        if self.reserved {
            // SAFETY: (1) the whole reserved range, now unmapped, freed once.
            if let Err(e) = unsafe { result::vmm::address_free(self.ptr, self.size) } {
                self.ctx.record_drop_error("cuMemAddressFree", e);
            }
        }
        // SAFETY: (1) the handle came from cuMemCreate and is released once.
        if let Err(e) = unsafe { result::vmm::release(self.handle) } {
            self.ctx.record_drop_error("cuMemRelease", e);
        }
    }
}
