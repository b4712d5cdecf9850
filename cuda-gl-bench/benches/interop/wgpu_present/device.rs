//! The wgpu present group's wgpu device (feature `wgpu`): the device a group of rows runs on, its
//! queue, the uncaptured-error slot, and the one wgpu use every row of the group ends with.

use super::wgpu_texture::texture_2d;
use crate::gpu::Gpu;
use crate::report::one_line;
use anyhow::{Context as _, Result, anyhow, bail};
use cuda_gl::wgpu_interop::{SharedFormat, SharedTexture, find_adapter, open_device};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The longest wait for one wgpu submit.
pub(super) const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// A wgpu device (on the CUDA GPU for the group's own rows; another adapter's for the staged
/// rows of `other_gpu.rs`), its queue, and the first error wgpu reported outside an error scope
/// (wgpu's default handler would panic; this one keeps the message for [`check`]). Fields drop
/// in order: the device before the instance.
///
/// [`check`]: Wgpu::check
pub struct Wgpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    uncaptured: Arc<Mutex<Option<String>>>,
    /// The adapter, for the report: `name (driver driver_info)`.
    adapter: String,
    _instance: wgpu::Instance,
}

/// The value of `future` if it has one on its first poll, as native wgpu's futures do.
pub(super) fn ready<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(value) => Some(value),
        std::task::Poll::Pending => None,
    }
}

/// An adapter for the report: `name (driver driver_info)`.
pub(super) fn describe(adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    let driver = format!("{} {}", info.driver, info.driver_info);
    format!("{} ({})", info.name, driver.trim())
}

