//! The plain-call route (feature `wgpu`): the hand-off `SharedTexture` makes, made of nothing
//! but ash and CUDA driver calls on the same wgpu device, with the same kernel and the same
//! one-texel use. The same route with its Vulkan half submitted through wgpu
//! (`plain_wgpu.rs`, [`Via::Wgpu`]) is the floor cuda-gl's route is held to (issue 43: at most
//! 1.05x); this file's own submit ([`Via::Vulkan`]) is that floor without wgpu's cost.
//!
//! Set-up (`plain_vk.rs`), on `open_device`'s device, whose raw `ash::Device`, queue family and
//! `VkQueue` `wgpu::Device::as_hal` hands out: an optimal RGBA8 image with the usage of
//! `SharedTexture`'s, on a dedicated allocation exportable as an `OPAQUE_FD`; an exportable
//! timeline semaphore; a 1x1 sink image; a command pool and buffer. CUDA imports the memory
//! (`cuImportExternalMemory`, `cuExternalMemoryGetMappedMipmappedArray`, level 0,
//! `cuSurfObjectCreate`) and the semaphore (`cuImportExternalSemaphore`) with plain driver
//! calls. One submit moves the image from `UNDEFINED` to `GENERAL`, and the sink to
//! `TRANSFER_DST_OPTIMAL`.
//!
//! Each frame, values growing by one per signal (Vulkan's last signal is `v`):
//! 1. CUDA, on the bench stream: `cuWaitExternalSemaphoresAsync` for `v` (Vulkan's last use
//!    of the image), the plasma kernel through the surface, `cuSignalExternalSemaphoresAsync`
//!    of `v + 1`;
//! 2. Vulkan: the command buffer recorded anew (as an application records its frame): the
//!    acquire from `VK_QUEUE_FAMILY_EXTERNAL`, `vkCmdCopyImage` of one texel into the sink;
//!    `vkQueueSubmit` on wgpu's queue waiting for `v + 1` at the transfer stage and signalling
//!    `v + 2`; then `vkWaitSemaphores` for `v + 2` (at most 10 s) as the other rows' wait.
//!
//! **What the Vulkan spec asks, and so what is recorded** ("External Resource Sharing" and
//! "Queue Family Ownership Transfer"):
//! - *The acquire is needed.* Contents made by one API are defined in another only through a
//!   release by the source, completed (here: CUDA's semaphore signal, the release CUDA makes),
//!   and an acquire in the destination; an image whose ownership is taken without an acquire
//!   has undefined contents, whatever its sharing mode. Vulkan reads what CUDA wrote: it
//!   acquires from `VK_QUEUE_FAMILY_EXTERNAL`.
//! - *Vulkan's release is not needed.* An API may take ownership without a transfer, its view
//!   of the contents then undefined, and the spec says an ownership transfer the destination
//!   does not need the contents of should be skipped. The plasma kernel writes every texel and
//!   reads none, so CUDA needs none of Vulkan's contents. The row `plain + release` adds the
//!   release (after the copy, to `VK_QUEUE_FAMILY_EXTERNAL`), to show what that costs.
//! - *No layout transition per frame.* CUDA has no notion of layouts, and `GENERAL` allows
//!   every access of both sides (`vkCmdCopyImage` reads a `GENERAL` source): the image stays in
//!   it from the set-up on, as in the probe that motivated the issue. Both transfers say
//!   `GENERAL` to `GENERAL`.
//! - *Memory dependencies* are the semaphore's: a signal covers every earlier command and a
//!   wait every later one (the acquire's first scope is the wait's stage), so Vulkan's read of
//!   frame n comes before CUDA's write of frame n + 1, and the sink's copies follow each other.
//!
//! **The queue is wgpu's.** Vulkan asks that host access to a queue be externally
//! synchronized. wgpu-hal calls `vkQueueSubmit` only inside wgpu's own calls, and wgpu runs no
//! thread of its own; the group makes every wgpu call and every call of this route on its one
//! thread, one after another, so no two submits overlap. wgpu's semaphore lists for its next
//! submit are left as they are (the raw submit adds nothing there; the route through wgpu adds
//! its wait and signal, and its own submit, the next, takes them), and its submits wait for
//! each other through its relay semaphores, which the raw submit neither waits for nor signals
//! (it shares no resource with them: the image, sink and semaphore are its own).

