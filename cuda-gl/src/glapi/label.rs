//! Object labels (`glObjectLabel`, OpenGL 4.3 or `GL_KHR_debug`): how cuda-gl marks GL objects
//! it makes, so that it can tell them from another object that got the same name. A GL name
//! alone names no object for good: once the application deletes one (a call allowed on any
//! name of its share group), GL hands the name to the next object made, and only the label
//! cuda-gl gave its own object is gone with it. The owner check's canaries
//! ([`current`](super::current)) and the display target's objects are told apart this way.

use super::table::{GlFns, have};
use crate::error::Result;
use std::sync::OnceLock;

/// The label of cuda-gl's object `n` of kind `what` (at most 8 bytes: `display`, `context`,
/// `group`): `cuda-gl <what> <nonce>-<n>`, where the nonce is a number of this process's own,
/// drawn at random once, so that an application cannot give its own object a cuda-gl label by
/// accident, nor one of another process's on purpose without a search of 2^48 values. At most
/// 8 + 8 + 12 + 1 + 16 = 45 bytes ([`is_labelled`] reads back 47).
pub(crate) fn text(what: &str, n: u64) -> String {
    format!("cuda-gl {what} {:012x}-{n:x}", nonce() & 0xffff_ffff_ffff)
}

/// This process's random number, the same for every label: std's `RandomState` (seeded from
/// the OS's randomness) over the time and the process id.
fn nonce() -> u64 {
    static NONCE: OnceLock<u64> = OnceLock::new();
    *NONCE.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        hasher.write_u128(now.map_or(0, |d| d.as_nanos()));
        hasher.write_u32(std::process::id());
        hasher.finish()
    })
}

/// Whether the current context has object labels (OpenGL 4.3 or `GL_KHR_debug`). The version
/// comes from `GL_VERSION`, which every context answers without an error (a context that got
/// a dead one's handle may be older than 3.0, where `GL_MAJOR_VERSION` raises one); the
/// extension list is read, from 3.0 on, only before 4.3.
pub(crate) fn has_labels(fns: &GlFns) -> bool {
    let version = fns.version_string();
    version >= (4, 3) || (version >= (3, 0) && fns.has_extension("GL_KHR_debug"))
}

/// Labels object `name` of `identifier` (`GL_TEXTURE`, `GL_BUFFER`, `GL_PROGRAM`, ...) with
/// `text`.
///
/// # Errors
/// [`Error::MissingGlFunction`](crate::Error::MissingGlFunction) without `glObjectLabel`.
pub(crate) fn label(fns: &GlFns, identifier: u32, name: u32, text: &str) -> Result<()> {
    let label = have(fns.object_label, "glObjectLabel")?;
    // SAFETY: a context is current and `name` is an object of `identifier` in it (the callers
    // just made it); the pointer and length describe `text`.
    unsafe { label(identifier, name, text.len() as i32, text.as_ptr()) };
    Ok(())
}

/// Whether the current context (of `fns`) has the object `name` of label namespace `identifier`
/// labelled `want`; `is` (`glIsTexture`, `glIsBuffer`, ...) asks whether the name is such an
/// object first, so that the label query raises no error. False without `glGetObjectLabel`.
/// For a context known to have object labels: a caller that is not sure (a context that merely
/// got the owner's handle may lack them) asks [`has_labels`] first (the version costs two
/// queries; the extension list is read only before OpenGL 4.3).
pub(crate) fn is_labelled(
    fns: &GlFns,
    identifier: u32,
    name: u32,
    is: unsafe extern "system" fn(u32) -> u8,
    want: &str,
) -> bool {
    let Some(get_label) = fns.get_object_label else {
        return false;
    };
    // SAFETY: a context is current; the glIs* queries change no state and raise no error.
    if unsafe { is(name) } != gl::TRUE {
        return false;
    }
    let mut buf = [0u8; 48];
    let mut len = 0;
    // SAFETY: `name` is an object of `identifier` in the current context (above), so GL raises
    // no error; `buf` has room for the stated size, `len` is a valid out-pointer.
    unsafe {
        get_label(
            identifier,
            name,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr(),
        )
    };
    usize::try_from(len).is_ok_and(|n| buf.get(..n) == Some(want.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_fit_and_carry_the_process_number() {
        let (first, last) = (text("display", 1), text("context", u64::MAX));
        assert!(last.len() <= 47, "{last}");
        let number = format!("{:012x}", nonce() & 0xffff_ffff_ffff);
        assert!(
            first.contains(&number) && last.contains(&number),
            "{first}, {last}"
        );
        assert_ne!(first, text("display", 2));
        assert_ne!(text("group", 1), text("context", 1));
        assert_eq!(nonce(), nonce(), "one number per process");
    }
}
