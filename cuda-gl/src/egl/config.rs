//! [`HeadlessConfig`]: options for creating a [`HeadlessContext`](super::HeadlessContext).

/// Options for [`HeadlessContext::for_cuda_device_with`](super::HeadlessContext::for_cuda_device_with)
/// and [`HeadlessContext::any_gl_with`](super::HeadlessContext::any_gl_with).
///
/// ```
/// use cuda_gl::egl::HeadlessConfig;
/// let config = HeadlessConfig::default().with_gl_versions(&[(4, 6), (4, 5)]).with_debug(true);
/// assert_eq!(config.gl_versions, vec![(4, 6), (4, 5)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeadlessConfig {
    /// OpenGL versions `(major, minor)` to try, in order; the first one that the driver grants
    /// wins. Default: `[(4, 5), (3, 3)]`.
    pub gl_versions: Vec<(u8, u8)>,
    /// The profile asked for with versions 3.2 and later. Default: [`GlProfile::Core`].
    pub profile: GlProfile,
    /// Have [`any_gl`](super::HeadlessContext::any_gl_with) try software renderers (Mesa's
    /// software EGL device, llvmpipe) before GPUs: GL that is not on the CUDA GPU even on a GPU
    /// host, to run a program's fallback path (a display target's staged mode) there. Where no
    /// software renderer is offered it gets what it would otherwise
    /// ([`HeadlessContext::is_software`](super::HeadlessContext::is_software) says which).
    /// Default: `false`.
    pub software_first: bool,
    /// Ask for a debug context (`EGL_CONTEXT_OPENGL_DEBUG_BIT_KHR`). Default: `false`.
    pub debug: bool,
    /// Make the context current without a surface when the display supports
    /// `EGL_KHR_surfaceless_context`; when `false` (or unsupported) a 16x16 pbuffer is used.
    /// Default: `true`.
    pub surfaceless: bool,
    /// Tests only: ask for a context without error checking (`EGL_KHR_create_context_no_error`),
    /// which cuda-gl refuses.
    #[cfg(test)]
    pub(crate) no_error: bool,
}

/// The OpenGL profile a [`HeadlessContext`](super::HeadlessContext) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum GlProfile {
    /// The core profile: no deprecated state or calls.
    #[default]
    Core,
    /// The compatibility profile, which also has the fixed-function and pixel-transfer state of
    /// older OpenGL: what a window's context usually is unless it asks for a core profile,
    /// and so the profile to test code meant for windows with.
    Compatibility,
}

impl Default for HeadlessConfig {
    fn default() -> Self {
        Self {
            gl_versions: vec![(4, 5), (3, 3)],
            profile: GlProfile::Core,
            software_first: false,
            debug: false,
            surfaceless: true,
            #[cfg(test)]
            no_error: false,
        }
    }
}

/// Builder methods: `$name($field: $ty)` sets the field of that name and returns the config,
/// with the docs written before it.
macro_rules! with_setters {
    ($($(#[$doc:meta])* $name:ident($field:ident: $ty:ty);)*) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $name(mut self, $field: $ty) -> Self {
                self.$field = $field;
                self
            }
        )*
    };
}

impl HeadlessConfig {
    /// Replaces the list of OpenGL versions to try, in order.
    #[must_use]
    pub fn with_gl_versions(mut self, versions: &[(u8, u8)]) -> Self {
        self.gl_versions = versions.to_vec();
        self
    }

    with_setters! {
        /// Asks for a core or a compatibility profile (with versions 3.2 and later).
        with_profile(profile: GlProfile);
        /// Tries software renderers first in `any_gl` (`true`) or GPUs first (`false`).
        with_software_first(software_first: bool);
        /// Asks for a debug context or not.
        with_debug(debug: bool);
        /// Prefers a surfaceless context (`true`) or always uses a 16x16 pbuffer (`false`).
        with_surfaceless(surfaceless: bool);
    }
}