use super::plain_vk::{Raw, VkObjects, WAIT_LIMIT};
use crate::gpu::{Gpu, RawOut, cu};
use crate::wgpu_present::Wgpu;
use anyhow::{Context as _, Result, ensure};
use cuda_gl::{Context, sys};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd as _, IntoRawFd as _, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The route's frames through wgpu (`Via::Wgpu`).
#[path = "plain_wgpu.rs"]
mod plain_wgpu;

/// The route in its teardown's messages.
const ROUTE: &str = "the plain route";

/// How a frame's Vulkan half reaches wgpu's queue.
#[derive(Clone, Copy)]
pub enum Via<'a> {
    /// The route's own command buffer, one raw `vkQueueSubmit`, then `vkWaitSemaphores`; with
    /// `release`, Vulkan's release of the image too.
    Vulkan { release: bool },
    /// The same commands through `w`'s wgpu: see `plain_wgpu.rs`.
    Wgpu(&'a Wgpu),
}

/// CUDA's imports of the route's image and semaphore, destroyed on drop (surface object, then
/// the mipmapped array, then the memory: the order the driver asks), with the context current.
///
/// Invariant: dropped only once no CUDA work uses them, and before the Vulkan objects they were
/// imported from.
struct CudaImport {
    memory: sys::CUexternalMemory,
    mipmapped: sys::CUmipmappedArray,
    surface: sys::CUsurfObject,
    semaphore: sys::CUexternalSemaphore,
}

/// Runs `import` (a `cuImportExternal*` call) on `fd`'s descriptor: on success the driver owns
/// it (released here), on failure it is closed (`fd` drops).
fn import_fd(call: &str, fd: OwnedFd, import: impl FnOnce(i32) -> sys::CUresult) -> Result<()> {
    cu(call, import(fd.as_raw_fd()))?;
    let _ = fd.into_raw_fd();
    Ok(())
}

/// Imports `fd`, the `OPAQUE_FD` export of a dedicated Vulkan allocation of `bytes` bytes, into
/// the current CUDA context (`cuImportExternalMemory`); the descriptor as [`import_fd`] says.
///
/// # Safety
/// 1. `fd` is such an export, of memory on the current context's GPU that outlives the import.
pub(super) unsafe fn import_dedicated(
    driver: &sys::Driver,
    fd: OwnedFd,
    bytes: u64,
) -> Result<sys::CUexternalMemory> {
    let mut memory = std::ptr::null_mut();
    let mut desc = sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
        type_: sys::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
        size: bytes,
        flags: sys::CUDA_EXTERNAL_MEMORY_DEDICATED,
        ..Default::default()
    };
    import_fd("cuImportExternalMemory", fd, |fd| {
        desc.handle.fd = fd;
        // SAFETY: (1): a dedicated allocation of `bytes`; `desc` is complete, the out-pointer
        // valid.
        unsafe { driver.cuImportExternalMemory(&mut memory, &desc) }
    })?;
    Ok(memory)
}

/// Prints the error of a failed CUDA call in `route`'s teardown ("the plain route", "gyroflow's
/// way"): a drop cannot return it, and the benchmark goes on.
pub(super) fn teardown_report(route: &str, call: &str, rc: sys::CUresult) {
    if let Err(e) = cu(call, rc) {
        eprintln!("interop: wgpu present: {route}'s teardown: {e:#}");
    }
}

/// Destroys `memory`, an import of [`import_dedicated`], in `route`'s teardown (an error
/// reported by [`teardown_report`]); a null handle, of a set-up that failed before the import,
/// is skipped. The counterpart of [`import_dedicated`] for both routes that import so.
///
/// # Safety
/// 1. `memory` is null, or an import in the current context that no CUDA work uses any more,
///    every array and buffer mapped from it destroyed, and that is not used again.
pub(super) unsafe fn destroy_dedicated(
    driver: &sys::Driver,
    memory: sys::CUexternalMemory,
    route: &str,
) {
    if !memory.is_null() {
        // SAFETY: (1).
        let rc = unsafe { driver.cuDestroyExternalMemory(memory) };
        teardown_report(route, "cuDestroyExternalMemory", rc);
    }
}