impl Wgpu {
    /// The wgpu device that `open_device` opens on the adapter that `find_adapter` finds on the
    /// GPU of `gpu`'s CUDA context, on wgpu's Vulkan backend; `Ok(Err(why))` when this machine
    /// has none that can take the hand-off (no Vulkan adapter is the CUDA GPU, or it lacks an
    /// extension or exportable semaphores).
    pub fn open(gpu: &Gpu) -> Result<std::result::Result<Wgpu, String>> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = find_adapter(&instance, &gpu.ctx);
        let open = |adapter: &wgpu::Adapter| open_device(adapter, &gpu.ctx, &Default::default());
        Wgpu::opened(
            instance,
            adapter,
            open,
            "cuda_gl::wgpu_interop::find_adapter, open_device",
        )
    }

    /// The device that `open` opens on `adapter`, held by `instance` (`call` names the opening
    /// in errors), or why this machine has none.
    pub(super) fn opened(
        instance: wgpu::Instance,
        adapter: cuda_gl::Result<wgpu::Adapter>,
        open: impl FnOnce(&wgpu::Adapter) -> cuda_gl::Result<(wgpu::Device, wgpu::Queue)>,
        call: &'static str,
    ) -> Result<std::result::Result<Wgpu, String>> {
        let opened = adapter.and_then(|adapter| open(&adapter).map(|(d, q)| (adapter, d, q)));
        let (adapter, device, queue) = match opened {
            Ok(opened) => opened,
            Err(e) if e.is_unsupported_setup() => return Ok(Err(one_line(&e))),
            Err(e) => return Err(e).context(call),
        };
        Ok(Ok(Wgpu::from_parts(instance, &adapter, device, queue)))
    }

    /// `device` and `queue`, opened on `adapter` of `instance`, with the handler that keeps
    /// wgpu's first uncaptured error.
    pub(super) fn from_parts(
        instance: wgpu::Instance,
        adapter: &wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> Wgpu {
        let uncaptured = Arc::new(Mutex::new(None));
        let slot = uncaptured.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            slot.get_or_insert_with(|| one_line(&e));
        }));
        Wgpu {
            device,
            queue,
            uncaptured,
            adapter: describe(adapter),
            _instance: instance,
        }
    }

    /// The wgpu device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// Its queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter, for the report: `name (driver driver_info)`.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// Fails with the first error wgpu reported outside a scope, if any.
    pub fn check(&self, what: &str) -> Result<()> {
        let slot = self
            .uncaptured
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match slot.as_ref() {
            Some(e) => Err(anyhow!("wgpu reported an error ({what}): {e}")),
            None => Ok(()),
        }
    }

    /// An RGBA8 `SharedTexture` of `size` on this device, in `gpu`'s CUDA context.
    pub(super) fn shared_texture(&self, gpu: &Gpu, size: (u32, u32)) -> Result<SharedTexture> {
        let (width, height) = size;
        SharedTexture::new(
            &gpu.ctx,
            self.device(),
            self.queue(),
            size,
            SharedFormat::Rgba8Unorm,
        )
        .with_context(|| format!("SharedTexture::new({width}x{height}, Rgba8Unorm)"))
    }

    /// A `size` RGBA8 texture that copies may read and write.
    pub(super) fn texture(&self, size: (u32, u32), label: &str) -> wgpu::Texture {
        self.texture_of(size, wgpu::TextureFormat::Rgba8Unorm, label)
    }

    /// A `size` texture of `format` that copies may read and write.
    pub fn texture_of(
        &self,
        size: (u32, u32),
        format: wgpu::TextureFormat,
        label: &str,
    ) -> wgpu::Texture {
        let copies = wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST;
        self.texture_for(size, format, copies, label)
    }

    /// A `size` texture of `format` with `usage`.
    pub(super) fn texture_for(
        &self,
        size: (u32, u32),
        format: wgpu::TextureFormat,
        usage: wgpu::TextureUsages,
        label: &str,
    ) -> wgpu::Texture {
        texture_2d(&self.device, size, format, usage, label)
    }

    /// A GPU copy of all of `source` into `dest`, submitted, then the use of `dest`.
    pub(super) fn copy_and_use(
        &self,
        source: &wgpu::Texture,
        dest: &wgpu::Texture,
        sink: &wgpu::Texture,
    ) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_texture(source.as_image_copy(), dest.as_image_copy(), dest.size());
        self.queue.submit([encoder.finish()]);
        self.use_texel(dest, sink)
    }

    /// The staged rows' raw upload: `Queue::write_texture` of all of `texture` (RGBA8) from
    /// `bytes` (host memory, rows packed), then the use of `texture`, whose submit carries the
    /// write.
    pub(super) fn write_and_use(
        &self,
        texture: &wgpu::Texture,
        bytes: &[u8],
        sink: &wgpu::Texture,
    ) -> Result<()> {
        self.queue.write_texture(
            texture.as_image_copy(),
            bytes,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(texture.width() * 4),
                rows_per_image: None,
            },
            texture.size(),
        );
        self.use_texel(texture, sink)
    }

    /// Waits for `submitted`, at most [`WAIT_LIMIT`], then checks for wgpu's errors. Asks
    /// again while time is left: wgpu-hal 30's GL backend ends one wait after at most
    /// `i32::MAX` ns (about 2.1 s) whatever timeout it is given.
    pub(super) fn wait(&self, submitted: wgpu::SubmissionIndex) -> Result<()> {
        let deadline = std::time::Instant::now() + WAIT_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let polled = self.device.poll(wgpu::PollType::Wait {
                submission_index: Some(submitted.clone()),
                timeout: Some(left),
            });
            match polled {
                Ok(_) => return self.check("a row's submit"),
                Err(wgpu::PollError::Timeout) if !left.is_zero() => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(e) => bail!("waiting for a wgpu submit (at most {WAIT_LIMIT:?}): {e}"),
            }
        }
    }

    /// Every row's wgpu use: one texel of `source` copied into `sink` (1x1), submitted, and
    /// waited for. The submit also carries what wgpu queued before it (a present's blit, a
    /// `write_texture`), in queue order.
    pub fn use_texel(&self, source: &wgpu::Texture, sink: &wgpu::Texture) -> Result<()> {
        self.use_texels(&[(source, sink)])
    }

    /// [`use_texel`](Self::use_texel) of each `(source, sink)` pair (sinks of the sources'
    /// formats), in one submit.
    pub fn use_texels(&self, pairs: &[(&wgpu::Texture, &wgpu::Texture)]) -> Result<()> {
        self.wait(self.submit_texels(pairs))
    }

    /// [`use_texels`](Self::use_texels) but the wait: the submit, whose index it returns.
    pub(super) fn submit_texels(
        &self,
        pairs: &[(&wgpu::Texture, &wgpu::Texture)],
    ) -> wgpu::SubmissionIndex {
        self.queue.submit([self.record_texels(pairs)])
    }

    /// [`submit_texels`](Self::submit_texels)' commands, recorded and not submitted.
    pub(super) fn record_texels(
        &self,
        pairs: &[(&wgpu::Texture, &wgpu::Texture)],
    ) -> wgpu::CommandBuffer {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("wgpu present: the use"),
            });
        for (source, sink) in pairs {
            encoder.copy_texture_to_texture(
                source.as_image_copy(),
                sink.as_image_copy(),
                wgpu::Extent3d {
                    width: 1,
                    height: 1,
                    depth_or_array_layers: 1,
                },
            );
        }
        encoder.finish()
    }
}
