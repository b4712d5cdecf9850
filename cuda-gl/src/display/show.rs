//! Device memory on a display target in one call: [`DisplayTarget::show`] and
//! [`show_raw`](DisplayTarget::show_raw) (and, with feature `cudarc`, `show_cudarc`, which
//! comes through here), copied into a frame, or mapped through the target's
//! [`ColorMap`](super::ColorMap) ([`DisplayTarget::set_color_map`]).

use super::Format;
use super::colormap::{ColorMap, Mapper};
#[cfg(doc)]
use super::frame::Frame;
use super::frame::Pixels;
use super::target::DisplayTarget;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, UsageError};
use crate::memory::DeviceBuffer;
use crate::result;
use crate::stream::{AsStream, check_same_context};
use cuda_gl_sys as sys;

impl DisplayTarget {
    /// Shows `src`, an image of `width` x `height` pixels of `format` whose rows start `pitch`
    /// bytes apart, in one call: the target takes that size and format (as
    /// [`resize`](Self::resize), which keeps the objects of a target already of that size and
    /// format: make the target with the size and format of what it will show, and `show` at
    /// the same size re-creates nothing; no `resize` is needed before a `show` of another
    /// size), the pixels are copied on the GPU in `stream`'s order (or, for a one-channel
    /// image on a target with a [colour map](Self::set_color_map), mapped into RGBA8), and the
    /// frame is presented (a stream-mode target then [`flush`](Self::flush)es, so the texture
    /// shows `src` when this returns in every mode).
    ///
    /// # Errors
    /// [`UsageError::PitchedSource`] when `pitch` is smaller than a row or `src` holds fewer
    /// bytes than the image needs; [`UsageError::WrongCudaContext`] for a buffer or stream of
    /// another context; as [`resize`](Self::resize), [`frame`](Self::frame),
    /// [`Frame::pixels`] and [`Frame::present`]; [`Error::StreamCapturing`] when `stream` is
    /// capturing; for an image mapped through a [colour map](Self::set_color_map), the
    /// driver's error launching cuda-gl's kernel.
    pub fn show<T: crate::DeviceCopy>(
        &mut self,
        src: &DeviceBuffer<T>,
        width: u32,
        height: u32,
        pitch: usize,
        format: Format,
        stream: &impl AsStream,
    ) -> Result<()> {
        if src.context().raw() != self.context().raw() {
            return Err(UsageError::WrongCudaContext {
                what: "device buffer",
                owner: "the display target".into(),
            }
            .into());
        }
        let image = Pixels {
            ptr: src.device_ptr(),
            pitch,
            width,
            height,
            format,
        };
        // SAFETY: (1) the buffer holds `byte_len` bytes of this context (checked), borrowed
        // until the copy has been queued before a present that the caller's stream orders
        // after it; freeing the buffer waits for the copies that read it.
        unsafe { self.show_sized(image, src.byte_len(), stream) }
    }

    /// [`show_raw`](Self::show_raw) of memory known to hold `given` bytes, which the image
    /// must fit in.
    ///
    /// # Safety
    /// As [`show_raw`](Self::show_raw), for `given` bytes at `src.ptr`.
    ///
    /// # Errors
    /// [`UsageError::PitchedSource`] when the image does not fit in `given` bytes; as
    /// [`show`](Self::show).
    pub(crate) unsafe fn show_sized(
        &mut self,
        src: Pixels<'_>,
        given: usize,
        stream: &impl AsStream,
    ) -> Result<()> {
        check_layout("the device memory", &src, Some(given))?;
        // SAFETY: forwarded to the caller; the image fits in the `given` bytes (checked).
        unsafe { self.show_raw(src, stream) }
    }

