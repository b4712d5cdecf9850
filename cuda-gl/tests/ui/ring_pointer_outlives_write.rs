// The device pointer of an external-ring slot cannot be used after its CUDA write is finished:
// `finish` consumes the guard the pointer borrows, and GL may read the slot from then on.
use cuda_gl::external::ExternalRing;
use cuda_gl::{Function, LaunchConfig, Stream};

fn write_frame(ring: &mut ExternalRing, stream: &Stream, kernel: &Function) -> cuda_gl::Result<()> {
    let write = ring.write(0, stream)?;
    let ptr = write.device_ptr();
    write.finish()?;
    // SAFETY: none; this must not compile.
    unsafe { kernel.launch(LaunchConfig::for_elements(64), stream, (ptr, 64u32)) }?;
    Ok(())
}

fn main() {}
