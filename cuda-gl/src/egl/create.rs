//! Config selection, context creation and making the new context current.

use std::marker::PhantomData;

use khronos_egl as kegl;

use super::display::DisplayRef;
use super::error::{EglDeviceInfo, EglError, EglErrorCode, EglPlatform};
use super::headless::HeadlessContext;
use super::sys::{self, DeviceApi, Egl};
use super::{GlProfile, HeadlessConfig};

impl HeadlessContext {
    pub(super) fn mesa_surfaceless(
        egl: &'static Egl,
        config: &HeadlessConfig,
    ) -> Result<Self, EglError> {
        let get_platform_display = DeviceApi::load_get_platform_display(egl)?;
        // SAFETY: EGL_DEFAULT_DISPLAY, as the surfaceless platform requires.
        let display = unsafe {
            DisplayRef::open(
                egl,
                get_platform_display,
                EglPlatform::MesaSurfaceless,
                kegl::DEFAULT_DISPLAY,
            )
        }?;
        Self::create(
            egl,
            display,
            EglPlatform::MesaSurfaceless,
            None,
            config,
            None,
        )
    }

    /// Chooses a config, creates the context (sharing objects with `share`, a context of the
    /// same display, when given) and makes it current. On error, everything made so far is
    /// destroyed by `Drop`.
    pub(super) fn create(
        egl: &'static Egl,
        display: DisplayRef,
        platform: EglPlatform,
        device: Option<EglDeviceInfo>,
        config: &HeadlessConfig,
        share: Option<kegl::Context>,
    ) -> Result<Self, EglError> {
        let dpy = display.display();
        let egl_extensions = egl
            .query_string(Some(dpy), kegl::EXTENSIONS)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let has = |e| sys::has_extension(&egl_extensions, e);
        let surfaceless = config.surfaceless && has("EGL_KHR_surfaceless_context");

        egl.bind_api(kegl::OPENGL_API)
            .map_err(|e| EglError::BindApi {
                code: EglErrorCode::from_egl(e),
            })?;

        let egl_config = choose_config(egl, dpy)?;

        let can_version = has("EGL_KHR_create_context") || display.version() >= (1, 5);
        let mut failures = Vec::new();
        let mut created = None;
        for &(major, minor) in &config.gl_versions {
            let mut attribs = Vec::with_capacity(9);
            if can_version {
                attribs.extend_from_slice(&[
                    sys::CONTEXT_MAJOR_VERSION,
                    kegl::Int::from(major),
                    sys::CONTEXT_MINOR_VERSION,
                    kegl::Int::from(minor),
                ]);
                if (major, minor) >= (3, 2) {
                    let profile = match config.profile {
                        GlProfile::Core => sys::CONTEXT_OPENGL_CORE_PROFILE_BIT,
                        GlProfile::Compatibility => sys::CONTEXT_OPENGL_COMPATIBILITY_PROFILE_BIT,
                    };
                    attribs.extend_from_slice(&[sys::CONTEXT_OPENGL_PROFILE_MASK, profile]);
                }
                if config.debug {
                    attribs.extend_from_slice(&[
                        sys::CONTEXT_FLAGS_KHR,
                        sys::CONTEXT_OPENGL_DEBUG_BIT_KHR,
                    ]);
                }
                #[cfg(test)]
                if config.no_error {
                    attribs.extend_from_slice(&[sys::CONTEXT_OPENGL_NO_ERROR_KHR, 1]);
                }
            }
            attribs.push(kegl::NONE);
            match egl.create_context(dpy, egl_config, share, &attribs) {
                Ok(ctx) => {
                    created = Some((ctx, (major, minor)));
                    break;
                }
                Err(e) => failures.push(((major, minor), EglErrorCode::from_egl(e))),
            }
        }
        let Some((context, gl_request)) = created else {
            return Err(EglError::CreateContext { failures });
        };

        let mut ctx = Self {
            egl,
            context,
            surface: None,
            platform,
            device,
            egl_extensions,
            gl_request,
            config: config.clone(),
            renderer: String::new(),
            vendor: String::new(),
            version: String::new(),
            fallback: None,
            display,
            terminated: std::cell::Cell::new(None),
            _not_sync: PhantomData,
        };

        let surfaceless_ok = surfaceless
            && egl
                .make_current(dpy, None, None, Some(context))
                .inspect_err(|e| {
                    log::debug!("surfaceless eglMakeCurrent failed ({e}); using a pbuffer");
                })
                .is_ok();
        if !surfaceless_ok {
            let attribs = [kegl::WIDTH, 16, kegl::HEIGHT, 16, kegl::NONE];
            let surface = egl
                .create_pbuffer_surface(dpy, egl_config, &attribs)
                .map_err(|e| EglError::CreateSurface {
                    code: EglErrorCode::from_egl(e),
                })?;
            ctx.surface = Some(surface);
            ctx.make_current()?;
        }

        // Through cuda-gl's own table (the `gl` crate's pointers are the application's to load).
        if let Ok((_, _, fns)) = crate::glapi::current_gl("glGetString") {
            let string = |name| fns.string(name).unwrap_or_default();
            ctx.renderer = string(gl::RENDERER);
            ctx.vendor = string(gl::VENDOR);
            ctx.version = string(gl::VERSION);
        }
        log::debug!(
            "EGL {platform} context: OpenGL {} on {} ({})",
            ctx.version,
            ctx.renderer,
            ctx.vendor
        );
        Ok(ctx)
    }
}

/// `eglChooseConfig` for an off-screen RGBA8 desktop-OpenGL config with pbuffer support.
fn choose_config(egl: &Egl, dpy: kegl::Display) -> Result<kegl::Config, EglError> {
    let attribs = [
        kegl::SURFACE_TYPE,
        kegl::PBUFFER_BIT,
        kegl::RENDERABLE_TYPE,
        kegl::OPENGL_BIT,
        kegl::RED_SIZE,
        8,
        kegl::GREEN_SIZE,
        8,
        kegl::BLUE_SIZE,
        8,
        kegl::ALPHA_SIZE,
        8,
        kegl::NONE,
    ];
    egl.choose_first_config(dpy, &attribs)
        .map_err(|e| EglError::ChooseConfig {
            code: EglErrorCode::from_egl(e),
        })?
        .ok_or_else(|| EglError::NoMatchingConfig {
            requested: "EGL_SURFACE_TYPE=EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE=EGL_OPENGL_BIT, \
                        RGBA 8/8/8/8"
                .to_owned(),
        })
}
