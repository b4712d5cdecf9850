//! [`WgpuPlace`]: where a wgpu target's frames go: the texture the application samples, made
//! for the target's mode (in interop mode, writable by the present's shader blit too), and the
//! blits the target made.

use super::blit::{Blit, BlitKind};
use super::format::SharedFormat;
use super::scope::scoped;
use crate::display::{DisplayError, Format, Layout, Mode};
use crate::error::{Error, Result};
use std::sync::{Mutex, PoisonError};

/// The application's wgpu device and queue, the frames' layout (tightly packed), and the
/// texture the application samples, which every mode puts its frames on.
#[derive(Debug)]
pub(crate) struct WgpuPlace {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) layout: Layout,
    pub(crate) texture: wgpu::Texture,
    /// In interop mode, the kind of shader blit the present writes the texture with (which has
    /// its usage); `None` in staged mode, and for a format no blit writes (the present copies).
    blit: Option<BlitKind>,
    /// The blits made for the target, kept across resizes (a pipeline is made once per format
    /// and kind).
    blits: Blits,
}

/// The blits a target made: taken out while one is looked up or made, and by the next place.
/// Behind a mutex (never contended: only calls on the target, `&mut`, reach it), so that the
/// target is `Sync`.
#[derive(Default)]
struct Blits(Mutex<Vec<Blit>>);

impl Blits {
    /// The blits, taken out (none left behind).
    fn take(&self) -> Vec<Blit> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts `blits` back, in place of what is there.
    fn set(&self, blits: Vec<Blit>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = blits;
    }
}

impl std::fmt::Debug for Blits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `Cell` shows only `Copy` values; what is cached does not matter to a reader.
        f.write_str("Blits")
    }
}

impl WgpuPlace {
    /// The place of frames of `layout` (tightly packed) on `device` and `queue` in `mode`,
    /// with its texture (which wgpu clears).
    ///
    /// # Errors
    /// [`DisplayError::TargetSize`] for a zero side or one over the device's
    /// `max_texture_dimension_2d`; [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory)
    /// from creating the texture.
    pub(crate) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        layout: Layout,
        mode: Mode,
    ) -> Result<WgpuPlace> {
        check_size(device, layout)?;
        let layout = layout.packed_as(layout.format())?;
        let blit = match mode {
            // Chosen for this size, as each resize makes a new place: a device's workgroup
            // limit may allow a compute blit of a small texture and not of a wide one.
            Mode::Interop => BlitKind::preferred(
                shared_format(layout.format()).wgpu(),
                device.features(),
                &device.limits(),
                layout.size(),
            ),
            _ => None,
        };
        let texture = scoped(device, "wgpu::Device::create_texture", || {
            device.create_texture(&descriptor(layout, blit))
        })?;
        Ok(WgpuPlace {
            device: device.clone(),
            queue: queue.clone(),
            layout,
            texture,
            blit,
            blits: Blits::default(),
        })
    }

    /// The texture's format: the one of the layout's format.
    pub(crate) fn format(&self) -> SharedFormat {
        shared_format(self.layout.format())
    }

    /// Takes over the blits that `old` (the target's place before a resize) made.
    pub(crate) fn keep_blits(&self, old: &WgpuPlace) {
        self.blits.set(old.blits.take());
    }

    /// The shader blit that writes the texture in interop mode (made once per format and kind,
    /// then reused), or `None` where the present copies instead.
    ///
    /// # Errors
    /// [`WgpuError::Refused`](super::WgpuError::Refused) or
    /// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory) from making its pipeline.
    pub(crate) fn blit(&self) -> Result<Option<Blit>> {
        let Some(kind) = self.blit else {
            return Ok(None);
        };
        let format = self.format().wgpu();
        let mut blits = self.blits.take();
        let found = blits
            .iter()
            .find(|b| (b.kind(), b.format()) == (kind, format))
            .cloned();
        let blit = match found {
            Some(blit) => Ok(blit),
            None => scoped(&self.device, pipeline_call(kind), || {
                Blit::new(&self.device, format, kind)
            })
            .inspect(|made| blits.push(made.clone())),
        };
        self.blits.set(blits);
        blit.map(Some)
    }

    /// Keeps the place's wgpu objects (the texture, the blits' pipelines, the queue and the
    /// device) alive for good: on wgpu's GL backend, where dropping them would delete GL
    /// objects through a GL context that is not theirs.
    #[cfg(feature = "wgpu-gl")]
    pub(crate) fn leak(&self) {
        // A clone that is never dropped keeps wgpu's object (and its device) alive.
        std::mem::forget(self.texture.clone());
        std::mem::forget(self.blits.take());
        leak_queue(&self.device, &self.queue);
    }
}

