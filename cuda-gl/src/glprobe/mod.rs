//! What cuda-gl asks of OpenGL itself: which context is current (through EGL and GLX), questions
//! that check a registration or explain a refusal (no GL state changes), and the debug labels
//! that tell a shared object from an unrelated one of the same name (the one state cuda-gl
//! writes: a registered object's label, given back at unregister). Label calls take GL's pending
//! error first, so that only their own is seen; an earlier error is logged at debug level.

mod current;
pub(crate) mod label;
pub(crate) mod query;

pub(crate) use current::{Current, GlOwner, current};
