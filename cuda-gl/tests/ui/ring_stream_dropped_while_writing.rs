// The stream of a CUDA write to an external-ring slot must outlive the write guard: `finish`
// records the slot's event on it.
use cuda_gl::external::ExternalRing;
use cuda_gl::{Context, Stream, StreamFlags};
use std::sync::Arc;

fn write(ring: &mut ExternalRing, ctx: &Arc<Context>) -> cuda_gl::Result<()> {
    let stream = Stream::new(ctx, StreamFlags::NonBlocking)?;
    let write = ring.write(0, &stream)?;
    drop(stream);
    write.finish()?;
    Ok(())
}

fn main() {}
