// A view of a batch is lent by shared reference: it cannot be taken out of the batch and
// unmapped (or dropped) on its own; only the batch unmaps, all at once.
use cuda_gl::{RegisteredBuffer, Stream, map_all};

fn frame(a: &mut RegisteredBuffer, b: &mut RegisteredBuffer, s: &Stream) -> cuda_gl::Result<()> {
    let batch = map_all([a, b], s)?;
    batch[0].unmap()
}

fn main() {}
