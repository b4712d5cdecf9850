//! PNG files of frames, and comparing two images.
//!
//! One convention everywhere: a PNG is stored top row first, as the frame appears on screen.
//! Frames in memory (GL textures, the kernels' output, [`render_cpu`](crate::plasma_cpu::render_cpu))
//! are bottom row first, so [`Image::from_bottom_up`] flips the rows once, on the way out. The
//! screenshot and the reference image both go through it, so they compare exactly.

use anyhow::{Context as _, Result, bail};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// An RGBA8 image, top row first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes, top row first.
    pub rgba: Vec<u8>,
}

impl Image {
    /// An image from a frame laid out bottom row first (GL's texture order), flipping the rows.
    ///
    /// # Errors
    /// When `rgba` is not `width * height * 4` bytes.
    pub fn from_bottom_up(width: u32, height: u32, rgba: &[u8]) -> Result<Image> {
        Ok(Image {
            width,
            height,
            rgba: gl_kit::image::flip_rows(width, height, rgba)?,
        })
    }

    /// Writes the image as an 8-bit RGBA PNG (with gl-kit's writer).
    ///
    /// # Errors
    /// When the file cannot be created or written.
    pub fn write_png(&self, path: &Path) -> Result<()> {
        gl_kit::image::write_png(path, self.width, self.height, &self.rgba)
    }

    /// Reads a PNG as RGBA8 (grey, grey-alpha, RGB and palette images are expanded; 16-bit
    /// channels are cut to 8).
    ///
    /// # Errors
    /// When the file cannot be opened or is not a PNG.
    pub fn read_png(path: &Path) -> Result<Image> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut decoder = png::Decoder::new(BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder
            .read_info()
            .with_context(|| format!("{} is not a PNG", path.display()))?;
        let Some(size) = reader.output_buffer_size() else {
            bail!("{} is too large to decode", path.display());
        };
        let mut buf = vec![0u8; size];
        let info = reader
            .next_frame(&mut buf)
            .with_context(|| format!("decoding {}", path.display()))?;
        buf.truncate(info.buffer_size());
        let rgba = match info.color_type {
            png::ColorType::Rgba => buf,
            png::ColorType::Rgb => buf
                .chunks_exact(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            png::ColorType::GrayscaleAlpha => buf
                .chunks_exact(2)
                .flat_map(|p| [p[0], p[0], p[0], p[1]])
                .collect(),
            png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
            png::ColorType::Indexed => {
                bail!("{}: palette not expanded", path.display())
            }
        };
        Ok(Image {
            width: info.width,
            height: info.height,
            rgba,
        })
    }
}

/// How two images of the same size differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Difference {
    /// The largest absolute difference of any channel.
    pub max_channel_diff: u8,
    /// How many channels differ by more than the tolerance.
    pub channels_over: usize,
    /// How many pixels have a channel over the tolerance.
    pub pixels_over: usize,
    /// The first pixel over the tolerance, `(x, y)` with `y = 0` the top row.
    pub first_over: Option<(u32, u32)>,
    /// Channels compared.
    pub channels: usize,
}

impl Difference {
    /// Whether every channel was within the tolerance.
    pub fn within_tolerance(&self) -> bool {
        self.channels_over == 0
    }
}

/// Compares two RGBA8 frames of `width` (any row order, the same for both) channel by channel.
///
/// # Errors
/// When the sizes differ.
pub fn compare(a: &Image, b: &Image, tolerance: u8) -> Result<Difference> {
    if (a.width, a.height) != (b.width, b.height) || a.rgba.len() != b.rgba.len() {
        bail!(
            "the images have different sizes: {}x{} and {}x{}",
            a.width,
            a.height,
            b.width,
            b.height
        );
    }
    Ok(compare_rgba(&a.rgba, &b.rgba, a.width, tolerance))
}

/// [`compare`] on raw RGBA8 buffers of equal length with rows of `width` pixels.
pub fn compare_rgba(a: &[u8], b: &[u8], width: u32, tolerance: u8) -> Difference {
    let mut d = Difference {
        max_channel_diff: 0,
        channels_over: 0,
        pixels_over: 0,
        first_over: None,
        channels: a.len().min(b.len()),
    };
    for (i, (pa, pb)) in a.chunks_exact(4).zip(b.chunks_exact(4)).enumerate() {
        let mut over = false;
        for (&ca, &cb) in pa.iter().zip(pb) {
            let diff = ca.abs_diff(cb);
            d.max_channel_diff = d.max_channel_diff.max(diff);
            if diff > tolerance {
                d.channels_over += 1;
                over = true;
            }
        }
        if over {
            d.pixels_over += 1;
            if d.first_over.is_none() {
                let w = width.max(1) as usize;
                d.first_over = Some(((i % w) as u32, (i / w) as u32));
            }
        }
    }
    d
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip_and_compare() {
        let dir = std::env::temp_dir().join(format!("plasma-demo-png-{}", std::process::id()));
        let path = dir.join("a.png");
        let (w, h) = (7u32, 5u32);
        let mut frame = vec![0u8; (w * h * 4) as usize];
        crate::plasma_cpu::render_cpu(&mut frame, w, h, 0.5);
        let img = Image::from_bottom_up(w, h, &frame).unwrap();
        img.write_png(&path).unwrap();
        let back = Image::read_png(&path).unwrap();
        assert_eq!(back, img);
        let d = compare(&img, &back, 0).unwrap();
        assert!(d.within_tolerance());
        assert_eq!(d.max_channel_diff, 0);

        let mut changed = back.clone();
        changed.rgba[4 * 8 + 1] = changed.rgba[4 * 8 + 1].wrapping_add(3);
        let d = compare(&img, &changed, 2).unwrap();
        assert_eq!(
            (d.max_channel_diff, d.channels_over, d.pixels_over),
            (3, 1, 1)
        );
        assert_eq!(d.first_over, Some((1, 1)));
        assert!(compare(&img, &changed, 3).unwrap().within_tolerance());

        let other = Image::from_bottom_up(1, 1, &[0, 0, 0, 255]).unwrap();
        assert!(compare(&img, &other, 255).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