    /// [`show`](Self::show) for device memory of any origin: `src` says where the image is
    /// and how it is laid out.
    ///
    /// # Safety
    /// 1. `src.ptr` points to `src.pitch * (src.height - 1) + src.width *
    ///    src.format.bytes_per_pixel()` bytes of device memory of the target's CUDA context,
    ///    which stay allocated and are not written until the work queued on `stream` before
    ///    this returns has run.
    ///
    /// # Errors
    /// As [`show`](Self::show).
    pub unsafe fn show_raw(&mut self, src: Pixels<'_>, stream: &impl AsStream) -> Result<()> {
        check_layout("the device memory", &src, None)?;
        let Pixels {
            ptr,
            pitch,
            width,
            height,
            format,
        } = src;
        let row_bytes = width as usize * format.bytes_per_pixel();
        check_same_context(self.context(), stream, "the display target")?;
        if let Some(map) = self.color_map().filter(|_| format.one_channel()) {
            // SAFETY: (1), forwarded; `stream` is of the target's context (checked).
            return unsafe { self.show_mapped(src, map, stream) };
        }
        let ctx = self.context().clone();
        self.present_filled((width, height, format), stream, |dst| {
            let copy = sys::CUDA_MEMCPY2D {
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcDevice: ptr.as_raw(),
                srcPitch: pitch,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstDevice: dst.ptr.as_raw(),
                dstPitch: dst.pitch,
                WidthInBytes: row_bytes,
                Height: height as usize,
                ..Default::default()
            };
            // SAFETY: the stream is live while borrowed and of this context (checked). In the
            // work: the source holds the image ((1)); the destination is the frame's pixels,
            // rows of `row_bytes` bytes `dst.pitch` apart (`present_filled` gave the target
            // this size and format), live until the copy has run (`present_filled`).
            unsafe {
                ctx.run_now(stream.raw_stream(), "cuMemcpy2DAsync (not called)", |p| {
                    Ok(result::array::copy_2d_async(&copy, p)?)
                })
            }
        })
    }

