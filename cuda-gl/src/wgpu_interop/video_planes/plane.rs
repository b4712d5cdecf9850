//! The planes of the wgpu video planes' frames: each plane's texture size, format and bytes,
//! where its rows lie in a frame, the checks of a frame's size against the device, and the
//! texture the application samples for it.

use super::Call;
use crate::error::{Result, UsageError};
use crate::video::{VideoError, VideoFormat, VideoLayout};
use crate::wgpu_interop::blit::BlitKind;
use crate::wgpu_interop::format::SharedFormat;
use crate::wgpu_interop::place::texture_descriptor;
use crate::wgpu_interop::scope::scoped;

/// One plane of the frames: its texture's size and format, and its bytes, rows tightly packed
/// (the pinned buffer's size and `write_texture`'s layout in staged mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plane {
    pub(super) size: (u32, u32),
    pub(super) format: SharedFormat,
    /// The bytes of one row: width x bytes per texel.
    pub(super) row: usize,
    /// The bytes of the whole plane.
    pub(super) bytes: usize,
}

/// The luma and chroma planes of `format` frames of `size`: the luma of the frame's size with
/// one channel, the chroma of `ceil(w / 2)` x `ceil(h / 2)` with two (R8Unorm + Rg8Unorm for
/// NV12, R16Unorm + Rg16Unorm for P010).
///
/// # Errors
/// [`VideoError::TooLarge`] when a plane's bytes do not fit in a `usize` (`call` names the
/// call).
pub(super) fn planes_of(
    (width, height): (u32, u32),
    format: VideoFormat,
    call: &'static str,
) -> Result<[Plane; 2], VideoError> {
    let (luma, chroma) = match format {
        VideoFormat::Nv12 => (SharedFormat::R8Unorm, SharedFormat::Rg8Unorm),
        VideoFormat::P010 => (SharedFormat::R16Unorm, SharedFormat::Rg16Unorm),
    };
    let plane = |size: (u32, u32), format: SharedFormat| {
        let row = (size.0 as usize).checked_mul(format.bytes_per_texel() as usize);
        let bytes = row.and_then(|row| row.checked_mul(size.1 as usize));
        match (row, bytes) {
            (Some(row), Some(bytes)) => Ok(Plane {
                size,
                format,
                row,
                bytes,
            }),
            _ => Err(VideoError::TooLarge {
                call,
                width,
                height,
            }),
        }
    };
    Ok([
        plane((width, height), luma)?,
        plane((width.div_ceil(2), height.div_ceil(2)), chroma)?,
    ])
}

/// Where the rows of each plane of a frame of `layout` start (bytes from the frame's first
/// byte), and their pitch.
pub(super) fn rows_of(layout: &VideoLayout) -> [(usize, usize); 2] {
    [
        (0, layout.luma_pitch()),
        (layout.chroma_offset(), layout.chroma_pitch()),
    ]
}

/// The planes of `format` frames of `size`, when `device` can hold them.
///
/// # Errors
/// [`UsageError::TooLarge`] for a side over `max_texture_dimension_2d`; as [`planes_of`];
/// [`WgpuError::MissingFeature`](crate::wgpu_interop::WgpuError::MissingFeature) for 16-bit planes without
/// `TEXTURE_FORMAT_16BIT_NORM`.
pub(super) fn frame_planes(
    device: &wgpu::Device,
    size: (u32, u32),
    format: VideoFormat,
    call: Call,
) -> Result<[Plane; 2]> {
    check_side(size, device.limits().max_texture_dimension_2d, call)?;
    let planes = planes_of(size, format, call.name)?;
    planes
        .iter()
        .try_for_each(|p| p.format.check_features(device, call.name))?;
    Ok(planes)
}

/// Refuses a frame with a side over `max` (the device's `max_texture_dimension_2d`).
pub(super) fn check_side(
    (width, height): (u32, u32),
    max: u32,
    call: Call,
) -> Result<(), UsageError> {
    if width.max(height) > max {
        return Err(UsageError::TooLarge {
            what: call.side,
            value: width.max(height).into(),
            max: max.into(),
        });
    }
    Ok(())
}

/// The texture the application samples for `plane`, with the usage its interop blit needs
/// (`blit`).
pub(super) fn plane_texture(
    device: &wgpu::Device,
    plane: &Plane,
    label: &'static str,
    blit: Option<BlitKind>,
) -> Result<wgpu::Texture> {
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST
        | blit.map_or(wgpu::TextureUsages::empty(), BlitKind::usage);
    scoped(device, "wgpu::Device::create_texture", || {
        device.create_texture(&texture_descriptor(plane.size, plane.format, label, usage))
    })
}
