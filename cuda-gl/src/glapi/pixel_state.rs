//! The GL state that shapes cuda-gl's own pixel transfers (the display target's uploads, an
//! offscreen target's read-back) but belongs to the application: set to GL's neutral values
//! for the transfer and put back after it ([`PixelState`]).
//!
//! What the GL 4.6 specification applies to `glTexSubImage2D` and `glReadPixels` of RGBA or
//! RED colour data, besides the bindings the callers set themselves:
//! - pixel-store state of the direction (`GL_UNPACK_*` or `GL_PACK_*`): swap bytes, LSB first,
//!   row length, skip rows, skip pixels, alignment, image height, skip images;
//! - in a compatibility-profile context, pixel-transfer state (section 8.4.4 of the
//!   compatibility specification): the red, green, blue and alpha scales and biases, colour
//!   mapping (`GL_MAP_COLOR`) and, with the imaging subset (`GL_ARB_imaging`), colour tables,
//!   convolution, the colour matrix with its post-matrix scales and biases, the
//!   post-convolution scales and biases, histogram and minmax (which may also sink the pixels);
//! - on reads, `GL_CLAMP_READ_COLOR`, `GL_PACK_INVERT_MESA` where Mesa offers it, and the pixel
//!   pack buffer binding (unbound: the read goes to client memory).
//!
//! Index, depth and stencil state (`GL_INDEX_SHIFT`, `GL_DEPTH_SCALE`, `GL_MAP_STENCIL`, ...)
//! applies only to those kinds of pixels, which cuda-gl never transfers, so it is left alone.
//! OpenGL ES has no swap-bytes or LSB-first state (nor image height or skip images for
//! packing), no pixel transfer and no read clamp: those are left out there.
//! A core-profile context has none of the compatibility state: there an upload reads only the
//! pixel-store state (a few `glGet` calls, 0.15 µs on llvmpipe), and a read also looks for
//! `GL_MESA_pack_invert` among the extensions (about 30 µs there, beside a read that waits for
//! GL anyway). In a compatibility context the scan of `GL_EXTENSIONS` for the imaging subset
//! makes it about 4 µs either way.

use super::table::{GlFns, have};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use std::ffi::CStr;

/// Which way a transfer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Client memory or a pixel unpack buffer into GL (`glTexSubImage2D`).
    Unpack,
    /// GL into client memory or a pixel pack buffer (`glReadPixels`).
    Pack,
}

// Compatibility-profile and imaging-subset enums, absent from the `gl` crate's core bindings
// (values from the Khronos registry).
const MAP_COLOR: u32 = 0x0D10;
const MATRIX_MODE: u32 = 0x0BA0;
/// `GL_COLOR` as a matrix mode: the colour matrix.
const COLOR_MATRIX_MODE: u32 = 0x1800;
const COLOR_MATRIX: u32 = 0x80B1;
const PACK_INVERT_MESA: u32 = 0x8758;
const COMPATIBILITY_PROFILE_BIT: i32 = 0x2;
const FORWARD_COMPATIBLE_BIT: i32 = 0x1;

/// The scales and biases of the colour components, with their neutral values.
const SCALE_BIAS: [(u32, f32); 8] = [
    (0x0D14, 1.0), // GL_RED_SCALE
    (0x0D15, 0.0), // GL_RED_BIAS
    (0x0D18, 1.0), // GL_GREEN_SCALE
    (0x0D19, 0.0), // GL_GREEN_BIAS
    (0x0D1A, 1.0), // GL_BLUE_SCALE
    (0x0D1B, 0.0), // GL_BLUE_BIAS
    (0x0D1C, 1.0), // GL_ALPHA_SCALE
    (0x0D1D, 0.0), // GL_ALPHA_BIAS
];

/// The imaging subset's post-convolution and post-colour-matrix scales and biases, with their
/// neutral values: each the red component's, which the green, blue and alpha ones follow.
const IMAGING_SCALE_BIAS: [(u32, f32); 4] = [
    (0x801C, 1.0), // GL_POST_CONVOLUTION_RED_SCALE
    (0x8020, 0.0), // GL_POST_CONVOLUTION_RED_BIAS
    (0x80B4, 1.0), // GL_POST_COLOR_MATRIX_RED_SCALE
    (0x80B8, 0.0), // GL_POST_COLOR_MATRIX_RED_BIAS
];