impl CudaImport {
    /// Imports the image's memory (`memory_fd`, a dedicated allocation of `bytes` bytes holding
    /// a `size` RGBA8 image) as a one-level mipmapped array with a surface object over level 0,
    /// and the timeline semaphore (`semaphore_fd`).
    ///
    /// # Safety
    /// 1. The descriptors are the exports of [`VkObjects`]' image memory and semaphore, which
    ///    outlive the value; the route's context is current.
    unsafe fn new(
        driver: &sys::Driver,
        (memory_fd, bytes): (OwnedFd, u64),
        semaphore_fd: OwnedFd,
        (width, height): (u32, u32),
    ) -> Result<CudaImport> {
        let mut this = CudaImport {
            memory: std::ptr::null_mut(),
            mipmapped: std::ptr::null_mut(),
            surface: 0,
            semaphore: std::ptr::null_mut(),
        };
        // SAFETY: (1): the export of the image's dedicated allocation of `bytes` bytes.
        this.memory = unsafe { import_dedicated(driver, memory_fd, bytes) }?;
        let array = sys::CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC {
            offset: 0,
            arrayDesc: sys::CUDA_ARRAY3D_DESCRIPTOR {
                Width: width as usize,
                Height: height as usize,
                Depth: 0,
                Format: sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
                NumChannels: 4,
                Flags: sys::CUDA_ARRAY3D_SURFACE_LDST,
            },
            numLevels: 1,
            ..Default::default()
        };
        // SAFETY: the memory holds exactly this image, one level (1); valid pointers.
        cu("cuExternalMemoryGetMappedMipmappedArray", unsafe {
            driver.cuExternalMemoryGetMappedMipmappedArray(&mut this.mipmapped, this.memory, &array)
        })?;
        let mut level = std::ptr::null_mut();
        // SAFETY: a live mipmapped array of one level; a valid out-pointer.
        cu("cuMipmappedArrayGetLevel", unsafe {
            driver.cuMipmappedArrayGetLevel(&mut level, this.mipmapped, 0)
        })?;
        let mut resource = sys::CUDA_RESOURCE_DESC {
            resType: sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..Default::default()
        };
        resource.res.array.hArray = level;
        // SAFETY: level 0 lives as long as the mipmapped array, destroyed after the surface;
        // it was mapped with surface load/store.
        cu("cuSurfObjectCreate", unsafe {
            driver.cuSurfObjectCreate(&mut this.surface, &resource)
        })?;
        let mut desc = sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_: sys::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
            ..Default::default()
        };
        import_fd("cuImportExternalSemaphore", semaphore_fd, |fd| {
            desc.handle.fd = fd;
            // SAFETY: (1): a timeline semaphore's export; `desc` complete, out-pointer valid.
            unsafe { driver.cuImportExternalSemaphore(&mut this.semaphore, &desc) }
        })?;
        Ok(this)
    }
}

impl Drop for CudaImport {
    fn drop(&mut self) {
        let Ok(driver) = sys::driver() else { return };
        let report = |call, rc| teardown_report(ROUTE, call, rc);
        // The type's invariant: no work uses them any more. Each handle made by `new` is
        // destroyed once, in the driver's order (the object over the array, the array, the
        // memory); a step that failed left its handle null or 0, and is skipped.
        if self.surface != 0 {
            // SAFETY: see above.
            let rc = unsafe { driver.cuSurfObjectDestroy(self.surface) };
            report("cuSurfObjectDestroy", rc);
        }
        if !self.mipmapped.is_null() {
            // SAFETY: see above; no object over it is left.
            let rc = unsafe { driver.cuMipmappedArrayDestroy(self.mipmapped) };
            report("cuMipmappedArrayDestroy", rc);
        }
        // SAFETY: see above; every array mapped from it is destroyed.
        unsafe { destroy_dedicated(driver, self.memory, ROUTE) };
        if !self.semaphore.is_null() {
            // SAFETY: see above.
            let rc = unsafe { driver.cuDestroyExternalSemaphore(self.semaphore) };
            report("cuDestroyExternalSemaphore", rc);
        }
    }
}

