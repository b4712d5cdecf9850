//! The texture target queries (`glapi::query::texture_target[_is]`, which registrations and
//! the planes' storage check rely on) on whatever headless GL this machine has, with no CUDA
//! (Mesa's llvmpipe on CI), in a compatibility-profile context as well as the default one:
//! Mesa 22's compatibility profile raises `GL_INVALID_ENUM` for `GL_TEXTURE_TARGET`, where the
//! queries must still answer, and leave no GL error of theirs behind for the application.
//! (Here rather than in `glapi`, which `egl` builds on.)
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::egl::HeadlessConfig;
use crate::egl::test_gl::{any_gl_with, compat_config};
use crate::gl_object::ImageTarget;
use crate::glapi::query::{texture_target, texture_target_is};
use crate::glapi::{GlFns, GlOwner};

/// A texture of `target` (2-D, rectangle or cube map) with storage (one level of 4 x 4),
/// unbound afterwards.
fn texture(fns: &GlFns, target: ImageTarget) -> u32 {
    let mut name = 0;
    let Some(storage) = fns.tex_storage_2d else {
        panic!("no glTexStorage2D in a context asked for 4.3 or later");
    };
    let t = target.gl_enum();
    // SAFETY: a context is current; a valid out-pointer; the name is bound to `t` before its
    // storage is made (glTexStorage2D takes each of these targets), then unbound.
    unsafe {
        (fns.gen_textures)(1, &mut name);
        (fns.bind_texture)(t, name);
        storage(t, 1, gl::RGBA8, 4, 4);
        (fns.bind_texture)(t, 0);
    }
    fns.check("making a test texture").unwrap();
    name
}

/// Each texture's target is found, and asked of each target, in a default and a
/// compatibility-profile context; no query leaves a GL error behind.
#[test]
fn texture_targets_are_found_in_every_profile_with_no_error_left_behind() {
    let test = "texture_targets_are_found_in_every_profile_with_no_error_left_behind";
    for config in [HeadlessConfig::default(), compat_config()] {
        let Some(gl) = any_gl_with(test, &config) else {
            return;
        };
        let (_, fns) = GlOwner::current(test).unwrap();
        let what = format!("GL {:?} on {}", fns.version(), gl.renderer());
        let targets = [
            ImageTarget::Texture2D,
            ImageTarget::Rectangle,
            ImageTarget::CubeMap,
        ];
        for target in targets {
            let name = texture(fns, target);
            if fns.version() >= (4, 5) {
                let found = texture_target(fns, name).unwrap();
                assert_eq!(found, Some(target.gl_enum()), "{what}: {target:?}");
            }
            for other in targets {
                let is = texture_target_is(fns, name, other).unwrap();
                assert_eq!(
                    is,
                    Some(other == target),
                    "{what}: {target:?} asked as {other:?}"
                );
            }
            // SAFETY: a context is current; glGetError takes no arguments.
            let left = unsafe { (fns.get_error)() };
            assert_eq!(
                left,
                gl::NO_ERROR,
                "{what}: {target:?}: a GL error left behind"
            );
            // SAFETY: a context is current; `name` is an unbound texture of it.
            unsafe { (fns.delete_textures)(1, &name) };
        }
        drop(gl);
    }
}