/// The imaging subset's stages, each disabled for the transfer.
const IMAGING_STAGES: [u32; 8] = [
    0x80D0, // GL_COLOR_TABLE
    0x8010, // GL_CONVOLUTION_1D
    0x8011, // GL_CONVOLUTION_2D
    0x8012, // GL_SEPARABLE_2D
    0x80D1, // GL_POST_CONVOLUTION_COLOR_TABLE
    0x80D2, // GL_POST_COLOR_MATRIX_COLOR_TABLE
    0x8024, // GL_HISTOGRAM
    0x802E, // GL_MINMAX
];

const IDENTITY: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// The pixel-store parameters, unpacking's and packing's, with their neutral values: tightly
/// packed rows, nothing skipped, no byte swapping.
const STORE: [(u32, u32, i32); 8] = [
    (gl::UNPACK_SWAP_BYTES, gl::PACK_SWAP_BYTES, 0),
    (gl::UNPACK_LSB_FIRST, gl::PACK_LSB_FIRST, 0),
    (gl::UNPACK_ROW_LENGTH, gl::PACK_ROW_LENGTH, 0),
    (gl::UNPACK_SKIP_ROWS, gl::PACK_SKIP_ROWS, 0),
    (gl::UNPACK_SKIP_PIXELS, gl::PACK_SKIP_PIXELS, 0),
    (gl::UNPACK_ALIGNMENT, gl::PACK_ALIGNMENT, 1),
    (gl::UNPACK_IMAGE_HEIGHT, gl::PACK_IMAGE_HEIGHT, 0),
    (gl::UNPACK_SKIP_IMAGES, gl::PACK_SKIP_IMAGES, 0),
];

/// The application's values of what [`PixelState::neutral`] changed, put back by
/// [`PixelState::restore`]. Only what differed from the neutral value is recorded (and set).
#[derive(Debug, Default)]
#[must_use = "the application's state is put back by `restore`"]
pub(crate) struct PixelState {
    /// Pixel-store parameters (and `GL_PACK_INVERT_MESA`), each with its old value.
    store: Vec<(u32, i32)>,
    /// Pixel-transfer floats (scales and biases), each with its old value.
    floats: Vec<(u32, f32)>,
    /// `GL_MAP_COLOR` was on.
    map_color: bool,
    /// Imaging stages that were enabled.
    stages: Vec<u32>,
    /// The colour matrix, when it was not the identity, and the matrix mode.
    color_matrix: Option<([f32; 16], i32)>,
    /// `GL_CLAMP_READ_COLOR`'s old value.
    clamp_read: Option<i32>,
    /// The pixel pack buffer the application had bound (a read goes to client memory).
    pack_buffer: Option<u32>,
}

/// What a context has of the state above.
#[derive(Debug, Clone, Copy)]
struct Has {
    /// Compatibility-profile pixel-transfer state.
    transfer: bool,
    /// The imaging subset (in a compatibility context).
    imaging: bool,
    /// `glClampColor` (OpenGL 3.0).
    clamp_read: bool,
    /// OpenGL ES (wgpu's GL backend makes ES contexts): no swap-bytes or LSB-first state, and
    /// no image height or skip images for packing.
    es: bool,
}

/// Whether pixel-store parameter `name` exists in OpenGL ES 3.
fn in_es(name: u32) -> bool {
    !matches!(
        name,
        gl::UNPACK_SWAP_BYTES
            | gl::UNPACK_LSB_FIRST
            | gl::PACK_SWAP_BYTES
            | gl::PACK_LSB_FIRST
            | gl::PACK_IMAGE_HEIGHT
            | gl::PACK_SKIP_IMAGES
    )
}

impl PixelState {
    /// Reads the state that applies to a transfer in `direction` in the current context (of
    /// `fns`) and sets what differs from GL's neutral values to them; for [`Direction::Pack`]
    /// also unbinds the pixel pack buffer, so that a read writes client memory.
    ///
    /// # Errors
    /// [`Error::MissingGlFunction`] when the context has state to neutralise but the platform
    /// gave no entry point to set it (`glPixelTransferf`, `glMatrixMode`, ...): nothing is
    /// left changed then.
    pub(crate) fn neutral(fns: &GlFns, direction: Direction) -> Result<PixelState> {
        let has = Has::query(fns);
        let mut state = PixelState::default();
        match state.neutralise(fns, direction, has) {
            Ok(()) => Ok(state),
            Err(e) => {
                state.restore(fns);
                Err(e)
            }
        }
    }

