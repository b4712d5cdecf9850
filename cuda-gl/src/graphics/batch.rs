//! Mapping many resources with one driver call, viewed through typed views.

use super::batch_set::private::{Build, Regs};
use super::batch_set::{MapSet, ViewSet};
use super::buffer::buffer_mapping;
use super::registration::mapping_state_lost;
use super::{Kind, Registration};
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::sync::Arc;

/// Maps every registration of `resources` on `stream` with one `cuGraphicsMapResources` call,
/// and hands out a typed view of each.
///
/// `resources` is a [`MapSet`]: one `&mut RegisteredBuffer` or `&mut RegisteredImage`, a slice,
/// `Vec` or array of one kind, or a tuple of those. The returned batch holds the matching views
/// ([`ViewSet`]): `map_all((&mut vertices, &mut texture), &stream)` gives a
/// `MappedAll<(MappedBuffer, MappedImage)>`, whose `.0.device_ptr()` and `.1.surface()` are the
/// accessors of a single mapping, checked by the compiler (a buffer has no `surface`);
/// `map_all(&mut buffers[..], &stream)` gives a `Vec<MappedBuffer>`, reached by index.
///
/// The batch unmaps them all with one `cuGraphicsUnmapResources` call on the same stream when
/// dropped. Its views are lent by shared reference and borrow the batch, so none outlives the
/// mapping. The mutable borrows rule out passing one resource twice.
///
/// # Errors
/// [`UsageError::EmptyBatch`] for no registration at all; [`UsageError::WrongCudaContext`] for a
/// resource or stream of another context; [`Error::NoGlContext`] or [`Error::WrongGlContext`]
/// when the GL context that registered a resource is not current;
/// [`UsageError::EmptyGlBuffer`] for a buffer of size 0 (the batch is unmapped again);
/// [`UsageError::Unregistered`] for a registration an earlier unregister released;
/// [`Error::StreamCapturing`] for a stream under capture; the errors of recovering a mapping
/// whose guard was leaked ([`Error::Timeout`], [`Error::ContextUnusable`], the driver's);
/// [`Error::MappingStateLost`] when the driver holds a resource mapped that cuda-gl does not;
/// the driver's error from `cuGraphicsMapResources` (then nothing is mapped) or
/// `cuGraphicsResourceGetMappedPointer`; [`Error::Internal`] for a batch whose views could not
/// be built (a bug; the resources stay mapped until their next map or unregister recovers
/// them).
#[doc(alias = "cuGraphicsMapResources")]
pub fn map_all<'a, R: MapSet<'a>, S: AsStream>(
    resources: R,
    stream: &'a S,
) -> Result<MappedAll<'a, R::Views>> {
    let mut regs = Regs(Vec::new());
    let shape = resources.append_to(&mut regs);
    let mut regs = regs.0;
    let ctx = prepare_batch(&mut regs, stream)?;
    let (first_name, first_kind) = (regs[0].name, regs[0].kind);
    let mut raws: Vec<sys::CUgraphicsResource> = regs.iter().map(|r| r.raw).collect();
    let s = stream.raw_stream();
    // SAFETY: all registered in the bound context and unmapped (recovered above); the stream is
    // live and in that context (checked by prepare_map).
    unsafe { Registration::map_raw(&mut raws, s) }
        .map_err(|e| mapping_state_lost(e, first_name, first_kind))?;
    for r in regs.iter_mut() {
        r.mapped = true;
        r.retired.mapped();
    }
    let mut mappings = Vec::with_capacity(regs.len());
    for r in &regs {
        let mapping = (r.kind == Kind::Buffer)
            .then(|| buffer_mapping(r))
            .transpose();
        match mapping {
            Ok(m) => mappings.push(m),
            Err(e) => {
                // SAFETY: mapped together on `s` just above; nothing was handed out.
                if let Err(unmap) = unsafe { unmap_regs(&mut regs, &mut raws, s) } {
                    ctx.record_drop_error("unmapping after a failed map", unmap);
                }
                return Err(e);
            }
        }
    }
    let mut from = Build {
        items: regs.into_iter().zip(mappings),
        stream: s,
        stream_any: stream.as_any(crate::stream::adapter::Token),
    };
    let views = R::build(shape, &mut from).filter(|_| from.items.next().is_none());
    let Some(views) = views else {
        // Left mapped: the next map or unregister of each recovers it.
        return Err(Error::Internal {
            what: "map_all built views that do not match its registrations".into(),
        });
    };
    Ok(MappedAll {
        views,
        raws,
        stream: s,
        stream_any: stream.as_any(crate::stream::adapter::Token),
        ctx,
        done: false,
    })
}

/// The checks before a batch's map: at least one registration, all of the first one's CUDA
/// context, each ready to map on `stream` (`Registration::prepare_map`). Returns that context.
///
/// # Errors
/// [`UsageError::EmptyBatch`], [`UsageError::WrongCudaContext`], and `prepare_map`'s.
pub(super) fn prepare_batch(
    regs: &mut [&mut Registration],
    stream: &impl AsStream,
) -> Result<Arc<Context>> {
    let Some(ctx) = regs.first().map(|r| r.ctx.clone()) else {
        return Err(UsageError::EmptyBatch.into());
    };
    if regs.iter().any(|r| r.ctx.raw() != ctx.raw()) {
        return Err(UsageError::WrongCudaContext {
            what: "resource of the batch",
            owner: "the batch's first resource".into(),
        }
        .into());
    }
    for r in regs.iter_mut() {
        r.prepare_map(stream)?;
    }
    Ok(ctx)
}

