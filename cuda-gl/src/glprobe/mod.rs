//! What cuda-gl asks of OpenGL itself, never changing GL state: which context is current (through
//! EGL and GLX), questions that check a registration or explain a refusal, and the debug labels
//! that tell a shared object from an unrelated one of the same name.

mod current;
pub(crate) mod label;
pub(crate) mod query;

pub(crate) use current::{Current, GlOwner, current};