    fn neutralise(&mut self, fns: &GlFns, direction: Direction, has: Has) -> Result<()> {
        for (unpack, pack, neutral) in STORE {
            let name = match direction {
                Direction::Unpack => unpack,
                Direction::Pack => pack,
            };
            // Every parameter is one of OpenGL 1.2 and later, and of OpenGL ES 3 unless skipped.
            if !has.es || in_es(name) {
                self.neutral_store(fns, name, neutral);
            }
        }
        if direction == Direction::Pack {
            let mut bound = 0;
            // SAFETY: a valid query since OpenGL 2.1 and in ES 3; a valid out-pointer. Unbound,
            // GL takes a read's pointer as client memory, not as an offset into that buffer.
            unsafe { (fns.get_integerv)(gl::PIXEL_PACK_BUFFER_BINDING, &mut bound) };
            if bound != 0 {
                // SAFETY: binding 0 is always valid.
                unsafe { (fns.bind_buffer)(gl::PIXEL_PACK_BUFFER, 0) };
                self.pack_buffer = Some(bound.max(0) as u32);
            }
            if has.clamp_read {
                let mut old = gl::FIXED_ONLY as i32;
                // SAFETY: GL_CLAMP_READ_COLOR is a valid query since OpenGL 3.0 (checked);
                // a valid out-pointer.
                unsafe { (fns.get_integerv)(gl::CLAMP_READ_COLOR, &mut old) };
                if old != gl::FIXED_ONLY as i32 {
                    let clamp = have(fns.clamp_color, "glClampColor")?;
                    // SAFETY: a valid target and value.
                    unsafe { clamp(gl::CLAMP_READ_COLOR, gl::FIXED_ONLY) };
                    self.clamp_read = Some(old);
                }
            }
            if has_extension(fns, has, "GL_MESA_pack_invert") {
                self.neutral_store(fns, PACK_INVERT_MESA, 0);
            }
        }
        if !has.transfer {
            return Ok(());
        }
        let mut map_color = 0;
        // SAFETY: a compatibility context (checked), where GL_MAP_COLOR is a valid query.
        unsafe { (fns.get_integerv)(MAP_COLOR, &mut map_color) };
        if map_color != 0 {
            let set = have(fns.pixel_transferi, "glPixelTransferi")?;
            // SAFETY: a compatibility context; a valid parameter and value.
            unsafe { set(MAP_COLOR, 0) };
            self.map_color = true;
        }
        let imaging = IMAGING_SCALE_BIAS
            .into_iter()
            .filter(|_| has.imaging)
            .flat_map(|(red, neutral)| (red..red + 4).map(move |name| (name, neutral)));
        for (name, neutral) in SCALE_BIAS.into_iter().chain(imaging) {
            let mut old = neutral;
            // SAFETY: a compatibility context (with the imaging subset for its parameters),
            // where each is a valid query of one float; a valid out-pointer.
            unsafe { (fns.get_floatv)(name, &mut old) };
            if old != neutral {
                let set = have(fns.pixel_transferf, "glPixelTransferf")?;
                // SAFETY: as above; the neutral values are GL's initial ones.
                unsafe { set(name, neutral) };
                self.floats.push((name, old));
            }
        }
        if !has.imaging {
            return Ok(());
        }
        for stage in IMAGING_STAGES {
            // SAFETY: the imaging subset's capabilities, which the context has.
            if unsafe { (fns.is_enabled)(stage) } != 0 {
                // SAFETY: as above.
                unsafe { (fns.disable)(stage) };
                self.stages.push(stage);
            }
        }
        let mut matrix = IDENTITY;
        // SAFETY: the imaging subset's query of 16 floats; `matrix` holds 16.
        unsafe { (fns.get_floatv)(COLOR_MATRIX, matrix.as_mut_ptr()) };
        if matrix != IDENTITY {
            let mode = have(fns.matrix_mode, "glMatrixMode")?;
            let identity = have(fns.load_identity, "glLoadIdentity")?;
            have(fns.load_matrixf, "glLoadMatrixf")?;
            let mut old_mode = 0;
            // SAFETY: a compatibility context with the imaging subset, where the colour matrix
            // is a matrix mode; a valid out-pointer.
            unsafe {
                (fns.get_integerv)(MATRIX_MODE, &mut old_mode);
                mode(COLOR_MATRIX_MODE);
                identity();
                mode(old_mode as u32);
            }
            self.color_matrix = Some((matrix, old_mode));
        }
        Ok(())
    }

