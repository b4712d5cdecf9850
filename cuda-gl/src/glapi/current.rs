//! Which GL context owns an object, and which share group: told apart from a later context that
//! got the same handle value (NVIDIA's EGL hands a destroyed context's handle to the next context
//! it creates), and from the other contexts of its share group.
//!
//! At its first use by cuda-gl, each context gets two canaries, objects labelled with an id this
//! process never hands out again:
//! - a **context canary**, a vertex array object labelled `cuda-gl context <nonce>-<id>`. Vertex arrays
//!   are container objects, never shared (OpenGL 4.6, section 5.1.3), so only this context has
//!   it: the owner check of per-context objects (framebuffers, a registration's context) asks
//!   for it;
//! - a **share-group canary**, a program object labelled `cuda-gl group <nonce>-<id>`. Programs
//!   are shared, so every context of the group sees it: a context first seen looks for the
//!   canaries of the groups already known, and joins the group whose canary it sees, or plants
//!   a new one. The claims on registered objects are keyed by this identity
//!   ([`claim`](super::claim)).
//!
//! The checks ask `glIsVertexArray` / `glIsProgram` and `glGetObjectLabel`, which raise no GL
//! error on these arguments and change no state; making the vertex array binds it once and
//! restores the previous binding. The canaries die with their context or group (cuda-gl never
//! deletes them). An application that deletes or relabels objects it did not create makes its
//! context's objects refuse every call: a refusal, never an alias.

use super::label::{self, has_labels, is_labelled};
use super::platform::{Current, PLATFORMS, current};
use super::table::GlFns;
use crate::error::{Error, Result};
use crate::result::CudaError;
use cuda_gl_sys::CUresult;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A context this process has given a canary: its platform and handle, its identity, its
/// canary vertex array and its share group.
#[derive(Debug, Clone, Copy)]
struct Known {
    platform: usize,
    handle: usize,
    id: u64,
    canary: u32,
    group: u64,
}

/// A share group this process has given a canary: its identity and the canary program's name.
#[derive(Debug, Clone, Copy)]
struct Group {
    id: u64,
    program: u32,
}

#[derive(Debug)]
struct Registry {
    /// The latest context per platform and handle (a context that got a dead one's handle
    /// replaces it).
    contexts: Vec<Known>,
    /// Every group planted, newest last (a group outlives any one of its contexts).
    groups: Vec<Group>,
}

impl Registry {
    /// Whether the current context (of `fns`) sees the canary of share group `id`.
    fn has_group(&self, fns: &GlFns, id: u64) -> bool {
        self.groups
            .iter()
            .any(|g| g.id == id && has_group_canary(fns, g))
    }
}

static KNOWN: Mutex<Registry> = Mutex::new(Registry {
    contexts: Vec::new(),
    groups: Vec::new(),
});
/// Identities of contexts and groups alike: no two of either share one.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn context_label(id: u64) -> String {
    label::text("context", id)
}

