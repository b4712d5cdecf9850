// A frame stream's calls and drop go to the GL context current on the calling thread: it stays
// on the thread that created it.
use cuda_gl::external::FrameStream;

fn hand_off(stream: FrameStream) {
    std::thread::spawn(move || drop(stream));
}

fn main() {}
