//! A [`HeadlessContext`] made current, released, shared with a new context, and dropped: the
//! calls that use its EGL handles, each after checking that EGL still knows them (another user
//! of a shared display may have terminated it).

use khronos_egl as kegl;

use super::error::{EglError, EglErrorCode};
use super::headless::HeadlessContext;

impl HeadlessContext {
    /// A new context on the same display that shares objects with this one (EGL's share
    /// context: buffers, textures, renderbuffers, programs and sync objects; framebuffers and
    /// vertex arrays stay per context), with the same GL version and options, made current on
    /// this thread. Loader threads use one to upload while another context draws.
    ///
    /// A registration belongs to the context current when it was made: mapping it needs that
    /// context current, and one GL object cannot be registered from two contexts that share it.
    ///
    /// # Errors
    ///
    /// [`EglError::DisplayTerminated`] when another user of a shared display terminated it
    /// (this context went with it); otherwise as [`for_cuda_device`](Self::for_cuda_device):
    /// the EGL call that failed, with its code.
    pub fn new_shared(&self) -> Result<HeadlessContext, EglError> {
        self.check_alive("HeadlessContext::new_shared")?;
        let display = self.display.share(self.platform)?;
        let config = self.config.clone().with_gl_versions(&[self.gl_request]);
        Self::create(
            self.egl,
            display,
            self.platform,
            self.device.clone(),
            &config,
            Some(self.context),
        )
    }

    /// Makes this context (and its pbuffer, if it has one) current on the calling thread,
    /// e.g. after another context was made current here.
    ///
    /// # Errors
    ///
    /// [`EglError::DisplayTerminated`] when another user of a shared display terminated it
    /// (this context went with it: make a new one); [`EglError::BindApi`] or
    /// [`EglError::MakeCurrent`] with the EGL error code.
    pub fn make_current(&self) -> Result<(), EglError> {
        // EGL checks the handles of a live display; after another library's eglTerminate they
        // may name nothing, or, once the display is initialised again, another's objects.
        self.check_alive("HeadlessContext::make_current")?;
        self.bind_gl_api()?;
        self.set_current(self.surface, Some(self.context))
    }

    /// Releases this context from the calling thread if it is current there (no-op otherwise).
    ///
    /// # Errors
    ///
    /// [`EglError::BindApi`] or [`EglError::MakeCurrent`] with the EGL error code.
    pub fn release_current(&self) -> Result<(), EglError> {
        self.bind_gl_api()?;
        if !self.is_current() {
            return Ok(());
        }
        self.set_current(None, None)
    }

    /// Refuses `call` when EGL no longer knows this context ([`DisplayRef::check_context`]),
    /// and for good once it did: after another library terminated the shared display and
    /// initialised it again, EGL may give a new context of that library this one's handle value
    /// (NVIDIA's EGL reuses them), which `eglQueryContext` would then answer for, and cuda-gl
    /// would make current or destroy the other library's context.
    ///
    /// [`DisplayRef::check_context`]: super::display::DisplayRef::check_context
    fn check_alive(&self, call: &'static str) -> Result<(), EglError> {
        if let Some(code) = self.terminated.get() {
            return Err(EglError::DisplayTerminated { call, code });
        }
        let alive = self.display.check_context(self.context, call);
        if let Err(EglError::DisplayTerminated { code, .. }) = &alive {
            self.terminated.set(Some(*code));
        }
        alive
    }

    /// `eglBindAPI(EGL_OPENGL_API)`: EGL's current context is per API, so every query or change
    /// of it first selects OpenGL.
    fn bind_gl_api(&self) -> Result<(), EglError> {
        self.egl
            .bind_api(kegl::OPENGL_API)
            .map_err(|e| EglError::BindApi {
                code: EglErrorCode::from_egl(e),
            })
    }

    /// `eglMakeCurrent` on this display with `surface` to draw and read and `context` (`None`,
    /// `None`: release whatever is current).
    fn set_current(
        &self,
        surface: Option<kegl::Surface>,
        context: Option<kegl::Context>,
    ) -> Result<(), EglError> {
        self.egl
            .make_current(self.display.display(), surface, surface, context)
            .map_err(|e| EglError::MakeCurrent {
                code: EglErrorCode::from_egl(e),
            })
    }

    /// Whether this context is the current OpenGL context of the calling thread.
    #[must_use]
    pub fn is_current(&self) -> bool {
        self.egl.query_api() == kegl::OPENGL_API
            && self.egl.get_current_context() == Some(self.context)
    }
}

impl Drop for HeadlessContext {
    fn drop(&mut self) {
        let dpy = self.display.display();
        // eglGetCurrentContext answers for the thread's bound API, so make it OpenGL first.
        if let Err(e) = self.egl.bind_api(kegl::OPENGL_API) {
            log::warn!(
                "eglBindAPI(EGL_OPENGL_API) failed: {}",
                EglErrorCode::from_egl(e)
            );
        }
        // Releasing is allowed on a terminated display, and frees a context that its
        // termination left current here.
        if self.is_current()
            && let Err(e) = self.egl.make_current(dpy, None, None, None)
        {
            log::warn!(
                "eglMakeCurrent(EGL_NO_CONTEXT) failed: {}",
                EglErrorCode::from_egl(e)
            );
        }
        if let Err(e) = self.check_alive("HeadlessContext::drop") {
            // The terminate destroyed the context and surface; their handles may name another
            // library's objects once the display is initialised again.
            log::warn!("cuda-gl: {e}");
            return;
        }
        if let Some(surface) = self.surface.take()
            && let Err(e) = self.egl.destroy_surface(dpy, surface)
        {
            log::warn!("eglDestroySurface failed: {}", EglErrorCode::from_egl(e));
        }
        if let Err(e) = self.egl.destroy_context(dpy, self.context) {
            log::warn!("eglDestroyContext failed: {}", EglErrorCode::from_egl(e));
        }
        // `self.display` drops next: a display of cuda-gl's own is terminated once per
        // context, a shared one never.
    }
}
