//! Colour maps for one-channel images: a [`ColorMap`] set on a target with
//! [`DisplayTarget::set_color_map`](super::DisplayTarget::set_color_map) turns the `R8` and
//! `R32F` images it is shown ([`show`](super::DisplayTarget::show),
//! [`show_raw`](super::DisplayTarget::show_raw), `show_cudarc`) into RGBA8 on the GPU: values
//! from `min` to `max` spread over a [`Palette`]. Without one they are
//! shown grey, 0 to 1 (or 0 to 255), by the texture's swizzle.
//!
//! The kernel is cuda-gl's own (`kernels/colormap.cu`, its PTX committed and built by `cargo
//! xtask ptx`), loaded in the target's CUDA context when a map is first set. Its colours come
//! from a table computed here on the host ([`Palette::color`]), so that the GPU and
//! [`ColorMap::color_of`] (a legend, a test) give the same bytes.

use crate::context::Context;
use crate::error::{DisplayError, Result};
use crate::image::{DeviceImage, Format};
use crate::memory::DeviceBuffer;
use crate::module::{Function, LaunchConfig, Module};
use crate::queue::{AfterWork, then};
use crate::stream::{AsStream, Stream};
use cuda_gl_sys as sys;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// The PTX of `kernels/colormap.cu`.
const PTX: &str = include_str!("kernels/colormap.ptx");

/// A palette of colours, from the colour of 0 to the colour of 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Palette {
    /// Black to white.
    Grey,
    /// Dark blue through green to yellow: matplotlib's perceptually uniform default, readable
    /// in grey and by most colour-blind viewers.
    Viridis,
    /// Black through red and orange to pale yellow: matplotlib's `inferno`, for data where
    /// high values matter most.
    Inferno,
}

impl Palette {
    /// Every palette, in the order of their tables on the GPU ([`index`](Self::index)).
    const ALL: [Palette; 3] = [Palette::Grey, Palette::Viridis, Palette::Inferno];

    /// The palette's place in [`ALL`](Self::ALL).
    fn index(self) -> usize {
        match self {
            Palette::Grey => 0,
            Palette::Viridis => 1,
            Palette::Inferno => 2,
        }
    }

    /// The colours the palette passes through at evenly spaced points: for `Viridis` and
    /// `Inferno`, matplotlib's colours at t = 0, 1/7, ..., 1.
    fn stops(self) -> &'static [[u8; 3]] {
        match self {
            Palette::Grey => &[[0, 0, 0], [255, 255, 255]],
            Palette::Viridis => &[
                [0x44, 0x01, 0x54],
                [0x46, 0x32, 0x7e],
                [0x36, 0x5c, 0x8d],
                [0x27, 0x7f, 0x8e],
                [0x1f, 0xa1, 0x87],
                [0x4a, 0xc1, 0x6d],
                [0xa0, 0xda, 0x39],
                [0xfd, 0xe7, 0x25],
            ],
            Palette::Inferno => &[
                [0x00, 0x00, 0x04],
                [0x28, 0x0b, 0x54],
                [0x65, 0x15, 0x6e],
                [0x9f, 0x2a, 0x63],
                [0xd4, 0x48, 0x42],
                [0xf5, 0x7d, 0x15],
                [0xfa, 0xc2, 0x28],
                [0xfc, 0xff, 0xa4],
            ],
        }
    }

    /// The palette's colour at `t`, RGBA8 with alpha 255: `t` is clamped to 0..=1 (NaN is 0)
    /// and rounded to one of 256 levels, and the colour is interpolated linearly between the
    /// palette's stops (for `Viridis` and `Inferno`, eight of matplotlib's colours: close to
    /// matplotlib's 256-colour tables, not equal to them). What the GPU draws for that level.
    pub fn color(self, t: f32) -> [u8; 4] {
        self.level(level_of(t))
    }

    /// The colour of level `level` (0 to 255).
    fn level(self, level: usize) -> [u8; 4] {
        let stops = self.stops();
        let last = stops.len() - 1;
        // A level on a stop gives an integer quotient, exact in f64: floor never falls short.
        let at = level.min(255) as f64 * last as f64 / 255.0;
        let segment = (at.floor() as usize).min(last - 1);
        let f = at - segment as f64;
        let (a, b) = (stops[segment], stops[segment + 1]);
        let mix = |i: usize| (a[i] as f64 + (b[i] as f64 - a[i] as f64) * f).round() as u8;
        [mix(0), mix(1), mix(2), 255]
    }

    /// The palette's 256 colours, RGBA8.
    fn table(self) -> impl Iterator<Item = [u8; 4]> {
        (0..256).map(move |level| self.level(level))
    }
}

