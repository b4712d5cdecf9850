//! Decoded video on the GPU: NV12 and P010 frames in device memory (what NVDEC writes),
//! described by a [`VideoLayout`] and converted to RGBA8 by cuda-gl's own kernel
//! ([`Converter`]), with a CPU reference ([`convert_cpu`], [`ColorSpace::rgba8`]) that gives the
//! same bytes.
//!
//! **Frames.** A 4:2:0 frame of `width` x `height` pixels is a plane of luma samples (Y', one
//! per pixel) and a plane of interleaved chroma pairs (Cb, Cr), `ceil(width / 2)` x
//! `ceil(height / 2)` of them, each plane with rows at a pitch of its own, the chroma at an
//! offset from the luma's first byte, usually in the same allocation ([`VideoLayout::new`] for
//! chroma right after the luma at the same pitch, [`VideoLayout::with_chroma`] for a decoder's
//! aligned height). [`VideoFormat::Nv12`] has 8-bit samples, a byte each;
//! [`VideoFormat::P010`] has 10-bit samples in the high bits of little-endian 16-bit words (the
//! sample is the word shifted right by 6). A [`VideoFrame`] is a layout's planes in device
//! memory.
//!
//! **Chroma siting.** Pixel `(x, y)` takes the chroma pair `(x / 2, y / 2)`: the nearest
//! sample for MPEG-2's 4:2:0 siting (chroma at the left of each pair of columns, between each
//! pair of rows: "left", what H.264, HEVC and AV1 streams mostly use), with no interpolation.
//!
//! **Colour.** A [`ColorSpace`] is a [`ColorMatrix`] (BT.601, BT.709, BT.2020, with the
//! standard's `Kr` and `Kb`) and a [`ColorRange`]; its default is BT.709, limited range. For
//! `n`-bit samples (8 or 10), limited range: `E'Y = (Y' - 16·2^(n-8)) / (219·2^(n-8))`,
//! `E'Cb = (Cb - 128·2^(n-8)) / (224·2^(n-8))` (`E'Cr` alike); full range: `E'Y = Y' / (2^n -
//! 1)`, `E'Cb = (Cb - 2^(n-1)) / (2^n - 1)`. Then `R' = E'Y + 2(1 - Kr)·E'Cr`, `B' = E'Y +
//! 2(1 - Kb)·E'Cb`, `G' = (E'Y - Kr·R' - Kb·B') / (1 - Kr - Kb)`. The result stays in the
//! gamma-encoded R'G'B' of the standard (no transfer function or primaries are converted):
//! RGBA8 of `255·R'`, `255·G'`, `255·B'` and alpha 255.
//!
//! **Exact bytes.** The host folds these equations into seven `f32` coefficients per colour
//! space and depth; the kernel (compiled without fused multiply-add or fast math) and the CPU
//! reference apply them with the same float operations in the same order, clamp each channel
//! to [0, 255] and round half up (`floor(c + 0.5)`), so they give the same bytes (the tests
//! allow 1 per channel); the coefficients follow the standard's equations in `f64` within 1
//! level.
//!
//! ```no_run
//! use cuda_gl::display::{Format, Layout};
//! use cuda_gl::video::{ColorSpace, Converter, VideoFormat, VideoLayout};
//! use cuda_gl::{Context, DeviceBuffer, Device, Stream, StreamFlags};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = Context::new(&Device::get(0)?)?;
//! let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
//! let converter = Converter::load(&ctx)?;
//! // An NVDEC-like frame: pitch 2048, chroma at the aligned height of 1088 rows.
//! let layout = VideoLayout::with_chroma((1920, 1080), VideoFormat::Nv12, 2048, 2048 * 1088, 2048)?;
//! let nv12 = DeviceBuffer::<u8>::zeroed(&ctx, layout.bytes())?; // ... the decoder's output
//! let rgba_layout = Layout::packed((1920, 1080), Format::Rgba8)?;
//! let mut rgba = DeviceBuffer::<u8>::zeroed(&ctx, rgba_layout.bytes())?;
//! converter.convert_buffer(&nv12, layout, ColorSpace::default(), &mut rgba, rgba_layout, &stream)?;
//! let pixels = rgba.to_vec_on(&stream)?; // after the conversion, on its stream
//! # let _ = pixels;
//! # Ok(())
//! # }
//! ```

mod color;
mod convert;
mod cpu;
mod frame;
mod layout;
mod plane_check;
mod planes;

pub use crate::error::VideoError;
pub use color::{ColorMatrix, ColorRange, ColorSpace};
pub use convert::Converter;
pub use cpu::convert_cpu;
pub use frame::VideoFrame;
pub use layout::{VideoFormat, VideoLayout};
pub use planes::VideoPlanes;
#[cfg(feature = "wgpu-gl")]
pub(crate) use planes::copy_planes;
#[cfg(feature = "wgpu")]
pub(crate) use planes::planes_to_host;
