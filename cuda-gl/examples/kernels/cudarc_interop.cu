// The kernel of the cudarc example and of cuda-gl/tests/cudarc_interop.rs. Compiled to
// cudarc_interop.ptx (beside this file) by `cargo xtask ptx` with NVRTC 12.0:
// --gpu-architecture=compute_75 --std=c++17 --fmad=false. Self-contained: only NVRTC's built-in
// declarations are used.

// The gradient of frame `frame` at pixel (x, y), as an RGBA8 pixel packed little-endian
// (r | g << 8 | b << 16 | a << 24): r = x, g = y, b = frame (each mod 256), a = 255.
__device__ unsigned gradient(unsigned x, unsigned y, unsigned frame)
{
    return (x & 0xffu) | ((y & 0xffu) << 8) | ((frame & 0xffu) << 16) | (0xffu << 24);
}

// pixels[y * width + x] ^= gradient(x, y, frame) for every pixel of a width x height RGBA8 image,
// one 32-bit word per pixel. It reads the old contents, so a buffer that starts zeroed ends up
// holding the gradient. Grid-stride loops: any 2D launch covers the image.
extern "C" __global__ void xor_gradient_rgba8(unsigned* pixels, unsigned width, unsigned height,
                                              unsigned frame)
{
    for (unsigned y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (unsigned x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            pixels[y * width + x] ^= gradient(x, y, frame);
        }
    }
}