    /// Sets pixel-store parameter `name`, one the current context (of `fns`) has, to `neutral`
    /// where it differs, and records its old value.
    fn neutral_store(&mut self, fns: &GlFns, name: u32, neutral: i32) {
        let mut old = neutral;
        // SAFETY: a context is current (the callers checked the owner) and has the parameter
        // (the caller's check); a valid out-pointer.
        unsafe { (fns.get_integerv)(name, &mut old) };
        if old != neutral {
            // SAFETY: as above; the neutral values are valid for these parameters.
            unsafe { (fns.pixel_storei)(name, neutral) };
            self.store.push((name, old));
        }
    }

    /// Puts back what [`neutral`](Self::neutral) changed, in the context it was read in (of
    /// `fns`, current).
    pub(crate) fn restore(self, fns: &GlFns) {
        if let Some(buffer) = self.pack_buffer {
            // SAFETY: a context is current; the name was read from its binding.
            unsafe { (fns.bind_buffer)(gl::PIXEL_PACK_BUFFER, buffer) };
        }
        for (name, old) in self.store {
            // SAFETY: a context is current; the value was read from it for this parameter.
            unsafe { (fns.pixel_storei)(name, old) };
        }
        if let (Some(old), Some(clamp)) = (self.clamp_read, fns.clamp_color) {
            // SAFETY: as above.
            unsafe { clamp(gl::CLAMP_READ_COLOR, old as u32) };
        }
        if let (true, Some(set)) = (self.map_color, fns.pixel_transferi) {
            // SAFETY: as above (a compatibility context, where it was read).
            unsafe { set(MAP_COLOR, 1) };
        }
        if let Some(set) = fns.pixel_transferf {
            for (name, old) in self.floats {
                // SAFETY: as above.
                unsafe { set(name, old) };
            }
        }
        for stage in self.stages {
            // SAFETY: a capability that was enabled in this context.
            unsafe { (fns.enable)(stage) };
        }
        if let (Some((matrix, old_mode)), Some(mode), Some(load)) =
            (self.color_matrix, fns.matrix_mode, fns.load_matrixf)
        {
            // SAFETY: a compatibility context with the imaging subset (where the matrix was
            // read); `matrix` holds 16 floats; the mode was read from the context.
            unsafe {
                mode(COLOR_MATRIX_MODE);
                load(matrix.as_ptr());
                mode(old_mode as u32);
            }
        }
    }
}

impl Has {
    /// What the current context (of `fns`) has, from its version, profile and flags: queries
    /// that raise no GL error in any context, so that an application's debug callback sees
    /// none of cuda-gl's probing.
    fn query(fns: &GlFns) -> Has {
        // SAFETY: glGetString returns null or a static NUL-terminated string.
        let version = unsafe { (fns.get_string)(gl::VERSION) };
        let (es, major, minor) = if version.is_null() {
            (false, 0, 0)
        } else {
            // SAFETY: non-null, NUL-terminated (above).
            let text = unsafe { CStr::from_ptr(version.cast()) }.to_string_lossy();
            let (major, minor) = super::table::parse_version(&text);
            (text.starts_with("OpenGL ES"), major, minor)
        };
        let integer = |name| {
            let mut value = 0;
            // SAFETY: the callers ask only queries valid at this version; a valid out-pointer.
            unsafe { (fns.get_integerv)(name, &mut value) };
            value
        };
        let transfer = match (major, minor) {
            _ if es => false,
            (0..=2, _) => true,
            (3, 0) => integer(gl::CONTEXT_FLAGS) & FORWARD_COMPATIBLE_BIT == 0,
            (3, 1) => fns.has_extension("GL_ARB_compatibility"),
            _ => integer(gl::CONTEXT_PROFILE_MASK) & COMPATIBILITY_PROFILE_BIT != 0,
        };
        let mut has = Has {
            transfer,
            imaging: false,
            clamp_read: major >= 3 && !es,
            es,
        };
        has.imaging = transfer && has_extension(fns, has, "GL_ARB_imaging");
        has
    }
}

/// Whether the current context has extension `name`: from the one `GL_EXTENSIONS` string in a
/// compatibility context (one call, no copy), else by index.
fn has_extension(fns: &GlFns, has: Has, name: &str) -> bool {
    if !has.transfer {
        return fns.has_extension(name);
    }
    // SAFETY: glGetString(GL_EXTENSIONS) is valid in a compatibility context; it returns null
    // or a static NUL-terminated string.
    let all = unsafe { (fns.get_string)(gl::EXTENSIONS) };
    if all.is_null() {
        return false;
    }
    // SAFETY: non-null, NUL-terminated (above).
    let all = unsafe { CStr::from_ptr(all.cast()) }.to_bytes();
    all.split(|&b| b == b' ').any(|e| e == name.as_bytes())
}
