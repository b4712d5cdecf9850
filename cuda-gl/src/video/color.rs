//! How samples become colours: a [`ColorSpace`] (a [`ColorMatrix`] and a [`ColorRange`]), the
//! numbers the kernel is given for it ([`Coefficients`], computed here on the host), and the
//! per-pixel conversion that the CPU reference and the kernel share.

use super::layout::VideoFormat;
use crate::module::KernelParam;

/// The matrix that turns Y'CbCr back into R'G'B': the standard's luma weights `Kr` and `Kb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColorMatrix {
    /// ITU-R BT.601 (standard-definition video, JPEG): `Kr = 0.299`, `Kb = 0.114`.
    Bt601,
    /// ITU-R BT.709 (HD video): `Kr = 0.2126`, `Kb = 0.0722`.
    Bt709,
    /// ITU-R BT.2020, non-constant luminance (UHD and HDR video): `Kr = 0.2627`,
    /// `Kb = 0.0593`.
    Bt2020,
}

impl ColorMatrix {
    /// `(Kr, Kb)`, as the standard gives them.
    pub fn kr_kb(self) -> (f64, f64) {
        match self {
            ColorMatrix::Bt601 => (0.299, 0.114),
            ColorMatrix::Bt709 => (0.2126, 0.0722),
            ColorMatrix::Bt2020 => (0.2627, 0.0593),
        }
    }
}

/// Which codes of an `n`-bit sample carry the picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColorRange {
    /// "Studio", "TV" or "video" range, what broadcast and most decoded video use: luma from
    /// `16 << (n - 8)` (black) to `235 << (n - 8)` (white), chroma from `16 << (n - 8)` to
    /// `240 << (n - 8)` around `128 << (n - 8)` (BT.601, BT.709 and BT.2020's quantisation).
    Limited,
    /// "PC", "JPEG" or "full" range: luma from 0 to `2^n - 1`, chroma from 0 to `2^n - 1`
    /// around `2^(n - 1)` (BT.2100's full range; JPEG's for `n = 8`).
    Full,
}

/// How a frame's samples are meant: its matrix and its range. The default is BT.709, limited
/// range: what HD video uses when a stream says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColorSpace {
    /// The matrix.
    pub matrix: ColorMatrix,
    /// The range.
    pub range: ColorRange,
}

impl Default for ColorSpace {
    fn default() -> ColorSpace {
        ColorSpace::new(ColorMatrix::Bt709, ColorRange::Limited)
    }
}

impl ColorSpace {
    /// `matrix` in `range`.
    pub const fn new(matrix: ColorMatrix, range: ColorRange) -> ColorSpace {
        ColorSpace { matrix, range }
    }

    /// The RGBA8 colour (alpha 255) of luma `y` and chroma `u` (Cb), `v` (Cr), samples of
    /// `format`'s depth (8 bits for NV12, 10 for P010: a P010 word shifted right by 6). What the
    /// GPU gives for that pixel, computed the same way, for a test or a picker: see the
    /// [module docs](super) for the equations and the rounding. Samples outside the range give
    /// colours clamped to 0 and 255.
    pub fn rgba8(self, y: u16, u: u16, v: u16, format: VideoFormat) -> [u8; 4] {
        self.coefficients(format).rgba8(y, u, v)
    }

    /// The numbers the kernel is given for this colour space and `format`'s depth.
    pub(crate) fn coefficients(self, format: VideoFormat) -> Coefficients {
        let (kr, kb) = self.matrix.kr_kb();
        let kg = 1.0 - kr - kb;
        let bits = format.bits();
        let scale = f64::from(1u32 << (bits - 8));
        let max = f64::from((1u32 << bits) - 1);
        // E'Y = (y - y_offset) / y_span; E'Cb = (u - c_offset) / c_span, E'Cr alike.
        let (y_offset, y_span, c_offset, c_span) = match self.range {
            ColorRange::Limited => (16.0 * scale, 219.0 * scale, 128.0 * scale, 224.0 * scale),
            ColorRange::Full => (0.0, max, f64::from(1u32 << (bits - 1)), max),
        };
        // R' = E'Y + 2 (1 - Kr) E'Cr; B' = E'Y + 2 (1 - Kb) E'Cb; G' = (E'Y - Kr R' - Kb B') / Kg,
        // all times 255 for 8-bit output.
        let c = 255.0 / c_span;
        Coefficients {
            y_offset: y_offset as f32,
            y_gain: (255.0 / y_span) as f32,
            c_offset: c_offset as f32,
            r_v: (2.0 * (1.0 - kr) * c) as f32,
            g_u: (-2.0 * kb * (1.0 - kb) / kg * c) as f32,
            g_v: (-2.0 * kr * (1.0 - kr) / kg * c) as f32,
            b_u: (2.0 * (1.0 - kb) * c) as f32,
        }
    }
}

