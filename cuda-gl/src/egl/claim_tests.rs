//! The claim registry (`glapi::claim`) against textures that another owner deletes, on whatever
//! headless GL this machine has (Mesa's llvmpipe here, NVIDIA's GL on a GPU host), with no
//! CUDA: an egui image's texture, claimed with its label, is deleted by egui's painter when the
//! application frees its id, and GL gives the name to the next texture made.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::test_gl::any_gl;
use crate::gl_object::{ImageTarget, Kind};
use crate::glapi::claim::{claim, claim_labelled_texture};
use crate::glapi::{GlFns, GlOwner, label};

const TEXTURE: Kind = Kind::Image(ImageTarget::Texture2D);

/// A new 2-D texture of 4 x 4 RGBA8 texels, labelled `text` when given.
fn texture(fns: &GlFns, text: Option<&str>) -> u32 {
    // SAFETY: a GL context is current; no unpack buffer is bound (`new_rgba8_texture`'s 1);
    // the 2-D texture binding is put back to none.
    let name = unsafe {
        let name = fns.new_rgba8_texture(4, 4);
        (fns.bind_texture)(gl::TEXTURE_2D, 0);
        name
    };
    if let Some(text) = text {
        label::label(fns, gl::TEXTURE, name, text).unwrap();
    }
    name
}

fn delete(fns: &GlFns, name: u32) {
    // SAFETY: a GL context is current; the test's own texture, deleted once.
    unsafe { (fns.delete_textures)(1, &name) };
}

/// egui deletes the image's texture (the application freed its id) before the image's next
/// update: the name GL hands out again, to a texture of the application's (or to a display
/// target's), can be claimed for a registration at once. The old registry refused it as
/// registered until the image noticed (`Error::AlreadyRegistered`; a display target made there
/// leaked its texture), for as long as the application kept the image without updating it.
#[test]
fn a_labelled_texture_deleted_by_its_other_owner_leaves_its_name_free() {
    let test = "a_labelled_texture_deleted_by_its_other_owner_leaves_its_name_free";
    let Some(_gl) = any_gl(test) else { return };
    let (owner, fns) = GlOwner::current(test).unwrap();
    let text = label::text("egui", u64::MAX - 1);
    let given = texture(fns, Some(&text));
    let held = claim_labelled_texture(given, owner, &text).expect("a fresh texture's claim");
    // While the texture carries the label, the claim stands.
    assert!(claim(TEXTURE, given, owner).is_none(), "a live claim taken");
    delete(fns, given);
    // The application's next texture, with the freed name when GL hands it out again.
    let mut made = Vec::new();
    for _ in 0..64 {
        let t = texture(fns, None);
        made.push(t);
        if t == given {
            break;
        }
    }
    let taken = claim(TEXTURE, given, owner);
    assert!(
        taken.is_some(),
        "texture {given}, deleted by its other owner, still refused as claimed"
    );
    // The stale claim's end leaves the new one alone; the new one's end frees the name.
    drop(held);
    assert!(
        claim(TEXTURE, given, owner).is_none(),
        "the new claim ended"
    );
    drop(taken);
    assert!(
        claim(TEXTURE, given, owner).is_some(),
        "the name stayed claimed"
    );
    made.into_iter().for_each(|t| delete(fns, t));
}

/// A texture that merely shares a name with a claimed buffer, or a claim with no label, is not
/// taken over: only a labelled texture's claim ends when its label is gone.
#[test]
fn unlabelled_claims_stand_after_a_deletion() {
    let test = "unlabelled_claims_stand_after_a_deletion";
    let Some(_gl) = any_gl(test) else { return };
    let (owner, fns) = GlOwner::current(test).unwrap();
    let t = texture(fns, None);
    let held = claim(TEXTURE, t, owner).expect("a fresh texture's claim");
    delete(fns, t);
    assert!(
        claim(TEXTURE, t, owner).is_none(),
        "an unlabelled claim taken"
    );
    drop(held);
}
