// A mapping guard stays on the thread that mapped it.
use cuda_gl::{RegisteredBuffer, Stream};

fn frame(res: &mut RegisteredBuffer, stream: &Stream) {
    let mapped = res.map(stream).unwrap();
    std::thread::scope(|s| {
        s.spawn(move || drop(mapped));
    });
}

fn main() {}