/// The conversion's numbers, as the kernel's `Coefficients` struct lays them out (seven
/// floats, no padding): computed once on the host, so that the GPU and [`Coefficients::rgba8`]
/// use the same floats.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct Coefficients {
    /// The luma sample of black.
    y_offset: f32,
    /// 255 over the luma samples from black to white.
    y_gain: f32,
    /// The chroma sample of no colour.
    c_offset: f32,
    /// Red's gain of Cr, green's of Cb and Cr, blue's of Cb, in 8-bit levels per sample.
    r_v: f32,
    g_u: f32,
    g_v: f32,
    b_u: f32,
}

// SAFETY: seven f32s in C order with no padding (repr(C), all of one type): the layout of the
// kernel's `Coefficients`, a struct of seven floats; no pointers.
unsafe impl KernelParam for Coefficients {}

impl Coefficients {
    /// The pixel of samples `y`, `u`, `v`: the kernel's float operations in the kernel's order
    /// (no fused multiply-add on either side), so the bytes are the GPU's.
    pub(crate) fn rgba8(&self, y: u16, u: u16, v: u16) -> [u8; 4] {
        let yf = (f32::from(y) - self.y_offset) * self.y_gain;
        let uf = f32::from(u) - self.c_offset;
        let vf = f32::from(v) - self.c_offset;
        let r = yf + self.r_v * vf;
        let g = yf + self.g_u * uf + self.g_v * vf;
        let b = yf + self.b_u * uf;
        [quantize(r), quantize(g), quantize(b), 255]
    }
}

