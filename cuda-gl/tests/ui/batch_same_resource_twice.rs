// One resource cannot appear twice in a batch: both entries would borrow it mutably.
use cuda_gl::{RegisteredBuffer, Resource, Stream, map_all};

fn frame(res: &mut RegisteredBuffer, stream: &Stream) -> cuda_gl::Result<()> {
    let batch = map_all([Resource::from(&mut *res), Resource::from(&mut *res)], stream)?;
    drop(batch);
    Ok(())
}

fn main() {}