/// The plain-call route of one size. CUDA's imports drop before the Vulkan objects, and both
/// only once the route's work is done (see `Drop`); the wgpu device and queue last.
pub struct PlainRoute {
    cuda: ManuallyDrop<CudaImport>,
    vk: ManuallyDrop<VkObjects>,
    driver: &'static sys::Driver,
    ctx: Arc<Context>,
    /// The bench stream's handle: every CUDA call of the route goes on it. The stream outlives
    /// the route (`Gpu` outlives the group's rigs).
    stream: sys::CUstream,
    size: (u32, u32),
    /// The semaphore's highest value signalled or queued to be, by either side.
    last: u64,
    /// The value of Vulkan's last submitted signal: its last use of the image.
    vk_last: u64,
    /// Whether a submit's wait for `vk_last` has not returned yet (the command buffer may then
    /// still be pending).
    in_flight: bool,
    /// Clones that keep wgpu's device (and the `VkDevice` the route's objects belong to) alive:
    /// dropped after the route's objects, or leaked with them. A leaked route may have a submit
    /// that never ends (its wait for a CUDA signal that a faulted context never makes), and
    /// wgpu's queue, once its last clone drops, waits for every submit with
    /// `vkQueueWaitIdle`, unbounded, then destroys the device under the leaked objects.
    queue: ManuallyDrop<wgpu::Queue>,
    device: ManuallyDrop<wgpu::Device>,
}

impl PlainRoute {
    /// The route at `size` on `device` (open_device's) and `gpu`'s context and stream.
    pub fn new(
        gpu: &Gpu,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
    ) -> Result<PlainRoute> {
        let driver = sys::driver()?;
        gpu.ctx.bind().context("binding the CUDA context")?;
        // SAFETY: the guard is only read (raw handles cloned) and dropped at the end of this
        // function; what the route makes on the device it destroys itself, while the device
        // lives (it holds a clone).
        let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }
            .context("the wgpu device is not on Vulkan")?;
        let instance = hal.shared_instance().raw_instance();
        let raw = Raw {
            instance,
            physical: hal.raw_physical_device(),
            device: hal.raw_device().clone(),
            queue: hal.raw_queue(),
            family: hal.queue_family_index(),
        };
        // SAFETY: (1) open_device's device (checked by the group), its queue and family, kept
        // alive by the clone below; (2) the group's thread makes every call on the queue.
        let vk = unsafe { VkObjects::new(raw, size) }?;
        // SAFETY: the device's instance.
        let memory_fd = unsafe { vk.memory_fd(instance) }?;
        // SAFETY: as above.
        let semaphore_fd = unsafe { vk.semaphore_fd(instance) }?;
        let bytes = vk.bytes;
        // SAFETY: the descriptors are `vk`'s exports; `vk` outlives the import (field order
        // and `Drop`); the context was bound above.
        let cuda = unsafe { CudaImport::new(driver, (memory_fd, bytes), semaphore_fd, size) }?;
        Ok(PlainRoute {
            cuda: ManuallyDrop::new(cuda),
            vk: ManuallyDrop::new(vk),
            driver,
            ctx: gpu.ctx.clone(),
            stream: gpu.stream.raw(),
            size,
            // The set-up's submit signalled 1 and was waited for.
            last: 1,
            vk_last: 1,
            in_flight: false,
            queue: ManuallyDrop::new(queue.clone()),
            device: ManuallyDrop::new(device.clone()),
        })
    }

    /// One frame at time `t`: CUDA waits for Vulkan's last use, the plasma kernel writes the
    /// image through the surface, CUDA signals; Vulkan, by `via`'s submit, waits for that,
    /// acquires the image, copies one texel into the sink (and with `release`, releases the
    /// image), signals, and the CPU waits for that signal.
    pub fn frame(&mut self, gpu: &Gpu, t: f32, via: Via<'_>) -> Result<()> {
        ensure!(
            gpu.stream.raw() == self.stream,
            "the plain route runs on the stream it was made with"
        );
        if self.in_flight {
            // A wait that failed before: the buffer is recorded again only once it is done.
            self.vk.wait(self.vk_last, WAIT_LIMIT)?;
            self.in_flight = false;
        }
        let (driver, semaphore) = (self.driver, self.cuda.semaphore);
        let mut wait = sys::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default();
        wait.params.fence.value = self.vk_last;
        // SAFETY: a live imported semaphore and a live stream of the current context (the
        // group's); `vk_last` was signalled by Vulkan's last submit, done or queued.
        cu("cuWaitExternalSemaphoresAsync", unsafe {
            driver.cuWaitExternalSemaphoresAsync(&semaphore, &wait, 1, self.stream)
        })?;
        // SAFETY: the surface is of the route's RGBA8 image of `size`, CUDA's between the wait
        // above and the signal below; it lives until the route's teardown, which waits for the
        // stream first.
        unsafe { gpu.plasma_into_raw(RawOut::Surface(self.cuda.surface), self.size, t) }?;
        let written = self.last + 1;
        let mut signal = sys::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default();
        signal.params.fence.value = written;
        // SAFETY: as the wait; `written` is above every value signalled or queued.
        cu("cuSignalExternalSemaphoresAsync", unsafe {
            driver.cuSignalExternalSemaphoresAsync(&semaphore, &signal, 1, self.stream)
        })?;
        self.last = written;
        let used = self.last + 1;
        match via {
            Via::Vulkan { release } => {
                // SAFETY: the buffer's last submit was waited for (`in_flight` is false).
                unsafe { self.vk.record_use(release) }?;
                // SAFETY: (1) the group's thread makes every call on the queue, one at a
                // time; (2) `used` is above every value, and CUDA's signal of `written` is
                // queued.
                unsafe { self.vk.submit(Some(written), used) }?;
                (self.last, self.vk_last, self.in_flight) = (used, used, true);
                self.vk.wait(used, WAIT_LIMIT)?;
            }
            Via::Wgpu(w) => {
                let submitted = self.submit_through_wgpu(w, written, used)?;
                (self.last, self.vk_last, self.in_flight) = (used, used, true);
                w.wait(submitted)?;
            }
        }
        self.in_flight = false;
        Ok(())
    }
}