/// Unmaps `raws`, the handles of `regs`, mapped together on `stream`, and books it.
///
/// # Safety
/// 1. All are mapped on `stream`, which is live, and no view of them is used after.
unsafe fn unmap_regs(
    regs: &mut [&mut Registration],
    raws: &mut [sys::CUgraphicsResource],
    stream: sys::CUstream,
) -> Result<()> {
    for r in regs.iter() {
        r.owner.check("cuGraphicsUnmapResources (not called)")?;
    }
    if let Some(first) = regs.first() {
        first.ctx.bind()?;
    }
    // SAFETY: (1): the stream is live.
    unsafe { crate::queue::check_not_capturing(stream, "cuGraphicsUnmapResources (not called)") }?;
    // As a single registration's unmap: not under a copy of cuda-gl's that `stream` may not be
    // ordered after. The batch's resources may be of several `Context`s, all on the first's
    // CUDA context (checked by `map_all`): `settle_queued` waits for every `Context` on it.
    if let Some(first) = regs.first() {
        first.ctx.settle_queued(super::registration::UNMAPPING)?;
    }
    // SAFETY: (1).
    unsafe { result::graphics::unmap(raws, stream) }.map_err(super::unmap_error)?;
    for r in regs.iter_mut() {
        r.unmapped(stream);
    }
    Ok(())
}

/// Resources mapped together by [`map_all`], with their typed views `V` (a [`ViewSet`]: a
/// [`MappedBuffer`](crate::MappedBuffer), a [`MappedImage`](crate::MappedImage), a `Vec` or array
/// of one kind, or a tuple of those). Dropping it unmaps them all in one call, on the stream they
/// were mapped on.
///
/// The views are reached through `Deref` (`batch.0`, `batch[i]`, `let (a, b) = &*batch;`) or
/// [`views`](Self::views), by shared reference only: they borrow the batch, and only the batch
/// unmaps them.
#[derive(Debug)]
#[must_use = "dropping the batch unmaps every resource at once"]
pub struct MappedAll<'a, V: ViewSet<'a>> {
    views: V,
    raws: Vec<sys::CUgraphicsResource>,
    stream: sys::CUstream,
    /// The stream object of the map, when it offers itself ([`AsStream::as_any`]).
    stream_any: Option<&'a dyn std::any::Any>,
    ctx: Arc<Context>,
    /// Unmapped, or the unmap failed and must not be retried (the registrations stay marked
    /// mapped and their next map or unregister recovers them).
    done: bool,
}

impl<'a, V: ViewSet<'a>> MappedAll<'a, V> {
    /// The typed views of the mapped resources, borrowed from the batch.
    pub fn views(&self) -> &V {
        &self.views
    }

    /// How many resources are mapped.
    pub fn len(&self) -> usize {
        self.raws.len()
    }

    /// Whether the batch is empty (never: `map_all` rejects empty lists).
    pub fn is_empty(&self) -> bool {
        self.raws.is_empty()
    }

    /// The stream object it was mapped on, when its type offers itself
    /// ([`AsStream::as_any`]): an adapter for another library's streams finds its stream here.
    #[allow(dead_code, reason = "used by the optional cudarc adapter only")]
    pub(crate) fn stream_any(&self) -> Option<&'a dyn std::any::Any> {
        self.stream_any
    }

    /// The stream it was mapped on.
    pub fn raw_stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Whether `resource` is one of the batch's graphics resources.
    #[allow(dead_code, reason = "used by the optional cudarc adapter only")]
    pub(crate) fn holds(&self, resource: sys::CUgraphicsResource) -> bool {
        self.raws.contains(&resource)
    }

    fn finish(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(());
        }
        let mut regs = Regs(Vec::with_capacity(self.raws.len()));
        self.views.registrations(&mut regs);
        // SAFETY: all mapped together on `self.stream`, whose stream is borrowed for the batch's
        // lifetime; every view is the batch's own and lent by shared reference only, so none is
        // used after.
        unsafe { unmap_regs(&mut regs.0, &mut self.raws, self.stream) }
    }

    /// Unmaps every resource now, with one call, and returns the driver's error.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] or [`Error::WrongGlContext`] when the GL context that registered a
    /// resource is not current (they stay mapped and are recovered later); [`Error::Timeout`]
    /// as [`Mapped::unmap`](crate::Mapped::unmap)'s (they stay mapped too); the
    /// driver's error from `cuGraphicsUnmapResources`.
    #[doc(alias = "cuGraphicsUnmapResources")]
    pub fn unmap(mut self) -> Result<()> {
        self.finish()
    }
}

impl<'a, V: ViewSet<'a>> std::ops::Deref for MappedAll<'a, V> {
    type Target = V;
    fn deref(&self) -> &V {
        &self.views
    }
}

impl<'a, V: ViewSet<'a>> Drop for MappedAll<'a, V> {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            // A timeout (the wait for cuda-gl's private stream) is recorded too.
            self.ctx
                .record_drop_wait("unmapping a batch", "cuStreamQuery", e);
        }
    }
}
