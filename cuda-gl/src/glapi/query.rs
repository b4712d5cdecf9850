//! Questions to GL, asked to check a registration or to explain a refusal, through cuda-gl's
//! own table: they need nothing of the application's GL loader. None leaves GL state changed
//! or a GL error pending.

use super::table::{GlFns, have};
use crate::error::{Error, Result};
use crate::gl_object::{ImageTarget, Kind};

/// Whether the current context is OpenGL 4.5 or newer (direct state access).
fn has_dsa(fns: &GlFns) -> bool {
    fns.version() >= (4, 5)
}

/// Whether `name` is an object of `kind`: a texture, a renderbuffer or a buffer.
pub(crate) fn exists(fns: &GlFns, kind: Kind, name: u32) -> bool {
    let is = match kind {
        Kind::Buffer => fns.is_buffer,
        Kind::Image(_) => fns.is_texture,
        Kind::Renderbuffer => fns.is_renderbuffer,
    };
    // SAFETY: a GL context is current (callers' contract); glIsBuffer, glIsTexture and
    // glIsRenderbuffer change no state.
    unsafe { is(name) == gl::TRUE }
}

/// The binding query of each target a texture can be bound to for the probe.
fn binding_query(target: ImageTarget) -> Option<u32> {
    Some(match target {
        ImageTarget::Texture2D => gl::TEXTURE_BINDING_2D,
        ImageTarget::Rectangle => gl::TEXTURE_BINDING_RECTANGLE,
        ImageTarget::Texture2DArray => gl::TEXTURE_BINDING_2D_ARRAY,
        ImageTarget::Texture3D => gl::TEXTURE_BINDING_3D,
        ImageTarget::CubeMap => gl::TEXTURE_BINDING_CUBE_MAP,
    })
}

/// Whether texture `name` was created with `target`.
///
/// With OpenGL 4.5 it asks `GL_TEXTURE_TARGET`. Before 4.5, or where a 4.5 context does not
/// answer that query (Mesa 22's compatibility profile), it binds the texture to `target` on the
/// active unit, where GL raises `GL_INVALID_OPERATION` for a texture of another target, and
/// binds the unit's previous texture back ([`bind_probe`]). `Ok(None)` when `name` is not a
/// texture.
///
/// # Errors
/// [`Error::MissingGlFunction`] for a 4.5 context whose platform lacks
/// `glGetTextureParameteriv`.
pub(crate) fn texture_target_is(
    fns: &GlFns,
    name: u32,
    target: ImageTarget,
) -> Result<Option<bool>> {
    if !exists(fns, Kind::Image(ImageTarget::Texture2D), name) {
        return Ok(None);
    }
    if has_dsa(fns)
        && let Some(asked) = asked_target(fns, name)?
    {
        return Ok(Some(asked == Some(target.gl_enum())));
    }
    Ok(Some(bind_probe(fns, name, target)))
}

/// The target texture `name` was created with; `Ok(None)` when it is not a texture, or the
/// context is older than 4.5. Asked as `GL_TEXTURE_TARGET`; where a 4.5 context does not answer
/// that query (Mesa 22's compatibility profile), found by binding the texture to each target
/// cuda-gl knows ([`bind_probe`]).
///
/// # Errors
/// [`Error::MissingGlFunction`] for a 4.5 context whose platform lacks
/// `glGetTextureParameteriv`.
pub(crate) fn texture_target(fns: &GlFns, name: u32) -> Result<Option<u32>> {
    if !exists(fns, Kind::Image(ImageTarget::Texture2D), name) || !has_dsa(fns) {
        return Ok(None);
    }
    if let Some(asked) = asked_target(fns, name)? {
        return Ok(asked);
    }
    let targets = [
        ImageTarget::Texture2D,
        ImageTarget::Rectangle,
        ImageTarget::Texture2DArray,
        ImageTarget::Texture3D,
        ImageTarget::CubeMap,
    ];
    Ok(targets
        .into_iter()
        .find(|&t| bind_probe(fns, name, t))
        .map(ImageTarget::gl_enum))
}

