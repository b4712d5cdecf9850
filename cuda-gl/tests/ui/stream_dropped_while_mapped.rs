// The stream a resource is mapped on must outlive the mapping, since the unmap runs on it.
use cuda_gl::{Context, RegisteredBuffer, Stream, StreamFlags};
use std::sync::Arc;

fn frame(res: &mut RegisteredBuffer, ctx: &Arc<Context>) -> cuda_gl::Result<()> {
    let stream = Stream::new(ctx, StreamFlags::NonBlocking)?;
    let mapped = res.map(&stream)?;
    drop(stream);
    drop(mapped);
    Ok(())
}

fn main() {}