/// The level (0 to 255) of `t`, as the kernel computes it.
fn level_of(t: f32) -> usize {
    // NaN goes to 0, as the kernel's `!(t > 0)` takes it.
    let t = if t > 0.0 { t.min(1.0) } else { 0.0 };
    (t * 255.0 + 0.5) as usize
}

/// How a target shows one-channel images: values from `min` to `max` spread over `palette`,
/// values below `min` (and NaN) in its first colour, above `max` in its last. For
/// [`Format::R8`](super::Format::R8) the values are the bytes, 0 to 255; for
/// [`Format::R32F`](super::Format::R32F) the floats. Made by [`new`](Self::new), which checks
/// the range (fields may be added in a minor release).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ColorMap {
    /// The colours.
    pub palette: Palette,
    /// The value shown in the palette's first colour.
    pub min: f32,
    /// The value shown in the palette's last colour; greater than `min`.
    pub max: f32,
}

impl ColorMap {
    /// `palette` spread from `min` to `max`.
    ///
    /// # Errors
    /// [`DisplayError::ColorMapRange`] unless both are finite and `min < max` (with a span whose
    /// inverse is finite).
    pub fn new(palette: Palette, min: f32, max: f32) -> Result<ColorMap> {
        let map = ColorMap { palette, min, max };
        map.check()?;
        Ok(map)
    }

    /// The colour the target shows for value `v` (a byte's value for `R8`), RGBA8: the same
    /// bytes as the GPU's, for a legend or a test.
    pub fn color_of(&self, v: f32) -> [u8; 4] {
        self.palette.color((v - self.min) * self.inv_span())
    }

    fn inv_span(&self) -> f32 {
        1.0 / (self.max - self.min)
    }

    /// Refuses a range the kernel cannot spread values over.
    pub(super) fn check(&self) -> Result<()> {
        let span = self.max - self.min;
        let finite = self.min.is_finite() && self.max.is_finite() && span.is_finite();
        if finite && span > 0.0 && self.inv_span().is_finite() {
            Ok(())
        } else {
            Err(DisplayError::ColorMapRange.into())
        }
    }
}

/// A target's colour map, with the kernel and the palettes' tables on the GPU, kept loaded
/// once a map was first set (a map taken off and set again loads nothing).
#[derive(Debug)]
pub(super) struct Mapper {
    pub(super) map: Option<ColorMap>,
    /// Dropped (and its module unloaded) once the context's work is done: see the drop.
    function: ManuallyDrop<Function>,
    /// Every palette's 256 colours, RGBA8, in [`Palette::ALL`]'s order; dropped as
    /// `function`.
    tables: ManuallyDrop<DeviceBuffer<u8>>,
    ctx: Arc<Context>,
}

impl Mapper {
    /// Loads the kernel and the tables in `ctx`.
    pub(super) fn load(ctx: &Arc<Context>, map: Option<ColorMap>) -> Result<Mapper> {
        let function = Module::from_ptx(ctx, PTX)?.function("cuda_gl_colormap")?;
        let bytes: Vec<u8> = Palette::ALL
            .iter()
            .flat_map(|p| p.table())
            .flatten()
            .collect();
        Ok(Mapper {
            map,
            function: ManuallyDrop::new(function),
            tables: ManuallyDrop::new(DeviceBuffer::from_slice(ctx, &bytes)?),
            ctx: ctx.clone(),
        })
    }