/// `GL_TEXTURE_TARGET` of texture `name` (an OpenGL 4.5 context, `name` a texture of it):
/// `Some` of GL's answer (`None` inside for a texture never bound), or `None` when GL refused
/// the query and wrote nothing (Mesa 22's compatibility profile raises `GL_INVALID_ENUM`); the
/// error it raised is taken then, with any the application left pending (each logged).
///
/// # Errors
/// [`Error::MissingGlFunction`] without `glGetTextureParameteriv`.
fn asked_target(fns: &GlFns, name: u32) -> Result<Option<Option<u32>>> {
    let get = fns
        .get_texture_parameteriv
        .ok_or(Error::MissingGlFunction {
            function: "glGetTextureParameteriv",
        })?;
    // No target's enum: left as it is when GL refuses the query.
    const UNANSWERED: i32 = i32::MIN;
    let mut target = UNANSWERED;
    // SAFETY: a GL 4.5 context is current (callers' contract), `name` is a texture object of
    // it, and GL_TEXTURE_TARGET is a valid query for any texture object.
    unsafe { get(name, gl::TEXTURE_TARGET, &mut target) };
    if target == UNANSWERED {
        fns.take_pending_errors("glGetTextureParameteriv(GL_TEXTURE_TARGET)");
        return Ok(None);
    }
    Ok(Some(u32::try_from(target).ok().filter(|&t| t != 0)))
}

/// Whether texture `name` binds to `target` (it was created with it, or never bound): bound on
/// the active unit, GL's error asked, the unit's previous texture of `target` bound back. The
/// errors the application left pending are taken first (each logged), so that GL's answer is
/// the bind's.
fn bind_probe(fns: &GlFns, name: u32, target: ImageTarget) -> bool {
    let Some(binding) = binding_query(target) else {
        return false;
    };
    fns.take_pending_errors("glBindTexture (asking a texture's target)");
    let mut previous = 0;
    // SAFETY: a context is current; valid out-pointer; `name` is a texture (the callers asked);
    // binding it to a target it was not created with only raises GL_INVALID_OPERATION, and the
    // unit's previous texture of `target` is bound back.
    let matches = unsafe {
        (fns.get_integerv)(binding, &mut previous);
        (fns.bind_texture)(target.gl_enum(), name);
        let matches = (fns.get_error)() == gl::NO_ERROR;
        (fns.bind_texture)(target.gl_enum(), previous.max(0) as u32);
        matches
    };
    fns.drain_errors();
    matches
}

/// The size in bytes of buffer `name`'s storage (OpenGL 4.5), `None` where it cannot be asked.
pub(crate) fn buffer_size(fns: &GlFns, name: u32) -> Option<i64> {
    // SAFETY: a GL context is current; glIsBuffer changes no state.
    let is_buffer = unsafe { (fns.is_buffer)(name) } == gl::TRUE;
    let get = fns.get_named_buffer_parameteri64v?;
    if !is_buffer || !has_dsa(fns) {
        return None;
    }
    let mut size = -1;
    // SAFETY: a GL 4.5 context is current, `name` is a buffer object of it, and
    // GL_BUFFER_SIZE is a valid query for any buffer object.
    unsafe { get(name, gl::BUFFER_SIZE, &mut size) };
    (size >= 0).then_some(size)
}

/// What GL says of a 2-D texture's storage: its level 0, and whether the storage is immutable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextureStorage {
    /// Level 0's width and height in texels.
    pub(crate) size: (u32, u32),
    /// Level 0's internal format (`GL_R8`, ...).
    pub(crate) internal_format: u32,
    /// For immutable storage (`glTexStorage2D`, or a texture view), its number of levels;
    /// `None` for mutable storage (`glTexImage2D`), which any later GL call may respecify.
    pub(crate) immutable_levels: Option<u32>,
    /// Whether GL could say if the storage is immutable: not on a context below GL 4.2
    /// without ARB_texture_storage (which has no immutable storage, nor glTexStorage2D).
    pub(crate) immutability_known: bool,
}

