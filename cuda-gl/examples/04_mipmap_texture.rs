//! 04: CUDA samples a mipmapped OpenGL texture with linear filtering.
//!
//! GL owns a 64x64 RGBA8 texture with all 7 mip levels, each uploaded with its own pattern.
//! CUDA maps it once, takes the CUDA array of each of four levels out of the mipmapped array, and
//! creates a texture object per level with linear filtering, so the kernel's `tex2D` reads
//! filtered values straight from GL's memory. The samples land in a CUDA device buffer.
//!
//! The check: every sample is compared with bilinear filtering computed on the CPU from the
//! uploaded texels. The sample positions are at quarter texels, where CUDA's filter weights
//! (9-bit fixed point, 8 fractional bits) are exact, so the only differences are the texels'
//! 8-bit storage and float rounding: the tolerance is 1/255 + 1/512 (one storage step and one
//! weight step). To show that the check tells filtering apart, it also reports how many samples
//! nearest-texel sampling would get wrong by more than the tolerance.
//!
//! Run: `cargo run --release -p cuda-gl --example 04_mipmap_texture --features egl`
//! (`-- --window` to see the samples, `-- --screenshot 04.png` to keep them: one block per
//! level, each sample one pixel).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::{Framebuffer, Gpu, Outcome};
use cuda_gl::{
    ArrayFormat, DeviceBuffer, ImageTarget, LaunchConfig, Module, RegisterFlags, RegisteredImage,
    Stream, TexDesc,
};
use std::process::ExitCode;

/// Level 0 is BASE x BASE texels; level n is BASE >> n.
const BASE: u32 = 64;
/// Every level down to 1x1.
const LEVELS: u32 = 7;
/// The levels CUDA samples.
const SAMPLED: [u32; 4] = [0, 1, 2, 3];
/// Samples per texel along each axis (positions at quarter texels).
const STEPS: u32 = 4;
const TOLERANCE: f64 = 1.0 / 255.0 + 1.0 / 512.0;
/// Pixels between the levels' blocks in the picture.
const GAP: u32 = 8;

/// Samples per side of level `level` (and pixels per side of its block in the picture).
fn side(level: u32) -> u32 {
    (BASE >> level) * STEPS + 1
}

/// The picture of the samples: the sampled levels' blocks side by side, GAP pixels apart.
fn picture_size() -> (u32, u32) {
    let width = SAMPLED.iter().map(|&l| side(l) + GAP).sum::<u32>() - GAP;
    (width, side(SAMPLED[0]))
}

fn main() -> ExitCode {
    let (width, height) = picture_size();
    common::main_with_kernels(width, height, run)
}