    /// Gives the target `width` x `height` pixels of `format` (as [`resize`](Self::resize)),
    /// begins a frame on `stream`, has `fill` queue the work that writes the frame's pixels in
    /// `stream`'s order, presents the frame and [`flush`](Self::flush)es. The pixels stay
    /// live until that work has run: the pixel buffer is unmapped on `stream` after it (the
    /// present, which `stream` orders after it), and the target's memory is freed only when
    /// the target is dropped or reconfigured, which waits for the work. A frame whose pixels or
    /// `fill` failed is abandoned, not presented: its pixels hold nothing meant for the screen.
    ///
    /// # Errors
    /// As [`reconfigure`](Self::reconfigure), [`frame`](Self::frame), [`Frame::pixels`],
    /// [`Frame::present`] and `fill`.
    fn present_filled(
        &mut self,
        (width, height, format): (u32, u32, Format),
        stream: &impl AsStream,
        fill: impl FnOnce(&Pixels<'_>) -> Result<()>,
    ) -> Result<()> {
        self.reconfigure(width, height, format)?;
        let frame = self.frame(stream)?;
        let filled = frame.pixels().and_then(|dst| fill(&dst));
        if let Err(e) = filled {
            frame.abandon();
            return Err(e);
        }
        frame.present()?;
        self.flush()
    }
}

/// Refuses an image whose pitch is smaller than a row, or which does not fit in the `given`
/// bytes it is said to have (`None`: unknown, for memory given by address).
fn check_layout(what: &'static str, image: &Pixels<'_>, given: Option<usize>) -> Result<()> {
    let Pixels {
        pitch,
        width,
        height,
        format,
        ..
    } = *image;
    let row_bytes = width as usize * format.bytes_per_pixel();
    let needed = pitch
        .checked_mul((height as usize).saturating_sub(1))
        .and_then(|n| n.checked_add(row_bytes));
    let fits = match (needed, given) {
        (Some(needed), Some(given)) => needed <= given,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if pitch >= row_bytes && fits && width > 0 && height > 0 {
        return Ok(());
    }
    Err(UsageError::PitchedSource {
        what,
        width,
        height,
        pitch,
        row_bytes,
        needed: needed.unwrap_or(usize::MAX),
        given: given.unwrap_or(0),
    }
    .into())
}

impl DisplayTarget {
    /// Shows the one-channel images ([`Format::R8`], [`Format::R32F`]) given to
    /// [`show`](Self::show), [`show_raw`](Self::show_raw) and `show_cudarc` through `map` from
    /// now on: the target takes [`Format::Rgba8`] for them, and a kernel of cuda-gl's maps each
    /// pixel on the GPU in the show's stream order. `None` shows them grey again (the
    /// texture's swizzle, 0 to 1 or 0 to 255). The map stays across
    /// [`resize`](Self::resize) and shows of any size; frames drawn by the application's
    /// kernels are not mapped. The kernel is loaded (in the target's CUDA context) when a map
    /// is first set, and stays loaded until the target is dropped.
    ///
    /// ```no_run
    /// use cuda_gl::display::{ColorMap, DisplayTarget, Format, Palette};
    /// use cuda_gl::{Context, DeviceBuffer, Device, Stream, StreamFlags};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // A GL context is current; a 1000x700 field of temperatures, 250 K to 320 K.
    /// let ctx = Context::new(&Device::get(0)?)?;
    /// let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
    /// let field = DeviceBuffer::from_slice(&ctx, &vec![273.0f32; 1000 * 700])?;
    /// let (mut target, _) = DisplayTarget::new(&ctx, 1000, 700, Format::Rgba8, None)?;
    /// target.set_color_map(Some(ColorMap::new(Palette::Viridis, 250.0, 320.0)?))?;
    /// target.show(&field, 1000, 700, 1000 * 4, Format::R32F, &stream)?;
    /// // ... draw target.texture(); a legend: ColorMap::color_of(kelvin) ...
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`UsageError::ColorMapRange`] for a map whose fields were changed into a range that is
    /// not finite or not increasing (the map is then not set); the driver's errors loading the
    /// kernel or allocating its tables (the first time).
    pub fn set_color_map(&mut self, map: Option<ColorMap>) -> Result<()> {
        if let Some(map) = &map {
            map.check()?;
        }
        match &mut self.color_map {
            Some(mapper) => mapper.map = map,
            None if map.is_some() => self.color_map = Some(Mapper::load(self.context(), map)?),
            None => {}
        }
        Ok(())
    }

    /// The colour map set by [`set_color_map`](Self::set_color_map).
    pub fn color_map(&self) -> Option<ColorMap> {
        self.color_map.as_ref().and_then(|m| m.map)
    }

    /// [`show_raw`](Self::show_raw) of a one-channel image through `map`, the target's colour
    /// map: the target takes the image's size in RGBA8, and the kernel writes the frame's
    /// pixels.
    ///
    /// # Safety
    /// As [`show_raw`](Self::show_raw); `stream` is of the target's context (checked by the
    /// caller).
    ///
    /// # Errors
    /// As [`present_filled`](Self::present_filled); [`Mapper::draw`]'s.
    unsafe fn show_mapped(
        &mut self,
        src: Pixels<'_>,
        map: ColorMap,
        stream: &impl AsStream,
    ) -> Result<()> {
        // Out of the target while it is borrowed for the frame; put back whatever happens.
        let Some(mapper) = self.color_map.take() else {
            return Err(crate::Error::Internal {
                what: "a mapped show without a colour map".into(),
            });
        };
        let shown = self.present_filled((src.width, src.height, Format::Rgba8), stream, |dst| {
            // SAFETY: `src` holds its image until the work queued on `stream` has run (the
            // caller's (1)); `dst` is the frame's pixels, RGBA8 of `src`'s size, written only
            // by this kernel until the present and live until the kernel has run
            // (`present_filled`); `stream` is of the mapper's context (the target's).
            unsafe { mapper.draw(&map, &src, dst, stream) }
        });
        self.color_map = Some(mapper);
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::memory::DevicePtr;

    #[test]
    fn pitched_sources_are_checked() {
        let image = |pitch, width, height| Pixels {
            ptr: DevicePtr::new(0),
            pitch,
            width,
            height,
            format: Format::Rgba8,
        };
        assert!(check_layout("b", &image(12, 3, 2), Some(24)).is_ok());
        assert!(check_layout("b", &image(16, 3, 2), Some(28)).is_ok());
        assert!(check_layout("b", &image(16, 3, 2), None).is_ok());
        for (pitch, given) in [(8, 24), (12, 23), (usize::MAX, usize::MAX)] {
            let err = check_layout("b", &image(pitch, 3, 2), Some(given));
            assert!(
                matches!(err, Err(Error::Usage(UsageError::PitchedSource { .. }))),
                "{err:?}"
            );
        }
        assert!(check_layout("b", &image(0, 0, 2), Some(10)).is_err());
    }
}
