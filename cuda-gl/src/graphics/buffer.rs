//! GL buffers registered with CUDA.

use super::methods::{registration_methods, single_guard_unmap};
use super::{Kind, MapFlags, RegisterFlags, Registration};
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::memory::DevicePtr;
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

/// A GL buffer object registered with CUDA. Unregistered on drop.
///
/// `Send` and `Sync`: it may move to another thread together with its GL context. Registering,
/// mapping, unmapping, unregistering and dropping need the GL context that registered it
/// current on the calling thread; each checks that through EGL/GLX and refuses with
/// [`Error::NoGlContext`](crate::Error::NoGlContext) or
/// [`Error::WrongGlContext`](crate::Error::WrongGlContext) otherwise (a `Drop` then logs and
/// leaves the registration to the driver). The CUDA context is bound by the crate itself.
#[derive(Debug)]
pub struct RegisteredBuffer {
    reg: Registration,
}

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
        buffer: impl Into<crate::BufferName>,
        flags: RegisterFlags,
    ) -> Result<Self> {
        Ok(Self {
            reg: Registration::register(ctx, buffer.into().0, Kind::Buffer, flags)?,
        })
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
        // SAFETY: the resource is a mapped buffer.
        match unsafe { result::graphics::mapped_pointer(self.reg.raw) } {
            Ok((_, 0)) => {
                // SAFETY: mapped on `s` just above; nothing was handed out.
                unsafe { self.reg.unmap_on(s) }?;
                Err(UsageError::EmptyGlBuffer {
                    name: self.reg.name,
                }
                .into())
            }
            Ok((ptr, size)) => Ok(MappedBuffer {
                reg: &mut self.reg,
                stream: s,
                ptr,
                size,
                _stream: PhantomData,
                stream_object: stream.as_any(),
            }),
            Err(e) => {
                // SAFETY: mapped on `s` just above; nothing was handed out.
                if let Err(unmap) = unsafe { self.reg.unmap_on(s) } {
                    self.reg
                        .ctx
                        .record_drop_error("unmapping after a failed map", unmap);
                }
                Err(e.into())
            }
        }
    }
}

registration_methods!(RegisteredBuffer, "buffer");

/// A mapped GL buffer: a device pointer and a size, valid while this guard lives.
///
/// Dropping it unmaps on the stream it was mapped on; [`MappedBuffer::unmap`] does the same and
/// returns the driver's error. Not `Send`: it borrows the resource and the stream.
#[derive(Debug)]
#[must_use = "dropping the guard unmaps the buffer at once"]
pub struct MappedBuffer<'a> {
    reg: &'a mut Registration,
    stream: sys::CUstream,
    ptr: sys::CUdeviceptr,
    size: usize,
    _stream: PhantomData<&'a ()>,
    /// The stream object of the map, when it offers itself ([`AsStream::as_any`]): adapters
    /// find their library's stream there.
    stream_object: Option<&'a dyn std::any::Any>,
}

impl<'a> MappedBuffer<'a> {
    /// The buffer's device address, borrowed from this guard.
    #[doc(alias = "cuGraphicsResourceGetMappedPointer")]
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        DevicePtr::new(self.ptr)
    }

    /// The buffer's size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The stream it was mapped on.
    pub fn raw_stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Refuses a CUDA write into the buffer when it was registered or mapped read-only.
    pub(crate) fn check_writable(&self, what: &'static str) -> Result<()> {
        self.reg.check_writable(what)
    }

    /// The context, stream, address and size of the mapping, for copies to and from images.
    pub(super) fn parts(&self) -> (sys::CUcontext, sys::CUstream, sys::CUdeviceptr, usize) {
        (self.reg.ctx.raw(), self.stream, self.ptr, self.size)
    }

    /// The stream object it was mapped on, when its type offers itself
    /// ([`AsStream::as_any`]): an adapter for another library's streams finds its stream here.
    pub fn stream_any(&self) -> Option<&'a dyn std::any::Any> {
        self.stream_object
    }
}

single_guard_unmap!(MappedBuffer, "unmapping a GL buffer");