/// An 8-bit level: clamped to [0, 255], then rounded half up (`floor(c + 0.5)`), as the kernel
/// does.
fn quantize(c: f32) -> u8 {
    // The float-to-int cast truncates, which is the floor of a non-negative value.
    (c.clamp(0.0, 255.0) + 0.5) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use ColorMatrix::*;
    use ColorRange::*;

    /// The standard's equations, straight, in f64: normalise, solve R' and B' from the colour
    /// differences, G' from the luma equation, scale to 255, clamp, round half up.
    fn by_the_book(space: ColorSpace, (y, u, v): (u16, u16, u16), bits: u32) -> [u8; 4] {
        let (kr, kb) = space.matrix.kr_kb();
        let n = f64::from(1u32 << (bits - 8));
        let full = f64::from((1u32 << bits) - 1);
        let (ey, cb, cr) = match space.range {
            Limited => (
                (f64::from(y) - 16.0 * n) / (219.0 * n),
                (f64::from(u) - 128.0 * n) / (224.0 * n),
                (f64::from(v) - 128.0 * n) / (224.0 * n),
            ),
            Full => {
                let half = f64::from(1u32 << (bits - 1));
                (
                    f64::from(y) / full,
                    (f64::from(u) - half) / full,
                    (f64::from(v) - half) / full,
                )
            }
        };
        let r = ey + 2.0 * (1.0 - kr) * cr;
        let b = ey + 2.0 * (1.0 - kb) * cb;
        let g = (ey - kr * r - kb * b) / (1.0 - kr - kb);
        let level = |c: f64| ((c * 255.0).clamp(0.0, 255.0) + 0.5).floor() as u8;
        [level(r), level(g), level(b), 255]
    }

    const SPACES: [ColorSpace; 6] = [
        ColorSpace::new(Bt601, Limited),
        ColorSpace::new(Bt601, Full),
        ColorSpace::new(Bt709, Limited),
        ColorSpace::new(Bt709, Full),
        ColorSpace::new(Bt2020, Limited),
        ColorSpace::new(Bt2020, Full),
    ];

    #[test]
    fn the_default_is_bt709_limited() {
        assert_eq!(ColorSpace::default(), ColorSpace::new(Bt709, Limited));
    }

    /// Black, white and grey of each range and depth, and colours worked out by hand from the
    /// equations: `(colour space, format, (y, u, v), RGBA8)`.
    #[test]
    fn known_colours() {
        let (nv12, p010) = (VideoFormat::Nv12, VideoFormat::P010);
        let bt709 = ColorSpace::default();
        let jpeg = ColorSpace::new(Bt601, Full);
        let uhd = ColorSpace::new(Bt2020, Limited);
        let full709 = ColorSpace::new(Bt709, Full);
        let grey = |l: u8| [l, l, l, 255];
        let known = [
            (bt709, nv12, (16, 128, 128), grey(0)),
            (bt709, nv12, (235, 128, 128), grey(255)),
            // Below black and above white clamp.
            (bt709, nv12, (0, 128, 128), grey(0)),
            (bt709, nv12, (255, 128, 128), grey(255)),
            // (126 - 16) / 219 * 255 = 128.08.
            (bt709, nv12, (126, 128, 128), grey(128)),
            // BT.709's red: E'Y = 47/219 = 0.21461, E'Cb = -26/224 = -0.11607, E'Cr = 0.5.
            // R' = 0.21461 + 1.5748 * 0.5 = 1.0020 (255); B' = 0.21461 + 1.8556 * -0.11607 =
            // -0.00077 (0); G' = (0.21461 - 0.2126 * 1.0020 - 0.0722 * -0.00077) / 0.7152 =
            // 0.00226, 0.58 levels (1).
            (bt709, nv12, (63, 102, 240), [255, 1, 0, 255]),
            // BT.709's green: E'Y = 0.58904, E'Cb = -0.33036, E'Cr = -0.41964. R' = 0.58904 -
            // 0.66085 (0); B' = 0.58904 - 0.61302 (0); G' = (0.58904 + 0.01527 + 0.00173) /
            // 0.7152 = 0.84778, 216.18 levels (216).
            (bt709, nv12, (145, 54, 34), [0, 216, 0, 255]),
            // BT.601 full range (JPEG): 128 is mid grey.
            (jpeg, nv12, (0, 128, 128), grey(0)),
            (jpeg, nv12, (255, 128, 128), grey(255)),
            (jpeg, nv12, (128, 128, 128), grey(128)),
            // JPEG's red: R = 76 + 1.402 * 127 = 254.05 (254); B = 76 + 1.772 * -43 = -0.196
            // (0); G = 76 + 0.34414 * 43 - 0.71414 * 127 = 0.10 (0).
            (jpeg, nv12, (76, 85, 255), [254, 0, 0, 255]),
            // R = 100 + 1.402 * -38 = 46.72 (47); B = 100 + 1.772 * 22 = 138.98 (139);
            // G = 100 - 0.34414 * 22 - 0.71414 * -38 = 119.57 (120).
            (jpeg, nv12, (100, 150, 90), [47, 120, 139, 255]),
            // P010's 10-bit samples: limited range from 64 to 940 around 512.
            (uhd, p010, (64, 512, 512), grey(0)),
            (uhd, p010, (940, 512, 512), grey(255)),
            // (502 - 64) / 876 * 255 = 127.5 (in f32 too): rounded half up.
            (uhd, p010, (502, 512, 512), grey(128)),
            // E'Y = 236/876 = 0.26941, E'Cb = -112/896 = -0.125, E'Cr = 188/896 = 0.20982.
            // R' = 0.26941 + 1.4746 * 0.20982 = 0.57882 (147.60: 148); B' = 0.26941 + 1.8814 *
            // -0.125 = 0.03424 (8.73: 9); G' = (0.26941 - 0.2627 * 0.57882 - 0.0593 *
            // 0.03424) / 0.678 = 0.17002 (43.36: 43).
            (uhd, p010, (300, 400, 700), [148, 43, 9, 255]),
            (full709, p010, (0, 512, 512), grey(0)),
            (full709, p010, (1023, 512, 512), grey(255)),
            // The 8-bit value of a 10-bit sample is 255 / 1023 of it, not a quarter of it.
            (full709, p010, (514, 512, 512), grey(128)),
        ];
        for (space, format, (y, u, v), want) in known {
            let got = space.rgba8(y, u, v, format);
            assert_eq!(got, want, "{space:?} {format:?} ({y}, {u}, {v})");
        }
    }

    /// Every colour space against the standard's equations in f64, over a grid of samples (in
    /// range and out of it), within 1 per channel: the host's f32 coefficients and float order
    /// lose less than a level.
    #[test]
    fn every_space_follows_the_standard() {
        for space in SPACES {
            for (format, bits, step) in [(VideoFormat::Nv12, 8, 5), (VideoFormat::P010, 10, 19)] {
                let top = (1u16 << bits) - 1;
                let samples: Vec<u16> = (0..=top).step_by(step).chain([top]).collect();
                for &y in &samples {
                    for &u in &samples {
                        for &v in &samples {
                            let got = space.rgba8(y, u, v, format);
                            let want = by_the_book(space, (y, u, v), bits);
                            let close = got.iter().zip(want).all(|(&g, w)| g.abs_diff(w) <= 1);
                            assert!(close, "{space:?} {format:?} {y} {u} {v}: {got:?} {want:?}");
                        }
                    }
                }
            }
        }
    }
}
