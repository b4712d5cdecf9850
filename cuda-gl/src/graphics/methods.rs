//! The methods that [`RegisteredBuffer`](super::RegisteredBuffer) and
//! [`RegisteredImage`](super::RegisteredImage) share, and the unmap of every mapping guard,
//! written once as macros so that each type gets them with its own rustdoc.

/// The methods of a registered GL object `$ty` (a struct with a `reg: Registration` field):
/// map flags, unregistering, and the accessors. `$what` names the object in the docs ("buffer",
/// "image").
macro_rules! registration_methods {
    ($ty:ident, $what:literal) => {
        impl $ty {
            #[doc = concat!("Sets how CUDA will use the ", $what, " in later mappings.")]
            ///
            /// # Errors
            /// [`Error::NoGlContext`](crate::Error::NoGlContext) or
            /// [`Error::WrongGlContext`](crate::Error::WrongGlContext) when a leaked mapping must
            /// be recovered first without its GL context; the driver's error from
            /// `cuGraphicsResourceSetMapFlags`.
            #[doc(alias = "cuGraphicsResourceSetMapFlags")]
            pub fn set_map_flags(&mut self, flags: MapFlags) -> Result<()> {
                self.reg.set_map_flags(flags)
            }

            /// Unregisters now and returns the driver's error, which `Drop` can only log.
            ///
            /// The resource is consumed even when this fails. With [`Error::NoGlContext`] (the
            /// GL context that owns the object is not current on this thread) the driver still
            /// holds the registration, and dropping it here can only log the same error: use
            /// [`try_unregister`](Self::try_unregister) to get the resource back and retry with
            /// the context current.
            ///
            /// # Errors
            /// [`Error::NoGlContext`](crate::Error::NoGlContext) or
            /// [`Error::WrongGlContext`](crate::Error::WrongGlContext) when the GL context that
            /// registered it is not current (nothing is released then);
            /// [`Error::Timeout`](crate::Error::Timeout) when kernels that may use its surface or
            /// texture objects did not finish in time (the objects are leaked); the driver's error
            /// from `cuGraphicsUnregisterResource` (or from unmapping a leaked mapping first).
            #[doc(alias = "cuGraphicsUnregisterResource")]
            pub fn unregister(mut self) -> Result<()> {
                self.reg.unregister()
            }

            /// [`unregister`](Self::unregister), handing the resource back with the error.
            ///
            /// After [`Error::NoGlContext`] the registration is intact: make the GL context
            /// current and call this again. After other errors the driver has released or
            /// refused the registration for good, and dropping the returned resource does
            /// nothing more.
            ///
            /// # Errors
            /// As [`unregister`](Self::unregister), paired with the resource.
            #[doc(alias = "cuGraphicsUnregisterResource")]
            // A rare, cold path; handing the resource back unboxed keeps the retry simple.
            #[allow(clippy::result_large_err)]
            pub fn try_unregister(mut self) -> std::result::Result<(), (Self, Error)> {
                match self.reg.unregister() {
                    Ok(()) => Ok(()),
                    Err(e) => Err((self, e)),
                }
            }

            #[doc = concat!("The GL ", $what, " name.")]
            pub fn gl_name(&self) -> u32 {
                self.reg.name
            }

            /// The flags it was registered with.
            pub fn flags(&self) -> RegisterFlags {
                self.reg.flags
            }

            /// The flags set by [`set_map_flags`](Self::set_map_flags).
            pub fn map_flags(&self) -> MapFlags {
                self.reg.map_flags
            }

            /// Whether a mapping is outstanding (only after a guard was leaked with
            /// `mem::forget`).
            pub fn is_mapped(&self) -> bool {
                self.reg.mapped
            }

            /// The context it is registered in.
            pub fn context(&self) -> &Arc<Context> {
                &self.reg.ctx
            }

            /// The raw `CUgraphicsResource`.
            pub fn raw(&self) -> sys::CUgraphicsResource {
                self.reg.raw
            }

            pub(crate) fn registration(&mut self) -> &mut Registration {
                &mut self.reg
            }
        }
    };
}

/// `unmap` and `Drop` for the mapping guard `$ty<'_>`, which has `fn finish(&mut self) ->
/// Result<()>` (unmap unless already unmapped) and `fn drop_context(&self) ->
/// Option<&Arc<Context>>` (where a failed unmap in `Drop` is recorded). `$unmap_doc` is the
/// first line of `unmap`'s doc; `$dropping` names the unmap in the recorded drop error.
macro_rules! guard_unmap {
    ($ty:ident, $unmap_doc:literal, $dropping:literal) => {
        impl $ty<'_> {
            #[doc = $unmap_doc]
            ///
            /// # Errors
            /// [`Error::NoGlContext`](crate::Error::NoGlContext) or
            /// [`Error::WrongGlContext`](crate::Error::WrongGlContext) when the GL context that
            /// registered a resource is not current (it stays mapped and is recovered later); the
            /// driver's error from `cuGraphicsUnmapResources`.
            #[doc(alias = "cuGraphicsUnmapResources")]
            pub fn unmap(mut self) -> Result<()> {
                let result = self.finish();
                // The guard holds only borrows; on failure the registrations stay marked mapped
                // and their next map or unregister recovers them, so Drop must not retry and log
                // the same failure twice.
                std::mem::forget(self);
                result
            }
        }

        impl Drop for $ty<'_> {
            fn drop(&mut self) {
                if let Err(e) = self.finish()
                    && let Some(ctx) = self.drop_context()
                {
                    ctx.record_drop_error($dropping, e);
                }
            }
        }
    };
}

/// [`guard_unmap`] for a guard over one registration, `$ty<'_>` with the fields `reg` (the
/// borrowed [`Registration`](super::Registration)) and `stream` (the raw stream of the map,
/// whose `Stream` the guard borrows): `finish` unmaps on that stream, and a failed unmap in
/// `Drop` is recorded in the registration's context under `$dropping`.
macro_rules! single_guard_unmap {
    ($ty:ident, $dropping:literal) => {
        impl $ty<'_> {
            fn finish(&mut self) -> Result<()> {
                // SAFETY: (1) mapped on `self.stream`, whose stream is borrowed for the guard's
                // lifetime; every view of the mapping (its pointer, arrays, surface and texture
                // objects) borrows this guard, so none is used after.
                unsafe { self.reg.finish_mapping(self.stream) }
            }

            fn drop_context(&self) -> Option<&std::sync::Arc<crate::context::Context>> {
                Some(&self.reg.ctx)
            }
        }

        super::methods::guard_unmap!(
            $ty,
            "Unmaps now, on the stream it was mapped on, and returns the driver's error.",
            $dropping
        );
    };
}

pub(super) use {guard_unmap, registration_methods, single_guard_unmap};
