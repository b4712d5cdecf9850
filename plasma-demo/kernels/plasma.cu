// Plasma kernels of plasma-demo. Compiled to plasma.ptx (beside this file) by `cargo xtask ptx`
// with NVRTC 12.0: --gpu-architecture=compute_75 --std=c++17 --fmad=false, no fast math.
// Self-contained on purpose: NVRTC's built-in declarations (uchar4, make_uchar4,
// cudaSurfaceObject_t, surf2Dwrite, sinf, cosf, sqrtf, fminf, fmaxf) are all it uses, so no CUDA
// toolkit headers are needed.
//
// The pixel function, exactly (every literal and every operation is f32, evaluated left to right
// as written; --fmad=false keeps `a * b + c` from being fused, so plasma-demo/src/plasma_cpu.rs
// reproduces it within +-1 per channel, the only differences being the last-ulp accuracy of
// sinf/cosf):
//
//   u  = (float)x / (float)w
//   v  = (float)y / (float)h
//   cx = u + 0.5f * sinf(t * 0.2f)
//   cy = v + 0.5f * cosf(t * 0.3f)
//   value = sinf(u * 10.0f + t)
//         + sinf((v * 10.0f + t) * 0.5f)
//         + sinf((u * 10.0f + v * 10.0f + t) * 0.5f)
//         + sinf(sqrtf(100.0f * (cx * cx + cy * cy) + 1.0f) + t)
//   for each colour channel c with phase p in (r: 0.0f, g: 0.33f, b: 0.67f):
//     k    = 0.5f + 0.5f * cosf(6.2831853f * (value * 0.25f + p))
//     byte = (unsigned char)fminf(fmaxf(k * 255.0f + 0.5f, 0.0f), 255.0f)   // truncation
//   alpha = 255
//
// Pixel (x, y) of a w x h image is stored at index y * w + x (row-major, RGBA8); row 0 is the
// bottom row of a GL texture, so nothing is flipped here.

__device__ unsigned char plasma_channel(float value, float phase)
{
    float k = 0.5f + 0.5f * cosf(6.2831853f * (value * 0.25f + phase));
    return (unsigned char)fminf(fmaxf(k * 255.0f + 0.5f, 0.0f), 255.0f);
}

// The colour of pixel (x, y) of a w x h image at time t (seconds); see the formula above.
__device__ uchar4 plasma(int x, int y, int w, int h, float t)
{
    float u = (float)x / (float)w;
    float v = (float)y / (float)h;
    float cx = u + 0.5f * sinf(t * 0.2f);
    float cy = v + 0.5f * cosf(t * 0.3f);
    float value = sinf(u * 10.0f + t)
                + sinf((v * 10.0f + t) * 0.5f)
                + sinf((u * 10.0f + v * 10.0f + t) * 0.5f)
                + sinf(sqrtf(100.0f * (cx * cx + cy * cy) + 1.0f) + t);
    return make_uchar4(plasma_channel(value, 0.0f),
                       plasma_channel(value, 0.33f),
                       plasma_channel(value, 0.67f),
                       255);
}

// Writes a width x height RGBA8 frame into a linear buffer (a mapped pixel buffer object):
// out[y * width + x] = plasma(x, y, width, height, t). Any launch shape works (2D grid-stride
// loops); blocks of 16 x 16 and a grid covering the image are the intended shape.
extern "C" __global__ void plasma_pbo(uchar4* out, int width, int height, float t)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            out[(size_t)y * (size_t)width + (size_t)x] = plasma(x, y, width, height, t);
        }
    }
}

// Writes the same pixels as plasma_pbo into a surface object bound to an RGBA8 array (a mapped GL
// texture). The x coordinate of surf2Dwrite is in bytes, hence x * 4.
extern "C" __global__ void plasma_surface(cudaSurfaceObject_t surf, int width, int height, float t)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            surf2Dwrite(plasma(x, y, width, height, t), surf, x * 4, y);
        }
    }
}

// The GPU's nanosecond clock (%globaltimer): a wait in nanoseconds needs no clock rate, unlike
// clock64(), whose cycles change with the SM clock.
__device__ unsigned long long plasma_globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Test hook of the watchdog (plasma-demo --debug-spin-ms, the interop benchmark's
// --debug-spin-ms): every thread spins until ns nanoseconds have passed since it started, and
// writes nothing. It keeps the stream busy longer than the watchdog's limit, as a hung GPU would,
// without a fault: the GPU is healthy again when it ends or when its process exits. Launch it with
// one block of one thread.
extern "C" __global__ void debug_spin(unsigned long long ns)
{
    unsigned long long start = plasma_globaltimer_ns();
    while (plasma_globaltimer_ns() - start < ns) {
    }
}

// The benchmark's latency probe: stores the GPU's global timer (ns) in `out[i]`, so that a
// frame's start can be compared with GL timestamp queries on the same clock. Launch it with one
// block of one thread, with `i` inside `out`.
extern "C" __global__ void stamp_globaltimer(unsigned long long* out, unsigned i)
{
    out[i] = plasma_globaltimer_ns();
}
