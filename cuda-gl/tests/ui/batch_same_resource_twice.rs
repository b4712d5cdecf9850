// One resource cannot appear twice in a batch: both entries would borrow it mutably.
use cuda_gl::{RegisteredBuffer, Stream, map_all};

fn frame(res: &mut RegisteredBuffer, stream: &Stream) -> cuda_gl::Result<()> {
    let batch = map_all((&mut *res, &mut *res), stream)?;
    drop(batch);
    Ok(())
}

fn main() {}
