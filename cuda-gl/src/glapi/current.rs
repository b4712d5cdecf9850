//! The GL context that owns an object, told apart from a later context that got the same
//! handle value: NVIDIA's EGL hands a destroyed context's handle to the next context it creates,
//! so a handle alone would let an object of a dead context be mapped, waited on, relabelled or
//! deleted through a live one.
//!
//! At its first use by cuda-gl, each context gets a canary: an empty program object
//! (`glCreateProgram`, no state of the context changes) labelled `cuda-gl context <id>`, with
//! an id this process never hands out again. An owner check asks the current context whether
//! it has that program with that label (`glIsProgram`, `glGetObjectLabel`, which raise no GL
//! error on these arguments): a context that got the handle of a destroyed one has not. The
//! canary dies with its context (it is never deleted by cuda-gl). An application that deletes
//! program names it did not create, or relabels them, makes its context's objects refuse every
//! call: a refusal, never an alias.

use super::platform::{Current, PLATFORMS, current};
use super::table::{GlFns, have};
use crate::error::{CudaError, Error, Result};
use cuda_gl_sys::CUresult;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A context this process has given a canary: its platform and handle, the identity and the
/// canary program's name.
#[derive(Debug, Clone, Copy)]
struct Known {
    platform: usize,
    handle: usize,
    id: u64,
    canary: u32,
}

/// Every context that got a canary, the latest per platform and handle (a context that got
/// a dead one's handle replaces it).
static KNOWN: Mutex<Vec<Known>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn canary_label(id: u64) -> String {
    format!("cuda-gl context {id}")
}

/// The GL context current on this thread and cuda-gl's table for its platform.
///
/// # Errors
/// [`Error::NoGlContext`] naming `call` when no context is current;
/// [`Error::GlPlatformUnknown`] when neither EGL nor GLX is loaded; the table's
/// [`Error::MissingGlFunction`].
pub(crate) fn current_gl(call: &'static str) -> Result<(usize, usize, &'static GlFns)> {
    match current() {
        Current::Context { platform, handle } => Ok((platform, handle, PLATFORMS[platform].fns()?)),
        Current::None => Err(no_gl_context(call)),
        Current::Unknown => Err(Error::GlPlatformUnknown { call }),
    }
}

/// Whether context (of `fns`) has the program `canary` labelled with `id`'s label.
fn has_canary(fns: &GlFns, canary: u32, id: u64) -> bool {
    let Some(get_label) = fns.get_object_label else {
        return false;
    };
    // A context that merely got the owner's handle may lack object labels: asked first (the
    // version costs two queries; the extension list is read only before OpenGL 4.3).
    if !has_labels(fns) {
        return false;
    }
    // SAFETY: a context is current; glIsProgram changes no state and raises no error.
    if unsafe { (fns.is_program)(canary) } != gl::TRUE {
        return false;
    }
    let want = canary_label(id);
    let mut buf = [0u8; 48];
    let mut len = 0;
    // SAFETY: `canary` is a program of the current context (above), so GL raises no error;
    // `buf` has room for the stated size, `len` is a valid out-pointer.
    unsafe {
        get_label(
            gl::PROGRAM,
            canary,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr(),
        )
    };
    usize::try_from(len).is_ok_and(|n| buf.get(..n) == Some(want.as_bytes()))
}

/// Whether the current context has object labels (OpenGL 4.3 or `GL_KHR_debug`).
fn has_labels(fns: &GlFns) -> bool {
    fns.version() >= (4, 3) || fns.extensions().iter().any(|e| e == "GL_KHR_debug")
}

/// Gives the current context (of `fns`) a canary with a new identity.
fn plant_canary(fns: &GlFns, call: &'static str) -> Result<(u64, u32)> {
    let unavailable = |why: String| Error::GlCheckUnavailable {
        check: "which GL context owns an object",
        why,
    };
    let version = fns.version();
    if !has_labels(fns) {
        return Err(unavailable(format!(
            "{call} needs object labels (OpenGL 4.3 or GL_KHR_debug), and this OpenGL {}.{} \
             context has neither",
            version.0, version.1
        )));
    }
    let label = have(fns.object_label, "glObjectLabel")?;
    // SAFETY: a context is current; glCreateProgram takes no arguments.
    let canary = unsafe { (fns.create_program)() };
    if canary == 0 {
        return Err(unavailable("glCreateProgram returned 0".into()));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let text = canary_label(id);
    // SAFETY: `canary` is a program of the current context; the pointer and length describe
    // `text`.
    unsafe { label(gl::PROGRAM, canary, text.len() as i32, text.as_ptr()) };
    if !has_canary(fns, canary, id) {
        fns.drain_errors();
        return Err(unavailable(
            "glObjectLabel did not label the canary program".into(),
        ));
    }
    Ok((id, canary))
}

/// The GL context that owns an object: the one current when the object was registered or
/// created, by platform, handle and canary identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GlOwner {
    platform: usize,
    handle: usize,
    id: u64,
}

impl GlOwner {
    /// The context current on this thread, as the owner of what is being created, and the GL
    /// table to create it with. Gives the context a canary at its first use.
    ///
    /// # Errors
    /// As [`current_gl`]; [`Error::GlCheckUnavailable`] for a context without object labels.
    pub(crate) fn current(call: &'static str) -> Result<(GlOwner, &'static GlFns)> {
        let (platform, handle, fns) = current_gl(call)?;
        let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
        let slot = known
            .iter()
            .position(|k| k.platform == platform && k.handle == handle);
        if let Some(k) = slot.map(|i| known[i])
            && has_canary(fns, k.canary, k.id)
        {
            return Ok((
                GlOwner {
                    platform,
                    handle,
                    id: k.id,
                },
                fns,
            ));
        }
        let (id, canary) = plant_canary(fns, call)?;
        let entry = Known {
            platform,
            handle,
            id,
            canary,
        };
        match slot {
            Some(i) => known[i] = entry,
            None => known.push(entry),
        }
        Ok((
            GlOwner {
                platform,
                handle,
                id,
            },
            fns,
        ))
    }

    /// The owning context's identity: no two contexts of the process share one.
    pub(crate) fn id(self) -> u64 {
        self.id
    }

    /// Refuses `call` unless the owning context is current on this thread; returns the GL table
    /// to make the call with.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] when no context is current; [`Error::WrongGlContext`] when another
    /// one is; [`Error::GlContextGone`] when the owner was destroyed and the current context got
    /// its handle; [`Error::GlPlatformUnknown`] when neither EGL nor GLX can be asked.
    pub(crate) fn check(self, call: &'static str) -> Result<&'static GlFns> {
        let (platform, handle, fns) = current_gl(call)?;
        if (platform, handle) != (self.platform, self.handle) {
            return Err(Error::WrongGlContext {
                call,
                owner: self.handle,
                current: handle,
            });
        }
        let known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
        let canary = known.iter().find(|k| k.id == self.id).map(|k| k.canary);
        drop(known);
        match canary {
            Some(canary) if has_canary(fns, canary, self.id) => Ok(fns),
            _ => Err(Error::GlContextGone {
                call,
                handle: self.handle,
            }),
        }
    }
}

/// [`Error::NoGlContext`] for a call that was not made because no GL context is current.
pub(crate) fn no_gl_context(call: &'static str) -> Error {
    Error::NoGlContext {
        source: CudaError::new(call, CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
    }
}
