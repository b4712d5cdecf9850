//! What a display target shows and is made of: a pixel [`Format`], a [`Layout`] (size, row
//! pitch and format, checked when it is made) and a [`DeviceImage`] (a layout's pixels in
//! device memory).

use crate::error::{DisplayError, Result};
use crate::memory::DevicePtr;

/// The pixel format of a [`DisplayTarget`](crate::display::DisplayTarget) and of the memory shown on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Four 8-bit channels, red first (`GL_RGBA8`): one `u32` per pixel, red in the low byte.
    Rgba8,
    /// Four 32-bit float channels (`GL_RGBA32F`).
    Rgba32F,
    /// One 8-bit channel (`GL_R8`), shown grey, or in colour through a
    /// [`ColorMap`](crate::display::ColorMap).
    R8,
    /// One 32-bit float channel (`GL_R32F`), shown grey, or in colour through a
    /// [`ColorMap`](crate::display::ColorMap).
    R32F,
}

impl Format {
    /// The bytes of one pixel.
    pub fn bytes_per_pixel(self) -> usize {
        match self {
            Format::Rgba8 | Format::R32F => 4,
            Format::Rgba32F => 16,
            Format::R8 => 1,
        }
    }

    /// GL's internal format, pixel format and type.
    pub(crate) fn gl(self) -> (u32, u32, u32) {
        match self {
            Format::Rgba8 => (gl::RGBA8, gl::RGBA, gl::UNSIGNED_BYTE),
            Format::Rgba32F => (gl::RGBA32F, gl::RGBA, gl::FLOAT),
            Format::R8 => (gl::R8, gl::RED, gl::UNSIGNED_BYTE),
            Format::R32F => (gl::R32F, gl::RED, gl::FLOAT),
        }
    }

    /// Whether it has one channel, shown grey.
    pub(crate) fn one_channel(self) -> bool {
        matches!(self, Format::R8 | Format::R32F)
    }
}

/// How an image lies in memory: `width` x `height` pixels of a [`Format`], rows `pitch` bytes
/// apart, row 0 first (the texture's row 0: see the [module docs](super)). Checked once, when
/// made: the pitch holds a row and the image's bytes can be counted. (A side of 0 is a layout;
/// a [`DisplayTarget`](crate::display::DisplayTarget) refuses it.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    width: u32,
    height: u32,
    pitch: usize,
    format: Format,
}

impl Layout {
    /// `(width, height)` pixels of `format` whose rows start `pitch` bytes apart.
    ///
    /// # Errors
    /// [`DisplayError::PitchedSource`] when `pitch` is smaller than a row
    /// (`width * format.bytes_per_pixel()`) or the image's bytes do not fit in a `usize`.
    pub fn new((width, height): (u32, u32), pitch: usize, format: Format) -> Result<Layout> {
        let layout = Layout {
            width,
            height,
            pitch,
            format,
        };
        match layout.needed() {
            Some(_) if pitch >= layout.row_bytes() => Ok(layout),
            _ => Err(layout.refused("the image layout", 0)),
        }
    }

    /// `(width, height)` pixels of `format`, rows tightly packed (the pitch is a row).
    ///
    /// # Errors
    /// [`DisplayError::PitchedSource`] when the image's bytes do not fit in a `usize`.
    pub fn packed(size: (u32, u32), format: Format) -> Result<Layout> {
        Layout::new(size, size.0 as usize * format.bytes_per_pixel(), format)
    }

    /// Width and height in pixels.
    pub fn size(self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Width in pixels.
    pub fn width(self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(self) -> u32 {
        self.height
    }

    /// The bytes from the start of one row to the next.
    pub fn pitch(self) -> usize {
        self.pitch
    }

    /// The pixel format.
    pub fn format(self) -> Format {
        self.format
    }

    /// The bytes of one row of pixels (without the pitch's padding).
    pub fn row_bytes(self) -> usize {
        self.width as usize * self.format.bytes_per_pixel()
    }

    /// The bytes the image spans: `pitch * (height - 1) + row_bytes` (a row for a height of 0).
    pub fn bytes(self) -> usize {
        // Counted when the layout was made (`new`).
        self.needed().unwrap_or(usize::MAX)
    }

    /// The same size, in `format`, tightly packed: what a target shows this image as.
    pub(crate) fn packed_as(self, format: Format) -> Result<Layout> {
        Layout::packed(self.size(), format)
    }

    /// Refuses memory of `given` bytes, `what`, too small for the image.
    ///
    /// # Errors
    /// [`DisplayError::PitchedSource`].
    pub(crate) fn check_fits(self, what: &'static str, given: usize) -> Result<()> {
        if self.bytes() <= given {
            Ok(())
        } else {
            Err(self.refused(what, given))
        }
    }

    fn needed(self) -> Option<usize> {
        self.pitch
            .checked_mul((self.height as usize).saturating_sub(1))
            .and_then(|n| n.checked_add(self.row_bytes()))
    }

    fn refused(self, what: &'static str, given: usize) -> crate::Error {
        DisplayError::PitchedSource {
            what,
            width: self.width,
            height: self.height,
            pitch: self.pitch,
            row_bytes: self.row_bytes(),
            needed: self.needed().unwrap_or(usize::MAX),
            given,
        }
        .into()
    }
}

/// An image in device memory: where its first pixel is, and its [`Layout`]. What
/// [`Frame::pixels`](crate::display::Frame::pixels) gives a kernel to write, and what
/// [`DisplayTarget::show_raw`](crate::display::DisplayTarget::show_raw) shows.
#[derive(Debug, Clone, Copy)]
pub struct DeviceImage<'a> {
    ptr: DevicePtr<'a>,
    layout: Layout,
}

impl<'a> DeviceImage<'a> {
    /// The image of `layout` whose first pixel (of row 0) is at `ptr`. Nothing is promised
    /// about the memory: [`show_raw`](crate::display::DisplayTarget::show_raw), which reads it, is
    /// `unsafe`.
    pub fn new(ptr: DevicePtr<'a>, layout: Layout) -> DeviceImage<'a> {
        DeviceImage { ptr, layout }
    }

    /// The first pixel of row 0.
    pub fn ptr(&self) -> DevicePtr<'a> {
        self.ptr
    }

    /// How the pixels lie.
    pub fn layout(&self) -> Layout {
        self.layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn layouts_are_checked_once() -> Result<()> {
        let layout = |pitch| Layout::new((3, 2), pitch, Format::Rgba8);
        assert_eq!(layout(12)?.bytes(), 24);
        assert_eq!(layout(16)?.bytes(), 28);
        assert!(layout(16)?.check_fits("b", 28).is_ok());
        assert_eq!(Layout::packed((3, 2), Format::Rgba8)?.pitch(), 12);
        let refused = |e: Option<Error>| {
            matches!(e, Some(Error::Display(DisplayError::PitchedSource { .. })))
        };
        assert!(refused(layout(8).err()));
        assert!(refused(layout(usize::MAX).err()));
        assert!(refused(layout(12)?.check_fits("b", 23).err()));
        assert!(refused(layout(16)?.check_fits("b", 27).err()));
        Ok(())
    }
}
