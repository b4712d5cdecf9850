//! PNG files of RGBA8 frames. A PNG is stored top row first, as the frame appears on screen;
//! frames in GL (textures, read-back) are bottom row first, so [`flip_rows`] turns one order
//! into the other.

use anyhow::{Context as _, Result, ensure};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// `rgba` (`width` x `height` RGBA8 pixels) with its rows in the other order: bottom row first
/// becomes top row first, and back.
///
/// # Errors
/// When `rgba` is not `width * height * 4` bytes.
pub fn flip_rows(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>> {
    let row = width as usize * 4;
    ensure!(
        rgba.len() == row * height as usize,
        "{} bytes is not a {width}x{height} RGBA8 frame ({} bytes)",
        rgba.len(),
        row * height as usize
    );
    Ok(rgba
        .chunks_exact(row.max(1))
        .rev()
        .flatten()
        .copied()
        .collect())
}

/// Writes `rgba` (`width` x `height` RGBA8 pixels, top row first) as an 8-bit RGBA PNG at
/// `path`, creating its folder if needed.
///
/// # Errors
/// When the file cannot be created or written, or `rgba` is not one frame.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder {}", dir.display()))?;
    }
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder
        .write_header()
        .with_context(|| format!("writing the PNG header of {}", path.display()))?;
    writer
        .write_image_data(rgba)
        .with_context(|| format!("writing the pixels of {}", path.display()))?;
    writer
        .finish()
        .with_context(|| format!("finishing {}", path.display()))
}

/// [`write_png`] of a frame given bottom row first (GL's order): the file is top row first.
///
/// # Errors
/// As [`write_png`] and [`flip_rows`].
pub fn write_png_bottom_up(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    write_png(path, width, height, &flip_rows(width, height, rgba)?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flips_rows_once() {
        // 1x2: bottom row red, top row blue.
        let bottom_up = [255, 0, 0, 255, 0, 0, 255, 255];
        let top_down = flip_rows(1, 2, &bottom_up).unwrap();
        assert_eq!(top_down, [0, 0, 255, 255, 255, 0, 0, 255]);
        assert_eq!(flip_rows(1, 2, &top_down).unwrap(), bottom_up);
        assert!(flip_rows(2, 2, &bottom_up).is_err());
    }

    #[test]
    fn writes_a_png() {
        let dir = std::env::temp_dir().join(format!("gl-kit-png-{}", std::process::id()));
        let path = dir.join("nested").join("a.png");
        write_png_bottom_up(&path, 1, 2, &[1, 2, 3, 255, 4, 5, 6, 255]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes[..8], *b"\x89PNG\r\n\x1a\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
