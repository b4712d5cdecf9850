// An imported GL buffer's drop deletes GL objects in the context current on the dropping
// thread: it stays on the thread that imported it.
use cuda_gl::external::GlMemoryBuffer;

fn hand_off(buffer: GlMemoryBuffer) {
    std::thread::spawn(move || drop(buffer));
}

fn main() {}