/// Whether `stream` has run out of work within [`WAIT_LIMIT`] (`ctx` bound first, then
/// `cuStreamQuery`, polled; a context that cannot be bound, or a failed query, as after a
/// fault, says no): the CUDA half of each route's check before its teardown.
///
/// # Safety
/// 1. `stream` is a live stream of `ctx`.
pub(super) unsafe fn stream_idle(
    ctx: &Context,
    driver: &sys::Driver,
    stream: sys::CUstream,
) -> bool {
    if ctx.bind().is_err() {
        return false;
    }
    let start = Instant::now();
    loop {
        // SAFETY: (1).
        let rc = unsafe { driver.cuStreamQuery(stream) };
        if rc.is_success() {
            return true;
        }
        if rc != sys::CUresult::CUDA_ERROR_NOT_READY || start.elapsed() > WAIT_LIMIT {
            return false;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
}

impl Drop for PlainRoute {
    fn drop(&mut self) {
        // Nothing may be destroyed under work that uses it: CUDA's (the stream's, polled) and
        // Vulkan's (its last submit's signal, which follows every earlier submit of the route:
        // each waits for CUDA's signal, which waits for the submit before). Past either limit,
        // or with the context unusable, everything is leaked instead, the wgpu device and queue
        // clones too (see the fields): the error that led here then reaches the caller instead
        // of a hang in wgpu's queue drop.
        // SAFETY: the bench stream, live while `Gpu` is (past the route), of the route's
        // context.
        let cuda = unsafe { stream_idle(&self.ctx, self.driver, self.stream) };
        let idle = cuda && self.vk.wait(self.vk_last, WAIT_LIMIT).is_ok();
        if !idle {
            eprintln!(
                "interop: wgpu present: the plain route's work did not end within {WAIT_LIMIT:?}; \
                 its image and semaphore are leaked, and with them the wgpu device"
            );
            return;
        }
        // SAFETY: dropped once each, here, never used after; no work uses them (above). CUDA's
        // imports go before the Vulkan objects they were imported from, and those before the
        // device they belong to.
        unsafe {
            ManuallyDrop::drop(&mut self.cuda);
            ManuallyDrop::drop(&mut self.vk);
            ManuallyDrop::drop(&mut self.queue);
            ManuallyDrop::drop(&mut self.device);
        }
    }
}
