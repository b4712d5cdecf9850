//! The wgpu target's staged mode, for any wgpu adapter (another vendor's GPU, lavapipe, a GL
//! backend): a frame (its pixels, or the CUDA array its surface writes) is copied out of the
//! GPU into pinned host memory in bands, and each band is handed to `Queue::write_texture` as
//! soon as its copy has finished, while the next bands are copied, as the GL target's staged
//! mode does. wgpu copies the bytes at the call and writes the texture at its next submit.

use super::place::{WgpuPlace, from_row};
use super::scope::scoped;
use crate::context::Context;
use crate::display::{
    Band, Canvas, CopyOut, CopyingFrame, Present, Source, bands_for_client_upload,
};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::stream::{AsStream, wait_limit};
use std::sync::Arc;
use std::time::Instant;

/// The staged mode's state.
#[derive(Debug)]
pub(super) struct Staged {
    /// Together the frame, in order; dropped before the canvas (each waits for its copy out
    /// of it).
    bands: Vec<Band>,
    canvas: Canvas,
}

impl Present for Staged {
    type Texture = WgpuPlace;
    type Frame<'t, S: AsStream + 't> = StagedFrame<'t, S>;

    /// The bands' pinned memory and the canvas, with the texture made black (written at
    /// wgpu's next submit).
    ///
    /// # Errors
    /// The driver's errors from allocating pinned and device memory; as [`write_bands`].
    fn new(ctx: &Arc<Context>, place: &WgpuPlace) -> Result<Staged> {
        let layout = place.layout;
        let row = layout.row_bytes();
        let bands = Band::allocate(
            ctx,
            row,
            bands_for_client_upload(row, layout.height() as usize),
        )?;
        let canvas = Canvas::new(ctx, layout)?;
        write_bands(&bands, place, Instant::now() + wait_limit())?;
        Ok(Staged { bands, canvas })
    }

    fn begin<'t, S: AsStream>(
        &'t mut self,
        place: &'t WgpuPlace,
        stream: &'t S,
    ) -> Result<StagedFrame<'t, S>> {
        CopyingFrame::begin(&mut self.canvas, &mut self.bands[..], place, stream)
    }
}

/// A staged frame: the canvas it is drawn on, and the bands it is copied out through.
pub(super) type StagedFrame<'t, S> = CopyingFrame<'t, S, &'t mut [Band]>;

impl CopyOut for &mut [Band] {
    type Texture = WgpuPlace;

    /// Copies the frame out in the stream's order, band by band, and hands each band to
    /// `write_texture` as soon as its copy has finished, while the later bands are copied:
    /// wgpu's next submit writes the frame into the texture.
    ///
    /// # Errors
    /// The copies' errors (nothing is written then); [`Error::Timeout`] when the copies have not
    /// all finished within the [wait limit](crate::wait_limit) (10 s by default) of the first wait
    /// (the bands before are written).
    fn copy_out(self, place: &WgpuPlace, source: Source<'_>, stream: &impl AsStream) -> Result<()> {
        for band in self.iter_mut() {
            // SAFETY: (1) of `copy_in`: the source is the state's canvas (`begin` hands out
            // only its own canvas with these bands), which `new` made of the layout that it
            // cut the bands from, rows of the bands' row bytes: the bands lie within it. It
            // outlives the copy (the state drops the bands, which wait for their copies,
            // before the canvas).
            unsafe { band.copy_in(source, stream) }?;
        }
        write_bands(self, place, Instant::now() + wait_limit())
    }
}

/// Hands `bands` to `write_texture` into `place`'s texture in order, each once its copy has finished
/// (waiting until `deadline` in all), under error scopes: what wgpu refuses (a texture the
/// application destroyed) or cannot do (out of memory) is an error, not a panic of wgpu's
/// default handler.
///
/// # Errors
/// [`Error::Timeout`] past `deadline` (the bands before are written);
/// [`WgpuError::Refused`](super::WgpuError::Refused);
/// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory).
fn write_bands(bands: &[Band], place: &WgpuPlace, deadline: Instant) -> Result<()> {
    let (width, row) = (place.layout.width(), place.layout.row_bytes());
    scoped(&place.device, "wgpu::Queue::write_texture", || {
        for band in bands {
            let limit = deadline.saturating_duration_since(Instant::now());
            let bytes = band.bytes_within(limit)?;
            let rows = band.rows();
            // Rows and row bytes of a texture wgpu made, so within `u32`.
            let (first, count, row) = (rows.first as u32, rows.count as u32, row as u32);
            place.queue.write_texture(
                from_row(&place.texture, first),
                bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row),
                    rows_per_image: None,
                },
                wgpu::Extent3d {
                    width,
                    height: count,
                    depth_or_array_layers: 1,
                },
            );
        }
        Ok(())
    })?
}