/// Keeps wgpu's `queue` (and `device`) alive for good, for a holder of clones dropped where its
/// GL context is not current. A texture keeps the device alive, not the queue: the last clone
/// of the queue to go drops wgpu-core's queue, which calls `glFinish`, retires the finished
/// submissions and drops the pending `write_texture`s' resources, deleting GL objects whose
/// last reference they held, all through whatever GL context is current (another context's
/// objects of those names would go instead). The application may have dropped its own clones
/// first (the holders' docs allow it).
#[cfg(feature = "wgpu-gl")]
pub(crate) fn leak_queue(device: &wgpu::Device, queue: &wgpu::Queue) {
    std::mem::forget(queue.clone());
    std::mem::forget(device.clone());
}

/// The wgpu call that makes a blit's pipeline, for its errors.
fn pipeline_call(kind: BlitKind) -> &'static str {
    match kind {
        BlitKind::Compute => "wgpu::Device::create_compute_pipeline (the present's blit)",
        BlitKind::Render => "wgpu::Device::create_render_pipeline (the present's blit)",
    }
}

/// Refuses a texture of `layout` that `device` cannot make: a zero side, or one over its
/// `max_texture_dimension_2d`.
///
/// # Errors
/// [`DisplayError::TargetSize`].
pub(crate) fn check_size(device: &wgpu::Device, layout: Layout) -> Result<()> {
    let max = device.limits().max_texture_dimension_2d;
    let (width, height) = layout.size();
    let fits = |n: u32| n > 0 && n <= max;
    if fits(width) && fits(height) {
        return Ok(());
    }
    Err(DisplayError::TargetSize {
        width,
        height,
        max: i32::try_from(max).unwrap_or(i32::MAX),
    }
    .into())
}

/// The shared format of `format`.
pub(super) fn shared_format(format: Format) -> SharedFormat {
    match format {
        Format::Rgba8 => SharedFormat::Rgba8Unorm,
        Format::Rgba32F => SharedFormat::Rgba32Float,
        Format::R8 => SharedFormat::R8Unorm,
        Format::R32F => SharedFormat::R32Float,
    }
}

/// A descriptor of the texture the application samples (of `layout`'s size and format,
/// sampled, copied into and out of, and written by a `blit` of that kind).
fn descriptor(layout: Layout, blit: Option<BlitKind>) -> wgpu::TextureDescriptor<'static> {
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST
        | blit.map_or(wgpu::TextureUsages::empty(), BlitKind::usage);
    descriptor_of(layout, "cuda_gl::wgpu_interop::WgpuTarget", usage)
}

/// A descriptor of a 2-D texture of `layout`'s size and format (its [`SharedFormat`]), one
/// level and sample, with `usage`, named `label`.
pub(super) fn descriptor_of(
    layout: Layout,
    label: &'static str,
    usage: wgpu::TextureUsages,
) -> wgpu::TextureDescriptor<'static> {
    texture_descriptor(layout.size(), shared_format(layout.format()), label, usage)
}

/// The refusal, by `target`'s constructor, of a mode that no wgpu route offers
/// ([`Mode::Stream`]): the modes that are.
pub(super) fn mode_unavailable(target: &'static str, mode: Mode) -> Error {
    DisplayError::ModeUnavailable {
        target,
        mode: mode.name(),
        modes: "Mode::Interop (wgpu's Vulkan backend on the CUDA GPU, or with feature wgpu-gl its \
                GL backend on a GL context there), Mode::Staged",
    }
    .into()
}

/// A descriptor of a 2-D texture of `(width, height)` and `format`, one level and sample, with
/// `usage`, named `label`.
pub(super) fn texture_descriptor(
    (width, height): (u32, u32),
    format: SharedFormat,
    label: &'static str,
    usage: wgpu::TextureUsages,
) -> wgpu::TextureDescriptor<'static> {
    wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: format.wgpu(),
        usage,
        view_formats: &[],
    }
}

/// Where a copy into or out of `texture` starts: level 0, row `first`, column 0.
pub(crate) fn from_row(texture: &wgpu::Texture, first: u32) -> wgpu::TexelCopyTextureInfo<'_> {
    wgpu::TexelCopyTextureInfo {
        texture,
        mip_level: 0,
        origin: wgpu::Origin3d {
            x: 0,
            y: first,
            z: 0,
        },
        aspect: wgpu::TextureAspect::All,
    }
}
