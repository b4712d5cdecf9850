// A layer's surface cannot be used after the guard is unmapped: `unmap` consumes the guard that
// the surface borrows.
use cuda_gl::{LaunchConfig, Module, RegisteredImage, Stream};

fn render(res: &mut RegisteredImage, stream: &Stream, module: &Module) -> cuda_gl::Result<()> {
    let kernel = module.function("fill")?;
    let mapped = res.map(stream)?;
    let layer = mapped.surface_at(3, 0)?;
    mapped.unmap()?;
    // SAFETY: none; this must not compile.
    unsafe { kernel.launch(LaunchConfig::for_image(64, 64), stream, (layer, 64i32, 64i32)) }?;
    Ok(())
}

fn main() {}