fn group_label(id: u64) -> String {
    label::text("group", id)
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

fn has_context_canary(fns: &GlFns, k: &Known) -> bool {
    has_labels(fns)
        && is_labelled(
            fns,
            gl::VERTEX_ARRAY,
            k.canary,
            fns.is_vertex_array,
            &context_label(k.id),
        )
}

/// [`Error::GlCheckUnavailable`] for a context whose share group's canary is gone.
fn group_canary_gone(call: &'static str) -> Error {
    unavailable(format!(
        "{call}: cuda-gl's canary program of this context's share group was deleted or \
         relabelled (glDeleteProgram or glObjectLabel of a program name the application did not \
         create), so a registration of the group's objects could no longer be told from one \
         made after; they are refused.\nhelp: delete and label only the GL objects you created"
    ))
}

fn has_group_canary(fns: &GlFns, g: &Group) -> bool {
    has_labels(fns)
        && is_labelled(
            fns,
            gl::PROGRAM,
            g.program,
            fns.is_program,
            &group_label(g.id),
        )
}

/// [`Error::GlCheckUnavailable`] of the owner check.
fn unavailable(why: String) -> Error {
    Error::GlCheckUnavailable {
        check: "which GL context owns an object",
        why,
    }
}

/// Gives the current context (of `fns`) a context canary with a new identity: a vertex array,
/// made by binding a generated name once (the previous binding is restored).
fn plant_context_canary(fns: &GlFns) -> Result<(u64, u32)> {
    let (mut canary, mut previous) = (0u32, 0i32);
    // SAFETY: a context is current; valid out-pointers; binding a generated name makes the
    // vertex array, and binding the previous one back leaves the context's state as it was.
    unsafe {
        (fns.get_integerv)(gl::VERTEX_ARRAY_BINDING, &mut previous);
        (fns.gen_vertex_arrays)(1, &mut canary);
        if canary != 0 {
            (fns.bind_vertex_array)(canary);
            (fns.bind_vertex_array)(u32::try_from(previous).unwrap_or(0));
        }
    }
    if canary == 0 {
        return Err(unavailable("glGenVertexArrays returned 0".into()));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    label::label(fns, gl::VERTEX_ARRAY, canary, &context_label(id))?;
    Ok((id, canary))
}

/// Gives the current context's share group (of `fns`) a canary with a new identity, visible to
/// the group's other contexts before this returns.
fn plant_group_canary(fns: &GlFns) -> Result<Group> {
    // SAFETY: a context is current; glCreateProgram takes no arguments.
    let program = unsafe { (fns.create_program)() };
    if program == 0 {
        return Err(unavailable("glCreateProgram returned 0".into()));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    label::label(fns, gl::PROGRAM, program, &group_label(id))?;
    // Another context sees a change to a shared object once the commands that made it have
    // completed: the label must be there before another context of the group looks for it.
    // SAFETY: a context is current; glFinish takes no arguments.
    unsafe { (fns.finish)() };
    Ok(Group { id, program })
}

/// The owner of an object: the GL context current when it was registered or created (by
/// platform, handle and context canary), and that context's share group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GlOwner {
    platform: usize,
    handle: usize,
    id: u64,
    group: u64,
}

impl GlOwner {
    /// The context current on this thread, as the owner of what is being created, and the GL
    /// table to create it with. Gives the context (and its share group, when new) a canary at
    /// its first use.
    ///
    /// # Errors
    /// As [`current_gl`]; [`Error::GlCheckUnavailable`] for a context without object labels;
    /// [`Error::GlNoErrorContext`] for a context made without error checking (`KHR_no_error`).
    pub(crate) fn current(call: &'static str) -> Result<(GlOwner, &'static GlFns)> {
        let (platform, handle, fns) = current_gl(call)?;
        let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
        let slot = known
            .contexts
            .iter()
            .position(|k| k.platform == platform && k.handle == handle);
        let owner = |k: &Known| GlOwner {
            platform,
            handle,
            id: k.id,
            group: k.group,
        };
        if let Some(k) = slot.map(|i| known.contexts[i])
            && has_context_canary(fns, &k)
        {
            return if known.has_group(fns, k.group) {
                Ok((owner(&k), fns))
            } else {
                Err(group_canary_gone(call))
            };
        }
        let version = fns.version_string();
        if !has_labels(fns) {
            return Err(unavailable(format!(
                "{call} needs object labels (OpenGL 4.3 or GL_KHR_debug), and this OpenGL {}.{} \
                 context has neither",
                version.0, version.1
            )));
        }
        // Asked once per context, before its canaries: a context's flags never change.
        if fns.reports_no_errors() {
            return Err(Error::GlNoErrorContext { call });
        }
        let group = match known.groups.iter().rev().find(|g| has_group_canary(fns, g)) {
            Some(g) => g.id,
            None => {
                let g = plant_group_canary(fns)?;
                known.groups.push(g);
                g.id
            }
        };
        let (id, canary) = plant_context_canary(fns)?;
        let entry = Known {
            platform,
            handle,
            id,
            canary,
            group,
        };
        let planted = has_context_canary(fns, &entry) && known.has_group(fns, group);
        if !planted {
            fns.drain_errors();
            return Err(unavailable(
                "glObjectLabel did not label cuda-gl's canary objects".into(),
            ));
        }
        match slot {
            Some(i) => known.contexts[i] = entry,
            None => known.contexts.push(entry),
        }
        Ok((owner(&entry), fns))
    }

    /// The owning context's share group: objects GL shares (buffers, textures, renderbuffers)
    /// are one object in every context of a group, and another object in any other context.
    pub(crate) fn group(self) -> u64 {
        self.group
    }

    /// Refuses `call` unless the owning context is current on this thread; returns the GL table
    /// to make the call with.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] when no context is current; [`Error::WrongGlContext`] when another
    /// one is; [`Error::GlContextGone`] when the owner was destroyed and the current context got
    /// its handle (of the owner's share group or not); [`Error::GlPlatformUnknown`] when neither
    /// EGL nor GLX can be asked.
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
        let entry = known.contexts.iter().find(|k| k.id == self.id).copied();
        match entry {
            Some(k) if has_context_canary(fns, &k) => {
                if known.has_group(fns, self.group) {
                    Ok(fns)
                } else {
                    Err(group_canary_gone(call))
                }
            }
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
