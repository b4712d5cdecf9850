//! Deleting GL objects by kind, and [`Owned`]: a GL name that is deleted when it drops.

use gl::types::GLuint;

/// The kinds of GL object the kit makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A buffer object (`glDeleteBuffers`).
    Buffer,
    /// A texture (`glDeleteTextures`).
    Texture,
    /// A framebuffer object (`glDeleteFramebuffers`).
    Framebuffer,
    /// A renderbuffer (`glDeleteRenderbuffers`).
    Renderbuffer,
    /// A vertex array object (`glDeleteVertexArrays`).
    VertexArray,
    /// A program (`glDeleteProgram`).
    Program,
}

impl Kind {
    /// Deletes object `name` of this kind. GL ignores 0 and names that are not (or no longer)
    /// objects of the kind.
    pub fn delete(self, name: GLuint) {
        // SAFETY: a context is current (the crate's contract); each call reads one name from
        // `&name`, and GL ignores names that are not live objects of the kind.
        unsafe {
            match self {
                Kind::Buffer => gl::DeleteBuffers(1, &name),
                Kind::Texture => gl::DeleteTextures(1, &name),
                Kind::Framebuffer => gl::DeleteFramebuffers(1, &name),
                Kind::Renderbuffer => gl::DeleteRenderbuffers(1, &name),
                Kind::VertexArray => gl::DeleteVertexArrays(1, &name),
                Kind::Program => gl::DeleteProgram(name),
            }
        }
    }
}

/// A GL object that this value owns and deletes when it drops (also when a test fails half-way
/// or an error returns early). Derefs to the GL name.
///
/// Locals drop in reverse order: bind the object before whatever uses it (a CUDA registration,
/// a framebuffer over it), so that those go first. The context must still be current when it
/// drops.
#[derive(Debug)]
pub struct Owned {
    name: GLuint,
    kind: Kind,
}

impl Owned {
    /// Takes ownership of object `name` of `kind`.
    pub fn new(kind: Kind, name: GLuint) -> Owned {
        Owned { name, kind }
    }

    /// Owns buffer `name`.
    pub fn buffer(name: GLuint) -> Owned {
        Owned::new(Kind::Buffer, name)
    }

    /// Owns texture `name`.
    pub fn texture(name: GLuint) -> Owned {
        Owned::new(Kind::Texture, name)
    }

    /// The GL name.
    pub fn name(&self) -> GLuint {
        self.name
    }

    /// The name, no longer owned: the caller deletes it.
    pub fn release(self) -> GLuint {
        let name = self.name;
        std::mem::forget(self);
        name
    }
}

impl std::ops::Deref for Owned {
    type Target = GLuint;

    fn deref(&self) -> &GLuint {
        &self.name
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.kind.delete(self.name);
    }
}