/// The storage of 2-D texture `name` (see [`TextureStorage`]); `Ok(None)` when `name` is not a
/// texture of the current context. With OpenGL 4.5 the texture is asked by name (no bind, and
/// the application's pending GL errors stay pending); before 4.5 it is bound to
/// `GL_TEXTURE_2D` on the active unit for the queries, the unit's previous 2-D texture bound
/// back, and the pending GL errors taken (each logged as a warning).
///
/// # Errors
/// [`Error::GlCall`] when GL refuses the queries (a texture of another target than
/// `GL_TEXTURE_2D`).
pub(crate) fn texture_2d_storage(fns: &GlFns, name: u32) -> Result<Option<TextureStorage>> {
    if !exists(fns, Kind::Image(ImageTarget::Texture2D), name) {
        return Ok(None);
    }
    // A 4.5 context that cannot answer GL_TEXTURE_TARGET (Mesa 22's llvmpipe raises
    // GL_INVALID_ENUM, which `asked_target` takes) is asked through the bind.
    if let (true, Some(get), Some(get_level)) = (
        has_dsa(fns),
        fns.get_texture_parameteriv,
        fns.get_texture_level_parameteriv,
    ) && let Some(storage) = texture_2d_storage_dsa(fns, name, get, get_level)?
    {
        return Ok(Some(storage));
    }
    let get_level = have(fns.get_tex_level_parameteriv, "glGetTexLevelParameteriv")?;
    // The application's pending GL errors are consumed here (`VideoPlanes::new` says so),
    // so that the checks below see only the queries' own.
    fns.take_pending_errors("glBindTexture (asking a texture's storage)");
    let (mut previous, mut immutable, mut levels) = (0, 0, 0);
    let (mut width, mut height, mut format) = (0, 0, 0);
    // SAFETY: a context is current (callers' contract); valid out-pointers; `name` is a texture
    // (above): binding it to a target it was not made with only raises GL_INVALID_OPERATION,
    // which the check below reports; the unit's previous 2-D texture is bound back.
    let (bound, immutable_known) = unsafe {
        (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut previous);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        let bound = (fns.get_error)() == gl::NO_ERROR;
        get_level(gl::TEXTURE_2D, 0, gl::TEXTURE_WIDTH, &mut width);
        get_level(gl::TEXTURE_2D, 0, gl::TEXTURE_HEIGHT, &mut height);
        get_level(gl::TEXTURE_2D, 0, gl::TEXTURE_INTERNAL_FORMAT, &mut format);
        // GL 4.2 (ARB_texture_storage): an older context raises GL_INVALID_ENUM, and has no
        // immutable storage to report.
        (fns.get_tex_parameteriv)(gl::TEXTURE_2D, gl::TEXTURE_IMMUTABLE_FORMAT, &mut immutable);
        let immutable_known = (fns.get_error)() == gl::NO_ERROR;
        if immutable_known && immutable != 0 {
            (fns.get_tex_parameteriv)(gl::TEXTURE_2D, gl::TEXTURE_IMMUTABLE_LEVELS, &mut levels);
        }
        (fns.bind_texture)(gl::TEXTURE_2D, previous.max(0) as u32);
        (bound, immutable_known)
    };
    fns.drain_errors();
    if !bound {
        return Err(Error::GlCall {
            call: "glBindTexture(GL_TEXTURE_2D, ...) (asking a texture's storage)",
            code: gl::INVALID_OPERATION,
        });
    }
    let count = |v: i32| u32::try_from(v).unwrap_or(0);
    Ok(Some(TextureStorage {
        size: (count(width), count(height)),
        internal_format: count(format),
        immutable_levels: (immutable_known && immutable != 0).then(|| count(levels)),
        immutability_known: immutable_known,
    }))
}

/// [`texture_2d_storage`] in an OpenGL 4.5 context: asked of the texture by name, with no bind
/// and no error check (every query is valid for a texture object of a 4.5 context), so the
/// application's pending GL errors stay pending for its own `glGetError`. `Ok(None)` when GL
/// did not answer `GL_TEXTURE_TARGET` ([`asked_target`]): the caller asks through a bind
/// instead.
fn texture_2d_storage_dsa(
    fns: &GlFns,
    name: u32,
    get: GetTextureParameter,
    get_level: GetTextureLevelParameter,
) -> Result<Option<TextureStorage>> {
    let Some(target) = asked_target(fns, name)? else {
        return Ok(None);
    };
    if target != Some(gl::TEXTURE_2D) {
        // What the bind of the older path reports for a texture of another target.
        return Err(Error::GlCall {
            call: "glBindTexture(GL_TEXTURE_2D, ...) (asking a texture's storage)",
            code: gl::INVALID_OPERATION,
        });
    }
    let (mut immutable, mut levels) = (0, 0);
    let (mut width, mut height, mut format) = (0, 0, 0);
    // SAFETY: as above; `name` is a 2-D texture (asked just above), every parameter is a valid
    // query for one, and the out-pointers are valid.
    unsafe {
        get_level(name, 0, gl::TEXTURE_WIDTH, &mut width);
        get_level(name, 0, gl::TEXTURE_HEIGHT, &mut height);
        get_level(name, 0, gl::TEXTURE_INTERNAL_FORMAT, &mut format);
        get(name, gl::TEXTURE_IMMUTABLE_FORMAT, &mut immutable);
        if immutable != 0 {
            get(name, gl::TEXTURE_IMMUTABLE_LEVELS, &mut levels);
        }
    }
    let count = |v: i32| u32::try_from(v).unwrap_or(0);
    Ok(Some(TextureStorage {
        size: (count(width), count(height)),
        internal_format: count(format),
        immutable_levels: (immutable != 0).then(|| count(levels)),
        immutability_known: true,
    }))
}

/// `glGetTextureParameteriv`.
type GetTextureParameter = unsafe extern "system" fn(u32, u32, *mut i32);
/// `glGetTextureLevelParameteriv`.
type GetTextureLevelParameter = unsafe extern "system" fn(u32, i32, u32, *mut i32);
