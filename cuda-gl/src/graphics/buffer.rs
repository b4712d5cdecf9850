//! GL buffers registered with CUDA.

use super::registered::{BufferMapping, GlBuffer, Mapped, Registered};
use super::{Claiming, Kind, RegisterFlags, Registration};
use crate::context::Context;
use crate::error::{Result, UsageError};
use crate::gl_name::BufferName;
use crate::memory::DevicePtr;
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// A GL buffer object registered with CUDA. Unregistered on drop. What every registration
/// has (unregistering, map flags, the thread rules) is [`Registered`]'s.
pub type RegisteredBuffer = Registered<GlBuffer>;

impl RegisteredBuffer {
    /// Registers the GL buffer `buffer` in `ctx`. The GL context that owns the buffer must be
    /// current on this thread.
    ///
    /// # Errors
    /// - [`UsageError::ZeroGlName`] for name 0, [`UsageError::ContradictoryFlags`] and
    ///   [`UsageError::ImageOnlyFlags`] for flags that make no sense for a buffer (checked before
    ///   the driver is called);
    /// - [`Error::NoGlContext`](crate::Error::NoGlContext),
    ///   [`Error::NotAGlObject`](crate::Error::NotAGlObject),
    ///   [`Error::WrongDevice`](crate::Error::WrongDevice),
    ///   [`Error::AlreadyRegistered`](crate::Error::AlreadyRegistered),
    ///   [`Error::NotNvidiaGl`](crate::Error::NotNvidiaGl) for the driver's failures users meet;
    /// - otherwise the driver's error from `cuGraphicsGLRegisterBuffer`.
    #[doc(alias = "cuGraphicsGLRegisterBuffer")]
    pub fn register(
        ctx: &Arc<Context>,
        buffer: impl Into<BufferName>,
        flags: RegisterFlags,
    ) -> Result<Self> {
        let name = buffer.into().0;
        let reg = Registration::register(ctx, name, Kind::Buffer, flags, Claiming::Now)?;
        Ok(Self::from_registration(reg))
    }

    /// Registers buffer `buffer` of cuda-gl's own, which the caller has claimed and keeps
    /// claimed until the buffer is deleted (after this registration is gone).
    pub(crate) fn register_own_buffer(
        ctx: &Arc<Context>,
        buffer: u32,
        flags: RegisterFlags,
    ) -> Result<Self> {
        let reg = Registration::register(ctx, buffer, Kind::Buffer, flags, Claiming::Held)?;
        Ok(Self::from_registration(reg))
    }

    /// The GL buffer's name.
    pub fn gl_name(&self) -> BufferName {
        BufferName(self.reg.name)
    }

    /// Maps the buffer on `stream`. The returned guard unmaps on the same stream when dropped.
    ///
    /// GL must not use the buffer while it is mapped.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context;
    /// [`UsageError::EmptyGlBuffer`] for a buffer of size 0; [`Error::NoGlContext`](crate::Error::NoGlContext) or
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext) when the GL context that
    /// registered it is not current; [`Error::MappingStateLost`](crate::Error::MappingStateLost)
    /// when the driver's state no longer matches; the driver's error from
    /// `cuGraphicsMapResources` or `cuGraphicsResourceGetMappedPointer` (the buffer is unmapped
    /// again when the latter fails).
    #[doc(alias = "cuGraphicsMapResources")]
    pub fn map<'a, S: AsStream>(&'a mut self, stream: &'a S) -> Result<MappedBuffer<'a>> {
        let s = self.reg.map_on(stream)?;
        match buffer_mapping(&self.reg) {
            Ok(mapping) => Ok(Mapped::new(&mut self.reg, stream, mapping)),
            Err(e) => {
                // SAFETY: mapped on `s` just above; nothing was handed out.
                if let Err(unmap) = unsafe { self.reg.unmap_on(s) } {
                    self.reg
                        .ctx
                        .record_drop_error("unmapping after a failed map", unmap);
                }
                Err(e)
            }
        }
    }
}

/// The address and size of `reg`, a mapped buffer.
///
/// # Errors
/// [`UsageError::EmptyGlBuffer`] for a buffer of size 0; the driver's error from
/// `cuGraphicsResourceGetMappedPointer`.
pub(super) fn buffer_mapping(reg: &Registration) -> Result<BufferMapping> {
    // SAFETY: the caller's registration is a buffer, mapped while borrowed.
    match unsafe { result::graphics::mapped_pointer(reg.raw) }? {
        (_, 0) => Err(UsageError::EmptyGlBuffer { name: reg.name }.into()),
        (ptr, size) => Ok(BufferMapping { ptr, size }),
    }
}

/// A mapped GL buffer: a device pointer and a size, valid while this guard lives. Dropping it
/// unmaps on the stream it was mapped on ([`Mapped`]).
pub type MappedBuffer<'a> = Mapped<'a, GlBuffer>;

impl<'a> MappedBuffer<'a> {
    /// The buffer's device address, borrowed from this guard.
    #[doc(alias = "cuGraphicsResourceGetMappedPointer")]
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        DevicePtr::new(self.mapping.ptr)
    }

    /// The buffer's size in bytes.
    pub fn size(&self) -> usize {
        self.mapping.size
    }

    /// Refuses a CUDA write into the buffer when it was registered or mapped read-only.
    pub(crate) fn check_writable(&self, what: &'static str) -> Result<()> {
        self.reg.check_writable(what)
    }

    /// The context, stream, address and size of the mapping, for copies to and from images.
    pub(super) fn parts(&self) -> (sys::CUcontext, sys::CUstream, sys::CUdeviceptr, usize) {
        (
            self.reg.ctx.raw(),
            self.stream,
            self.mapping.ptr,
            self.mapping.size,
        )
    }
}