    /// Queues the kernel in `stream`'s order, as cuda-gl's copies are (on its private stream,
    /// joined to `stream`, so that no capture another thread begins on `stream` can take it):
    /// `src` (one channel) through `map` into `dst` (RGBA8, of `src`'s size); `after` runs right
    /// after the kernel, in its run (see [`AfterWork`]).
    ///
    /// # Safety
    /// 1. `src` and `dst` describe device memory of the mapper's context that holds their
    ///    images (`pitch * (height - 1) + row` bytes each), readable (`src`) and writable
    ///    (`dst`) until the kernel has run in `stream`'s order; `dst` is not read meanwhile.
    /// 2. `stream` is a live stream of that context.
    ///
    /// # Errors
    /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) when `stream` is capturing;
    /// the launch's.
    pub(super) unsafe fn draw(
        &self,
        map: &ColorMap,
        src: &DeviceImage<'_>,
        dst: &DeviceImage<'_>,
        stream: &impl AsStream,
        after: AfterWork<'_>,
    ) -> Result<()> {
        let table = map.palette.index();
        let (from, to) = (src.layout(), dst.layout());
        let is_float = i32::from(from.format() == Format::R32F);
        let (w, h) = (from.width(), from.height());
        let tables = self.tables.device_ptr().byte_add(table * 256 * 4)?;
        let launch = |private: sys::CUstream| {
            // SAFETY: cuda-gl's private stream of the context, live while its queue is locked
            // (for this call); borrowed, never destroyed.
            let private = unsafe { Stream::from_raw(&self.ctx, private) };
            // SAFETY: (1) for the images (the kernel reads a float byte by byte: any address
            // and pitch); the tables live in `self`, whose drop waits for the private stream;
            // the arguments match the kernel's parameters (checked against the PTX by
            // `launch`); the grid covers `w` x `h` and the kernel returns outside it.
            unsafe {
                self.function.launch(
                    LaunchConfig::for_image(w, h),
                    &private,
                    (
                        src.ptr(),
                        from.pitch(),
                        is_float,
                        dst.ptr(),
                        to.pitch(),
                        w as i32,
                        h as i32,
                        map.min,
                        map.inv_span(),
                        tables,
                    ),
                )
            }
        };
        // SAFETY: (2).
        unsafe {
            self.ctx.run_now(
                stream.raw_stream(),
                "cuLaunchKernel (not called)",
                then(launch, after),
            )
        }
    }
}

impl Drop for Mapper {
    fn drop(&mut self) {
        // The kernel may still read the tables, and neither cuMemFree nor cuModuleUnload is
        // documented to wait for it: cuda-gl's private stream, which runs it, is waited for
        // first (allowed while another thread captures a stream, unlike the context's sync).
        match self.ctx.finish_queued() {
            // SAFETY: both are dropped once, here, after the work that used them: every launch
            // of the function ran on the private stream, just waited for, and the mapper holds
            // the only clone of it and of its module (`kernels_done`'s 1).
            Ok(()) => unsafe {
                self.function.kernels_done();
                ManuallyDrop::drop(&mut self.tables);
                ManuallyDrop::drop(&mut self.function);
            },
            Err(e) => log::error!(
                "cuda-gl: a display target's colour map kernel and tables leaked, and with them a \
                 reference to the CUDA context, which is then never released: {e}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palettes_start_and_end_at_their_stops_and_clamp() {
        for palette in Palette::ALL {
            let stops = palette.stops();
            let (first, last) = (stops[0], stops[stops.len() - 1]);
            assert_eq!(palette.color(0.0), [first[0], first[1], first[2], 255]);
            assert_eq!(palette.color(1.0), [last[0], last[1], last[2], 255]);
            assert_eq!(palette.color(-3.0), palette.color(0.0));
            assert_eq!(palette.color(f32::NAN), palette.color(0.0));
            assert_eq!(palette.color(7.0), palette.color(1.0));
            assert_eq!(palette.table().count(), 256);
        }
        assert_eq!(Palette::Grey.color(0.5), [128, 128, 128, 255]);
    }

    #[test]
    fn a_map_spreads_its_range_and_refuses_an_empty_one() -> Result<()> {
        let map = ColorMap::new(Palette::Grey, 10.0, 20.0)?;
        assert_eq!(map.color_of(10.0), [0, 0, 0, 255]);
        assert_eq!(map.color_of(20.0), [255, 255, 255, 255]);
        assert_eq!(map.color_of(15.0), [128, 128, 128, 255]);
        assert!(map.check().is_ok());
        for (min, max) in [
            (1.0, 1.0),
            (2.0, 1.0),
            (f32::NAN, 1.0),
            (0.0, f32::INFINITY),
        ] {
            let bad = ColorMap {
                palette: Palette::Viridis,
                min,
                max,
            };
            assert!(bad.check().is_err(), "{min}..{max}");
        }
        let huge = ColorMap {
            palette: Palette::Viridis,
            min: -f32::MAX,
            max: f32::MAX,
        };
        assert!(huge.check().is_err(), "a span that overflows");
        Ok(())
    }
}