fn run(mut gpu: Gpu, stream: Stream, module: Module) -> Result<Outcome> {
    let (picture_width, picture_height) = picture_size();
    let sample = module.function("sample_rgba")?;

    let texture = mipmapped_texture()?;
    // READ_ONLY: CUDA only samples, GL's texels stay as they are.
    let mut image = RegisteredImage::register(
        &gpu.ctx,
        texture,
        ImageTarget::Texture2D,
        RegisterFlags::READ_ONLY,
    )?;

    // Per sampled level: the positions (x, y interleaved, in texels of that level) and room for
    // the RGBA samples.
    let mut jobs = Vec::new();
    for &level in &SAMPLED {
        let positions = sample_positions(side(level));
        let count = positions.len() / 2;
        // Both are complete on return: the kernels on `stream` see them.
        let xy = DeviceBuffer::from_slice(&gpu.ctx, &positions)?;
        let out = DeviceBuffer::<f32>::zeroed(&gpu.ctx, count * 4)?;
        jobs.push((level, positions, xy, out));
    }

    // Linear filtering, coordinates in texels of the level, clamped; RGBA8 read as 0..1 floats.
    let linear = TexDesc::normalized_float();
    {
        let mapped = image.map(&stream)?;
        let mipmaps = mapped.mipmapped_array()?;
        for (level, positions, xy, out) in &jobs {
            // The CUDA array of one level: its size says it is the level we think it is.
            let array = mipmaps.level(*level)?;
            let size = (BASE >> level) as usize;
            if (array.width(), array.height()) != (size, size)
                || array.format() != ArrayFormat::UNSIGNED_INT8
                || array.channels() != 4
            {
                bail!("mip level {level} is not a {size}x{size} RGBA8 array to CUDA: {array:?}");
            }
            let texture = mapped.create_tex(&array, &linear)?;
            let count = (positions.len() / 2) as u32;
            // SAFETY: sample_rgba(cudaTextureObject_t, const float*, float*, unsigned) reads
            // 2 * count floats of `xy` and writes 4 * count floats of `out`, their lengths; it
            // runs on the stream the texture is mapped on.
            unsafe {
                sample.launch(
                    LaunchConfig::for_elements(count),
                    &stream,
                    (texture.handle(), xy.device_ptr(), out.device_ptr(), count),
                )?;
            }
            // The texture object drops here; cuda-gl destroys it after the kernel.
        }
        mapped.unmap()?;
    }

    // Compare every sample with the CPU's bilinear filter, and lay the samples out as a picture.
    // Opaque black between the blocks.
    let mut picture = [0u8, 0, 0, 255].repeat((picture_width * picture_height) as usize);
    let (mut total, mut wrong, mut nearest_wrong, mut max_error) = (0, 0, 0, 0.0f64);
    let mut left = 0;
    for (level, positions, _, out) in &jobs {
        // Copied out in the order of `stream`: after the kernel that wrote them.
        let samples = out.to_vec_on(&stream)?;
        for (i, (xy, got)) in positions
            .chunks_exact(2)
            .zip(samples.chunks_exact(4))
            .enumerate()
        {
            let want = bilinear(*level, xy[0], xy[1]);
            let error = (0..4)
                .map(|c| (f64::from(got[c]) - want[c]).abs())
                .fold(0.0, f64::max);
            max_error = max_error.max(error);
            wrong += usize::from(error > TOLERANCE);
            let near = nearest(*level, xy[0], xy[1]);
            nearest_wrong += usize::from((0..4).any(|c| (near[c] - want[c]).abs() > TOLERANCE));
            total += 1;
            // Sample (column, row) of the level's block becomes one opaque pixel of the picture.
            let (column, row) = (i as u32 % side(*level), i as u32 / side(*level));
            let pixel = ((row * picture_width + left + column) * 4) as usize;
            for (byte, value) in picture[pixel..pixel + 3].iter_mut().zip(got) {
                *byte = (value.clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        }
        left += side(*level) + GAP;
    }
    let summary = format!(
        "CUDA sampled mip levels {SAMPLED:?} of a {BASE}x{BASE} GL texture with linear \
         filtering; {} of {total} samples within {TOLERANCE:.4} of the CPU's bilinear filter \
         (max error {max_error:.6}); nearest-texel sampling would miss {nearest_wrong}",
        total - wrong
    );

    // Show the samples through GL: upload the picture into a framebuffer's texture.
    let frame = Framebuffer::new(picture_width, picture_height)?;
    // SAFETY: a GL context is current; `picture` holds width * height RGBA8 pixels, rows packed
    // (alignment 4 divides a row of RGBA8 pixels), and no unpack buffer is bound.
    unsafe {
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
        gl::BindTexture(gl::TEXTURE_2D, frame.texture().0);
        gl::TexSubImage2D(
            gl::TEXTURE_2D,
            0,
            0,
            0,
            picture_width as i32,
            picture_height as i32,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            picture.as_ptr().cast(),
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    gl_kit::check("uploading the picture of the samples")?;
    gpu.finish(&frame)?;

    image.unregister()?;
    // SAFETY: the GL context is current; the name came from glGenTextures.
    unsafe { gl::DeleteTextures(1, &texture) };
    gpu.ctx.check_drop_errors()?;

    // Unless most samples fall between texels, the check could not tell filtering from none.
    Ok(if wrong == 0 && nearest_wrong * 2 > total {
        Outcome::Ok(summary)
    } else {
        Outcome::Mismatch(summary)
    })
}

/// Texel (x, y) of mip `level`: patterns that change a lot from texel to texel (so filtering
/// shows) and from level to level (so a wrong level shows).
fn texel(level: u32, x: u32, y: u32) -> [u8; 4] {
    let r = (x * 73 + y * 151 + level * 40) % 256;
    let g = ((x ^ y) * 29 + level * 60) % 256;
    let b = if (x / 2 + y / 2).is_multiple_of(2) {
        230
    } else {
        20
    };
    let a = 255 - level * 30;
    [r as u8, g as u8, b, a as u8]
}

/// A BASE x BASE RGBA8 texture with LEVELS levels, each uploaded from [`texel`].
fn mipmapped_texture() -> Result<u32> {
    // Immutable storage for every level at once: the mip chain CUDA will see.
    let texture = gl_kit::texture::rgba8(BASE, BASE, LEVELS, gl::NEAREST)?;
    // SAFETY: a GL context is current; `texture` is a live texture name.
    unsafe {
        gl::BindTexture(gl::TEXTURE_2D, texture);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
    }
    for level in 0..LEVELS {
        let size = BASE >> level;
        let data: Vec<u8> = (0..size)
            .flat_map(|y| (0..size).flat_map(move |x| texel(level, x, y)))
            .collect();
        // SAFETY: the texture is bound; `data` holds size * size RGBA8 texels of this level.
        unsafe {
            gl::TexSubImage2D(
                gl::TEXTURE_2D,
                level as i32,
                0,
                0,
                size as i32,
                size as i32,
                gl::RGBA,
                gl::UNSIGNED_BYTE,
                data.as_ptr().cast(),
            );
        }
    }
    // SAFETY: a GL context is current.
    unsafe { gl::BindTexture(gl::TEXTURE_2D, 0) };
    gl_kit::check("creating the mipmapped texture")?;
    Ok(texture)
}

/// `side` x `side` positions a quarter texel apart, from 0 to the far edge of the level (the
/// borders exercise the clamp), x and y interleaved, row by row.
fn sample_positions(side: u32) -> Vec<f32> {
    let step = 1.0 / STEPS as f32;
    (0..side)
        .flat_map(|row| (0..side).flat_map(move |col| [col as f32 * step, row as f32 * step]))
        .collect()
}

/// Texel (x, y) of `level` as floats in 0..1, clamped to the level's edges like the texture.
fn texel_f(level: u32, x: i64, y: i64) -> [f64; 4] {
    let last = i64::from(BASE >> level) - 1;
    let t = texel(level, x.clamp(0, last) as u32, y.clamp(0, last) as u32);
    t.map(|c| f64::from(c) / 255.0)
}

/// CUDA's linear filter at (x, y) in texels (CUDA programming guide, "Linear Filtering"):
/// with xb = x - 0.5, yb = y - 0.5, i = floor(xb), a = xb - i (likewise j, b), the result is
/// (1-a)(1-b) T[i,j] + a(1-b) T[i+1,j] + (1-a)b T[i,j+1] + ab T[i+1,j+1].
fn bilinear(level: u32, x: f32, y: f32) -> [f64; 4] {
    let (xb, yb) = (f64::from(x) - 0.5, f64::from(y) - 0.5);
    let (i, j) = (xb.floor(), yb.floor());
    let (a, b) = (xb - i, yb - j);
    let (i, j) = (i as i64, j as i64);
    let (t00, t10) = (texel_f(level, i, j), texel_f(level, i + 1, j));
    let (t01, t11) = (texel_f(level, i, j + 1), texel_f(level, i + 1, j + 1));
    std::array::from_fn(|c| {
        (1.0 - a) * (1.0 - b) * t00[c]
            + a * (1.0 - b) * t10[c]
            + (1.0 - a) * b * t01[c]
            + a * b * t11[c]
    })
}

/// Nearest-texel sampling at (x, y): what the check must be able to tell from filtering.
fn nearest(level: u32, x: f32, y: f32) -> [f64; 4] {
    texel_f(
        level,
        f64::from(x).floor() as i64,
        f64::from(y).floor() as i64,
    )
}
