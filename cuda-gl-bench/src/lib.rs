//! The interop benchmark of cuda-gl lives in `benches/interop.rs`; this library is empty. Run it
//! with `cargo bench -p cuda-gl-bench -- [--quick | --iters N] [--out DIR]` (see the benchmark's
//! docs for every flag) on a machine with an NVIDIA GPU.
