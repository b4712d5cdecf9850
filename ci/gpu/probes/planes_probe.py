"""Why does the GL `VideoPlanes::upload` cost ~2.4 ms when the handoff floor is ~340 µs?

What it measures (plain driver calls through ctypes, headless EGL on NVIDIA, no Rust): an NV12
frame's planes copied into an R8 (luma) and an RG8 (chroma) GL texture, as
cuda-gl/src/video/planes.rs does (one `cuGraphicsMapResources` of both textures,
`cuGraphicsSubResourceGetMappedArray` + `cuArray3DGetDescriptor_v2` of each, two
`cuMemcpy2DAsync_v2` into the mapped arrays, one `cuGraphicsUnmapResources`), and what each of
those choices costs, at 1920x1080 and 3840x2160. Every iteration is what a bench row does: a
memset stands for the decoder writing the frame's bytes into device memory, then the case's
CUDA calls, then GL's use of the textures (one texel of each copied into a 1x1 texture of its
format with glCopyImageSubData, then glFinish), so every iteration ends synchronized. Cases are
run in interleaved rounds (3 rounds of `--iters / 3` iterations each, in the same order), and
each reports its median in µs, p10-p90, its ratio to the same size's floor, and the median CPU
time of each phase (write, map, arrays, copies, unmap, gl/sync; join/rejoin around the whole
hand-off on the private stream; surface, kernel, destroy for the surface kernel), which says
which call blocks.

Axes (a case name says which):
- registration flags: NONE (what VideoPlanes does), WD (WRITE_DISCARD), SLS
  (SURFACE_LOAD_STORE), SLS|WD (the display target's interop texture), NONE+mapWD (NONE, with
  cuGraphicsResourceSetMapFlags(WRITE_DISCARD) per map);
- storage: immutable (glTexStorage2D, one level) or mutable (glTexImage2D level 0);
- map2 (both textures in one map call) vs each texture mapped, copied and unmapped alone,
  luma alone, chroma alone; map+unmap with no copy;
- GL's use of the written textures vs of untouched ones (is the cost in GL's first use after
  CUDA wrote?), and no GL use at all (cuStreamSynchronize instead);
- everything else cuda-gl calls per upload: its GL/context/capture queries (the GL owner
  checks' queries, the context bind's queries, the capture checks and mode exchanges), each
  copy on a private stream joined to the caller's by two events, and both;
- where the private stream's join costs: the copies on the private stream joined by events,
  ending with cuStreamSynchronize and no GL use (does the join cost only with GL's use?); and
  the whole hand-off on the private stream (map, both copies and unmap queued there, one join
  before by the caller's stream's event, one after by the private stream's), then GL's use;
- one RGBA8 texture: of the frame's size (as the display target's), and of the luma's bytes
  (w/4 x h), for the same flags;
- who writes a mapped RGBA8 texture of the frame's size: the copy engine (cuMemcpy2DAsync, the
  rows above) or SMs through a surface object (the display target's way): a SURFACE_LOAD_STORE
  texture (SLS|WD and SLS) mapped, its array taken, a surface object made over it, the kernel
  surface_fill_rgba8 of the committed cuda-gl/tests/kernels/test_kernels.ptx (loaded with
  cuModuleLoadDataEx, blocks of 16x16, a grid that covers the texture) with a seed per
  iteration, unmapped, then GL's use. The surface object is either made per map (and destroyed
  after the iteration's end) or made once and kept while the map returns the same array (what
  cuda-gl's surface cache does; the row says how many were made); beside them the same
  texture's cuMemcpy2DAsync rows, and both with cuStreamSynchronize and no GL use. Does GL's
  first use after a copy-engine write cost a handover that SM writes do not? If the PTX does not
  load (JIT) or a surface call fails, those rows say why and the others run.
Floors: the memset + cuStreamSynchronize + GL's use of untouched plane textures (the bench's
floor), the same with an RGBA8 texture, CUDA alone, GL alone; and, with no GL at all, the two
copies into plain CUDA arrays of R8 + RG8 texels vs RGBA8 texels of the same bytes (the copy's
own cost by texel size, which the wgpu planes pay too).

After the timing, for each flag set, what the driver keeps: a 64x36 R8 texture with two levels,
filled by GL, mapped and unmapped with no write (are levels 0 and 1 kept?), then level 0 copied
into (is level 1 kept?). Every copy case's textures are read back after each of its rounds
(texel (0, 0) of each plane must be the last frame's byte; for the surface kernel, texels (0, 0)
and (w-1, h-1) must be its pattern for the last seed: pattern(y*w + x, seed) =
((y*w + x) * 2654435761 mod 2^32) ^ seed, its bytes little-endian as r, g, b, a): `data ok` /
`DATA WRONG` (a round's DATA WRONG stays).

Run on the GPU host from the repository root with NVIDIA's EGL and the GL loader of .gl/
(`source .gpu/env.sh` of a bundle does both; without one, unpack .gl/*.deb into / with
`dpkg -x`, run ldconfig, and set __EGL_VENDOR_LIBRARY_FILENAMES to NVIDIA's 10_nvidia.json):
    python3 ci/gpu/probes/planes_probe.py [--iters 300] [--sizes 1920x1080,3840x2160]
        [--only SUBSTRING|FRIENDLY]... [--write-spin-us US] [--json PATH]
--write-spin-us US follows each frame's memset with a one-block kernel spinning US µs, in every
case and floor: run it with 0 and with 300 to see whether a long write (the display benchmark's
kernel) hides GL's handover after CUDA's copies, which the planes pay and the display target's
present seems not to.
--only keeps the cases whose names contain SUBSTRING, or those a friendly name selects (a
question's new rows with the rows they are compared to), repeatable (the union); the size's
floor always runs. Friendly names: `surface-kernel` (the surface kernel vs the copy, RGBA8),
`all-private` (the whole hand-off on the private stream), `join-nogl` (the join with no GL use),
`new-cases` (the three).
It needs nothing else (no nvcc, no cuda-python). Tried on a machine without NVIDIA's GPU only
with a stand-in libcuda, so its numbers there meant nothing; its calls are the driver API's.
Writes the table to stdout and, with --json (default $OUT/planes_probe.json when OUT is set),
every number as JSON.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_size_t, c_uint, c_uint64, c_void_p

# ---------------------------------------------------------------- EGL and GL



def load_library(name):
    try:
        return ctypes.CDLL(name)
    except OSError as e:
        sys.exit(f"planes_probe: cannot load {name} ({e}); see the docstring for the setup")


egl = load_library("libEGL.so.1")
egl.eglGetProcAddress.restype = c_void_p
egl.eglGetProcAddress.argtypes = [c_char_p]
EGLint = c_int32


def proc(name, restype, *args):
    p = egl.eglGetProcAddress(name.encode())
    if not p:
        raise RuntimeError(f"no {name}")
    return ctypes.CFUNCTYPE(restype, *args)(p)


def make_headless_gl_context():
    """An OpenGL 4.5 context on the first EGL device, current on this thread, no surface."""
    query_devices = proc("eglQueryDevicesEXT", c_uint, EGLint, POINTER(c_void_p), POINTER(EGLint))
    platform_display = proc("eglGetPlatformDisplayEXT", c_void_p, c_uint, c_void_p, POINTER(EGLint))
    devs, n = (c_void_p * 8)(), EGLint()
    query_devices(8, devs, byref(n))
    dpy = platform_display(0x313F, devs[0], None)  # EGL_PLATFORM_DEVICE_EXT
    egl.eglInitialize.argtypes = [c_void_p, c_void_p, c_void_p]
    if not egl.eglInitialize(dpy, None, None):
        raise RuntimeError("eglInitialize failed")
    egl.eglBindAPI(0x30A2)  # EGL_OPENGL_API
    attrs = (EGLint * 5)(0x3033, 0x0001, 0x3040, 0x0008, 0x3038)  # PBUFFER, OPENGL_BIT
    cfg, nc = c_void_p(), EGLint()
    egl.eglChooseConfig.argtypes = [c_void_p, POINTER(EGLint), POINTER(c_void_p), EGLint, POINTER(EGLint)]
    egl.eglChooseConfig(dpy, attrs, byref(cfg), 1, byref(nc))
    egl.eglCreateContext.restype = c_void_p
    egl.eglCreateContext.argtypes = [c_void_p, c_void_p, c_void_p, POINTER(EGLint)]
    ctx = egl.eglCreateContext(dpy, cfg, None, (EGLint * 5)(0x3098, 4, 0x30FB, 5, 0x3038))
    egl.eglMakeCurrent.argtypes = [c_void_p] * 4
    if not ctx or not egl.eglMakeCurrent(dpy, None, None, ctx):
        raise RuntimeError("eglCreateContext / eglMakeCurrent failed")
    egl.eglGetCurrentContext.restype = c_void_p


make_headless_gl_context()
U, I = c_uint, c_int
glGetString = proc("glGetString", c_char_p, U)
glGetError = proc("glGetError", U)
glFinish = proc("glFinish", None)
glGenTextures = proc("glGenTextures", None, I, POINTER(U))
glDeleteTextures = proc("glDeleteTextures", None, I, POINTER(U))
glBindTexture = proc("glBindTexture", None, U, U)
glTexStorage2D = proc("glTexStorage2D", None, U, I, U, I, I)
glTexImage2D = proc("glTexImage2D", None, U, I, I, I, I, I, U, U, c_void_p)
glTexParameteri = proc("glTexParameteri", None, U, U, I)
glPixelStorei = proc("glPixelStorei", None, U, I)
glTextureSubImage2D = proc("glTextureSubImage2D", None, U, I, I, I, I, I, U, U, c_void_p)
glGetTextureSubImage = proc("glGetTextureSubImage", None, U, I, I, I, I, I, I, I, U, U, I, c_void_p)
glCopyImageSubData = proc("glCopyImageSubData", None, *([U, U, I, I, I, I] * 2), I, I, I)
glGetIntegerv = proc("glGetIntegerv", None, U, POINTER(I))
glGenVertexArrays = proc("glGenVertexArrays", None, I, POINTER(U))
glBindVertexArray = proc("glBindVertexArray", None, U)
glIsVertexArray = proc("glIsVertexArray", ctypes.c_ubyte, U)
glCreateProgram = proc("glCreateProgram", U)
glIsProgram = proc("glIsProgram", ctypes.c_ubyte, U)
glObjectLabel = proc("glObjectLabel", None, U, U, I, c_char_p)
glGetObjectLabel = proc("glGetObjectLabel", None, U, U, I, POINTER(I), c_char_p)
GL_TEXTURE_2D, GL_UNSIGNED_BYTE = 0x0DE1, 0x1401
GL_R8, GL_RG8, GL_RGBA8 = 0x8229, 0x822B, 0x8058
GL_RED, GL_RG, GL_RGBA = 0x1903, 0x8227, 0x1908
FORMATS = {GL_R8: (GL_RED, 1), GL_RG8: (GL_RG, 2), GL_RGBA8: (GL_RGBA, 4)}

# ---------------------------------------------------------------- CUDA

cu = load_library("libcuda.so.1")
P = c_void_p


def sig(name, *args):
    f = getattr(cu, name)
    f.restype, f.argtypes = c_int, list(args)
    return f


cuInit = sig("cuInit", U)
cuDriverGetVersion = sig("cuDriverGetVersion", POINTER(I))
cuDeviceGet = sig("cuDeviceGet", POINTER(I), I)
cuDevicePrimaryCtxRetain = sig("cuDevicePrimaryCtxRetain", POINTER(P), I)
cuDevicePrimaryCtxGetState = sig("cuDevicePrimaryCtxGetState", I, POINTER(U), POINTER(I))
cuCtxSetCurrent = sig("cuCtxSetCurrent", P)
cuCtxGetCurrent = sig("cuCtxGetCurrent", POINTER(P))
cuStreamCreate = sig("cuStreamCreate", POINTER(P), U)
cuStreamSynchronize = sig("cuStreamSynchronize", P)
cuStreamIsCapturing = sig("cuStreamIsCapturing", P, POINTER(I))
cuThreadExchangeStreamCaptureMode = sig("cuThreadExchangeStreamCaptureMode", POINTER(I))
cuStreamWaitEvent = sig("cuStreamWaitEvent", P, P, U)
cuEventCreate = sig("cuEventCreate", POINTER(P), U)
cuEventRecord = sig("cuEventRecord", P, P)
cuEventQuery = sig("cuEventQuery", P)
cuMemAlloc = sig("cuMemAlloc_v2", POINTER(c_uint64), c_size_t)
cuMemsetD32Async = sig("cuMemsetD32Async", c_uint64, U, c_size_t, P)
cuGraphicsGLRegisterImage = sig("cuGraphicsGLRegisterImage", POINTER(P), U, U, U)
cuGraphicsUnregisterResource = sig("cuGraphicsUnregisterResource", P)
cuGraphicsResourceSetMapFlags = sig("cuGraphicsResourceSetMapFlags_v2", P, U)
cuGraphicsMapResources = sig("cuGraphicsMapResources", U, P, P)
cuGraphicsUnmapResources = sig("cuGraphicsUnmapResources", U, P, P)
cuGraphicsSubResourceGetMappedArray = sig("cuGraphicsSubResourceGetMappedArray", POINTER(P), P, U, U)


class MEMCPY2D(ctypes.Structure):
    _fields_ = [("srcXInBytes", c_size_t), ("srcY", c_size_t), ("srcMemoryType", c_int),
                ("srcHost", c_void_p), ("srcDevice", c_uint64), ("srcArray", c_void_p),
                ("srcPitch", c_size_t), ("dstXInBytes", c_size_t), ("dstY", c_size_t),
                ("dstMemoryType", c_int), ("dstHost", c_void_p), ("dstDevice", c_uint64),
                ("dstArray", c_void_p), ("dstPitch", c_size_t), ("WidthInBytes", c_size_t),
                ("Height", c_size_t)]


class ARRAY3D_DESCRIPTOR(ctypes.Structure):
    _fields_ = [("Width", c_size_t), ("Height", c_size_t), ("Depth", c_size_t),
                ("Format", c_int), ("NumChannels", c_uint), ("Flags", c_uint)]


class ARRAY_DESCRIPTOR(ctypes.Structure):
    _fields_ = [("Width", c_size_t), ("Height", c_size_t), ("Format", c_int),
                ("NumChannels", c_uint)]


class RESOURCE_DESC(ctypes.Structure):
    """CUDA_RESOURCE_DESC with resType CU_RESOURCE_TYPE_ARRAY (0): the union's first member is
    the CUarray, the union is 128 bytes (its `reserved` int[32]), flags follow it."""

    class _Res(ctypes.Union):
        _fields_ = [("hArray", c_void_p), ("reserved", c_int * 32)]

    _fields_ = [("resType", c_int), ("res", _Res), ("flags", c_uint)]


cuMemcpy2DAsync = sig("cuMemcpy2DAsync_v2", POINTER(MEMCPY2D), P)
cuArrayCreate = sig("cuArrayCreate_v2", POINTER(P), POINTER(ARRAY_DESCRIPTOR))
cuArray3DGetDescriptor = sig("cuArray3DGetDescriptor_v2", POINTER(ARRAY3D_DESCRIPTOR), P)
cuSurfObjectCreate = sig("cuSurfObjectCreate", POINTER(c_uint64), POINTER(RESOURCE_DESC))
cuSurfObjectDestroy = sig("cuSurfObjectDestroy", c_uint64)
cuModuleLoadDataEx = sig("cuModuleLoadDataEx", POINTER(P), c_char_p, U, POINTER(c_int), POINTER(P))
cuModuleGetFunction = sig("cuModuleGetFunction", POINTER(P), P, c_char_p)
cuLaunchKernel = sig("cuLaunchKernel", P, U, U, U, U, U, U, U, P, POINTER(P), POINTER(P))
MEM_DEVICE, MEM_ARRAY = 2, 3
NONE, WD, SLS = 0, 2, 4
FLAG_SETS = {"NONE": (NONE, 0), "WD": (WD, 0), "SLS": (SLS, 0), "SLS|WD": (SLS | WD, 0),
             "NONE+mapWD": (NONE, 2)}


class CudaFailed(RuntimeError):
    pass


def ck(r, what):
    if r != 0:
        raise CudaFailed(f"{what} -> CUresult {r}")


ck(cuInit(0), "cuInit")
dev = I()
ck(cuDeviceGet(byref(dev), 0), "cuDeviceGet")
ctx = P()
ck(cuDevicePrimaryCtxRetain(byref(ctx), dev), "cuDevicePrimaryCtxRetain")
ck(cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
stream, private = P(), P()
ck(cuStreamCreate(byref(stream), 1), "cuStreamCreate")
ck(cuStreamCreate(byref(private), 1), "cuStreamCreate (private)")
joined, done = P(), P()
ck(cuEventCreate(byref(joined), 2), "cuEventCreate")
ck(cuEventCreate(byref(done), 2), "cuEventCreate")

# ---------------------------------------------------------------- GL objects


def texture(internal, size, storage="immutable", levels=1):
    t = U()
    glGenTextures(1, byref(t))
    glBindTexture(GL_TEXTURE_2D, t.value)
    if storage == "immutable":
        glTexStorage2D(GL_TEXTURE_2D, levels, internal, size[0], size[1])
    else:
        fmt, _ = FORMATS[internal]
        for level in range(levels):
            glTexImage2D(GL_TEXTURE_2D, level, internal, max(size[0] >> level, 1),
                         max(size[1] >> level, 1), 0, fmt, GL_UNSIGNED_BYTE, None)
        glTexParameteri(GL_TEXTURE_2D, 0x813D, levels - 1)  # GL_TEXTURE_MAX_LEVEL
    glTexParameteri(GL_TEXTURE_2D, 0x2801, 0x2600)  # MIN_FILTER NEAREST
    glTexParameteri(GL_TEXTURE_2D, 0x2800, 0x2600)  # MAG_FILTER NEAREST
    glBindTexture(GL_TEXTURE_2D, 0)
    e = glGetError()
    if e:
        raise RuntimeError(f"making a {internal:#x} texture of {size}: GL error {e:#x}")
    return t.value


SINKS = {f: texture(f, (1, 1)) for f in (GL_R8, GL_RG8, GL_RGBA8)}


def gl_use(textures):
    """GL's use of `textures` [(name, internal)]: one texel of each into a sink, then glFinish."""
    for name, internal in textures:
        glCopyImageSubData(name, GL_TEXTURE_2D, 0, 0, 0, 0, SINKS[internal], GL_TEXTURE_2D,
                           0, 0, 0, 0, 1, 1, 1)
    glFinish()


def read_texel(name, internal, level=0, x=0, y=0):
    fmt, ch = FORMATS[internal]
    out = (ctypes.c_ubyte * ch)()
    glPixelStorei(0x0D05, 1)  # PACK_ALIGNMENT
    glGetTextureSubImage(name, level, x, y, 0, 1, 1, 1, fmt, GL_UNSIGNED_BYTE, ch, out)
    glPixelStorei(0x0D05, 4)
    return list(out)


# cuda-gl's owner check asks, per map and per unmap of each registration: the current context,
# the version (2 queries), its canary vertex array's label, the version again, the share group's
# canary program's label. Planted once here, as cuda-gl plants them.
CANARY_VAO, CANARY_PROG = U(), 0
glGenVertexArrays(1, byref(CANARY_VAO))
glBindVertexArray(CANARY_VAO.value)
glBindVertexArray(0)
glObjectLabel(0x8074, CANARY_VAO.value, -1, b"cuda-gl probe context canary")  # GL_VERTEX_ARRAY
CANARY_PROG = glCreateProgram()
glObjectLabel(0x82E2, CANARY_PROG, -1, b"cuda-gl probe group canary")  # GL_PROGRAM
LABEL, LABEL_LEN, GLV = ctypes.create_string_buffer(48), I(), I()


def owner_check():
    egl.eglGetCurrentContext()
    glGetIntegerv(0x821B, byref(GLV)); glGetIntegerv(0x821C, byref(GLV))  # MAJOR/MINOR_VERSION
    if glIsVertexArray(CANARY_VAO.value):
        glGetObjectLabel(0x8074, CANARY_VAO.value, 48, byref(LABEL_LEN), LABEL)
    glGetIntegerv(0x821B, byref(GLV)); glGetIntegerv(0x821C, byref(GLV))
    if glIsProgram(CANARY_PROG):
        glGetObjectLabel(0x82E2, CANARY_PROG, 48, byref(LABEL_LEN), LABEL)


STATE, ACTIVE, CUR, CAPTURING, MODE = U(), I(), P(), I(), I()


def bind():
    """cuda-gl's Context::bind: the primary context's state, then the current context."""
    ck(cuDevicePrimaryCtxGetState(dev, byref(STATE), byref(ACTIVE)), "cuDevicePrimaryCtxGetState")
    ck(cuCtxGetCurrent(byref(CUR)), "cuCtxGetCurrent")


def not_capturing(s):
    ck(cuStreamIsCapturing(s, byref(CAPTURING)), "cuStreamIsCapturing")
    if CAPTURING.value:
        raise CudaFailed("capturing")


def run_now(work, m=None):
    """cuda-gl's PrivateQueue::run: `work(private)` ordered after `stream`'s work so far and
    before its later work, by two events; with `m`, the phases "join" (up to the private
    stream's wait) and "rejoin" (from the end of `work`) are marked."""
    bind()
    MODE.value = 2  # CU_STREAM_CAPTURE_MODE_RELAXED
    ck(cuThreadExchangeStreamCaptureMode(byref(MODE)), "exchange")
    not_capturing(stream)
    ck(cuEventRecord(joined, stream), "record joined")
    r = cuEventQuery(joined)
    if r not in (0, 600):  # CUDA_SUCCESS, CUDA_ERROR_NOT_READY
        raise CudaFailed(f"cuEventQuery -> {r}")
    ck(cuStreamWaitEvent(private, joined, 0), "wait joined")
    if m:
        m("join")
    work(private)
    ck(cuEventRecord(done, private), "record done")
    ck(cuStreamWaitEvent(stream, done, 0), "wait done")
    not_capturing(stream)
    ck(cuThreadExchangeStreamCaptureMode(byref(MODE)), "exchange back")
    if m:
        m("rejoin")


# ---------------------------------------------------------------- the planes


class Image:
    """One GL texture, registered with `flags` (None: not registered)."""

    def __init__(self, internal, size, flags=None, storage="immutable", levels=1):
        self.internal, self.size = internal, size
        self.name = texture(internal, size, storage, levels)
        self.res, self.error = P(), None
        if flags is not None:
            reg, mapflags = FLAG_SETS[flags]
            r = cuGraphicsGLRegisterImage(byref(self.res), self.name, GL_TEXTURE_2D, reg)
            if r:
                self.error = f"cuGraphicsGLRegisterImage({flags}) -> CUresult {r}"
            elif mapflags:
                ck(cuGraphicsResourceSetMapFlags(self.res, mapflags), "cuGraphicsResourceSetMapFlags")

    @property
    def row(self):
        return self.size[0] * FORMATS[self.internal][1]

    def use(self):
        return (self.name, self.internal)


class Frame:
    """Device memory of one NV12 frame (packed), written by a memset per iteration; with
    `spin_us`, the memset is followed by a one-block launch of the test PTX's ext_fill_u32_slow
    that spins that long and writes nothing (n = 0): a decoder's work of that length, which the
    floor's sync waits for too."""

    def __init__(self, size, spin_us=0):
        w, h = size
        self.size, self.bytes = size, w * h * 3 // 2
        self.rgba_bytes = w * h * 4
        self.ptr = c_uint64()
        ck(cuMemAlloc(byref(self.ptr), self.rgba_bytes), "cuMemAlloc")
        self.byte = 0
        self.spin = None
        if spin_us > 0:
            fn, why = test_kernel("ext_fill_u32_slow")
            if fn is None:
                raise CudaFailed(f"--write-spin-us needs ext_fill_u32_slow: {why}")
            # (unsigned* out, unsigned n, unsigned seed, unsigned long long spin_ns)
            self.spin_args = (c_uint64(self.ptr.value), c_uint(0), c_uint(0),
                              c_uint64(spin_us * 1000))
            self.spin = (fn, (P * 4)(*[ctypes.cast(byref(a), c_void_p).value
                                       for a in self.spin_args]))

    def write(self, i):
        self.byte = i % 251 + 1
        ck(cuMemsetD32Async(self.ptr.value, self.byte * 0x01010101, self.rgba_bytes // 4, stream),
           "cuMemsetD32Async")
        if self.spin is not None:
            fn, params = self.spin
            ck(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, params, None),
               "cuLaunchKernel(ext_fill_u32_slow)")


def map_(images, s):
    res = (P * len(images))(*[im.res.value for im in images])
    ck(cuGraphicsMapResources(len(images), res, s), "cuGraphicsMapResources")
    return res


def unmap(res, s):
    ck(cuGraphicsUnmapResources(len(res), res, s), "cuGraphicsUnmapResources")


DESC = ARRAY3D_DESCRIPTOR()


def array_of(image):
    a = P()
    ck(cuGraphicsSubResourceGetMappedArray(byref(a), image.res, 0, 0), "GetMappedArray")
    ck(cuArray3DGetDescriptor(byref(DESC), a), "cuArray3DGetDescriptor")
    if (DESC.Width, DESC.Height) != image.size:
        raise CudaFailed(f"mapped array {DESC.Width}x{DESC.Height}, texture {image.size}")
    return a.value


def copy(array, src, pitch, row, rows, s):
    c = MEMCPY2D(srcMemoryType=MEM_DEVICE, srcDevice=src, srcPitch=pitch,
                 dstMemoryType=MEM_ARRAY, dstArray=array, WidthInBytes=row, Height=rows)
    ck(cuMemcpy2DAsync(byref(c), s), "cuMemcpy2DAsync")


def plane_sources(frame, images):
    """(address, pitch) of each image's rows in the frame: the luma at 0, the chroma after it;
    an RGBA8 texture of the frame's size reads the frame's first w*h*4 bytes."""
    w, h = frame.size
    out = []
    for im in images:
        if im.internal == GL_RG8:
            out.append((frame.ptr.value + w * h, w))
        else:
            out.append((frame.ptr.value, im.row))
    return out


# ---------------------------------------------------------------- the surface kernel

PTX_PATH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                         "cuda-gl", "tests", "kernels", "test_kernels.ptx"))
_FILL = {}


def fill_kernel():
    """`surface_fill_rgba8(cudaSurfaceObject_t surf, int width, int height, unsigned seed)` of
    the committed test PTX, JIT-compiled once: (CUfunction, None), or (None, why not)."""
    return test_kernel("surface_fill_rgba8")


def test_kernel(name):
    """Kernel `name` of the committed test PTX, JIT-compiled once: (CUfunction, None), or
    (None, why not)."""
    if "module" not in _FILL:
        try:
            with open(PTX_PATH, "rb") as f:
                ptx = f.read()
        except OSError as e:
            _FILL["module"] = (None, f"reading {PTX_PATH}: {e}")
            return _FILL["module"]
        log = ctypes.create_string_buffer(8192)
        # CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
        options = (c_int * 2)(5, 6)
        values = (P * 2)(ctypes.cast(log, c_void_p).value, len(log))
        module = P()
        r = cuModuleLoadDataEx(byref(module), ptx, 2, options, values)
        if r:
            why = log.value.decode(errors="replace").strip()
            _FILL["module"] = (None, f"cuModuleLoadDataEx({os.path.basename(PTX_PATH)}) -> "
                                     f"CUresult {r}" + (f": {why}" if why else ""))
        else:
            _FILL["module"] = (module, None)
    module, why = _FILL["module"]
    if module is None:
        return None, why
    if name not in _FILL:
        fn = P()
        r = cuModuleGetFunction(byref(fn), module, name.encode())
        _FILL[name] = (fn.value, None) if r == 0 else \
            (None, f"cuModuleGetFunction({name}) -> CUresult {r}")
    return _FILL[name]


def pattern(i, seed):
    """test_kernels.cu's pattern(i, seed): (i * 2654435761u) ^ seed, mod 2^32."""
    return ((i * 2654435761) & 0xFFFFFFFF) ^ seed


def pattern_texel(x, y, width, seed):
    """The RGBA8 texel surface_fill_rgba8 writes at (x, y): pattern(y * width + x)'s bytes,
    little-endian (r = bits 0-7, ..., a = bits 24-31)."""
    p = pattern(y * width + x, seed)
    return [p & 0xFF, (p >> 8) & 0xFF, (p >> 16) & 0xFF, p >> 24]


def seed_of(i):
    """The kernel's seed in iteration i: every byte changes from one iteration to the next."""
    return (i * 0x9E3779B9 + 0x01234567) & 0xFFFFFFFF


def surface_create(array):
    d = RESOURCE_DESC(resType=0)  # CU_RESOURCE_TYPE_ARRAY
    d.res.hArray = array
    s = c_uint64()
    ck(cuSurfObjectCreate(byref(s), byref(d)), "cuSurfObjectCreate")
    return s.value


class Fill:
    """One launch of surface_fill_rgba8 over a w x h RGBA8 surface, blocks of 16x16, a grid
    that covers it; the arguments live here, so a launch only sets them."""

    def __init__(self, fn, size):
        self.fn, (self.w, self.h) = fn, size
        self.surf, self.width, self.height, self.seed = c_uint64(), c_int(size[0]), c_int(size[1]), c_uint()
        self.params = (P * 4)(*[ctypes.cast(byref(a), c_void_p).value
                                for a in (self.surf, self.width, self.height, self.seed)])

    def launch(self, surf, seed, s):
        self.surf.value, self.seed.value = surf, seed
        ck(cuLaunchKernel(self.fn, (self.w + 15) // 16, (self.h + 15) // 16, 1, 16, 16, 1, 0, s,
                          self.params, None), "cuLaunchKernel(surface_fill_rgba8)")


# ---------------------------------------------------------------- the cases

# --only's friendly names: each selects the cases of one question with what they are compared to
# (a name is matched whole; any other --only value is a substring of case names).
SURFACE, ALL_PRIVATE, JOIN_NO_GL, NEW = "surface-kernel", "all-private", "join-nogl", "new-cases"
FRIENDLY = {
    SURFACE: "RGBA8 of the frame's size written by the surface kernel (SM stores) vs by "
             "cuMemcpy2DAsync (copy engine), with GL's use and with none",
    ALL_PRIVATE: "the planes with map, copies and unmap all on the private stream, vs on the "
                 "caller's and vs only the copies on the private one",
    JOIN_NO_GL: "the planes with the copies on the private stream and no GL use (sync), vs the "
                "same with GL's use and vs no join and no GL use",
    NEW: "all three",
}


class Case:
    def __init__(self, size, name, body, images=(), checks=(), tags=(), expect=None):
        self.size, self.name, self.body = size, name, body
        self.images, self.checks = list(images), list(checks)
        self.tags = set(tags) | ({NEW} if tags else set())
        self.expect = expect  # None, or () -> [(image, x, y, wanted texel bytes)]
        self.samples, self.phases, self.error, self.data, self.note = [], {}, None, None, None


def mark_phases(case, marks):
    for (_, a), (label, b) in zip(marks, marks[1:]):
        case.phases.setdefault(label, []).append((b - a) * 1e6)


def make_cases(size, frame):
    w, h = size
    chroma = (w // 2, h // 2)
    cases = []
    untouched = [Image(GL_R8, size), Image(GL_RG8, chroma)]
    untouched_rgba = Image(GL_RGBA8, size)

    def planes(flags, storage="immutable"):
        return [Image(GL_R8, size, flags, storage), Image(GL_RG8, chroma, flags, storage)]

    def add(name, body, images=(), checks=(), tags=(), expect=None):
        cases.append(Case(size, name, body, images, checks, tags, expect))
        return cases[-1]

    def floor(use):
        def body(i, m):
            frame.write(i); m("write")
            ck(cuStreamSynchronize(stream), "sync"); m("sync")
            gl_use(use); m("gl")
        return body

    add("floor: write + sync + GL use of untouched planes", floor([t.use() for t in untouched]))
    add("floor RGBA8: write + sync + GL use of an untouched RGBA8", floor([untouched_rgba.use()]),
        tags=(SURFACE,))

    def cuda_alone(i, m):
        frame.write(i); m("write")
        ck(cuStreamSynchronize(stream), "sync"); m("sync")
    add("CUDA alone: write + sync", cuda_alone, tags=(JOIN_NO_GL,))
    add("GL alone: GL use of untouched planes", lambda i, m: (gl_use([t.use() for t in untouched]), m("gl")))

    def cuda_arrays(shapes):
        """Plain CUDA arrays (no GL) of (width, height, channels) 8-bit texels, and the frame's
        rows they take, as for the planes: does a copy into R8 / RG8 texels cost more than into
        RGBA8 ones of the same bytes?"""
        out = []
        for (aw, ah, ch), (src, pitch) in shapes:
            a = P()
            desc = ARRAY_DESCRIPTOR(Width=aw, Height=ah, Format=0x01, NumChannels=ch)  # UINT8
            ck(cuArrayCreate(byref(a), byref(desc)), "cuArrayCreate")
            out.append((a.value, src, pitch, aw * ch, ah))

        def body(i, m):
            frame.write(i); m("write")
            for a, src, pitch, row, rows in out:
                copy(a, src, pitch, row, rows, stream)
            m("copies")
            ck(cuStreamSynchronize(stream), "sync"); m("sync")
        return body

    luma_src, chroma_src = (frame.ptr.value, w), (frame.ptr.value + w * h, w)
    add("CUDA alone: write + copies into plain CUDA arrays R8 + RG8 (no GL) + sync",
        cuda_arrays([((w, h, 1), luma_src), ((w // 2, h // 2, 2), chroma_src)]))
    add("CUDA alone: write + copies into plain CUDA arrays RGBA8 of the same bytes + sync",
        cuda_arrays([((w // 4, h, 4), luma_src), ((w // 4, h // 2, 4), chroma_src)]))

    def upload(images, together=True, copies=True, use="written", emulate=()):
        """The body of one upload of `images` from the frame; `emulate` adds cuda-gl's other
        calls: "queries" (GL owner checks, context binds, capture checks), "joins" (each copy
        on the private stream, joined to the caller's by two events)."""
        queries, joins = "queries" in emulate, "joins" in emulate
        def body(i, m):
            frame.write(i); m("write")
            groups = [images] if together else [[im] for im in images]
            for group in groups:
                if queries:
                    for _ in group:
                        owner_check(); bind(); not_capturing(stream)
                res = map_(group, stream); m("map")
                if copies:
                    arrays = []
                    for im in group:
                        if queries:
                            bind()
                        arrays.append(array_of(im))
                    m("arrays")
                    for im, a, (src, pitch) in zip(group, arrays, plane_sources(frame, group)):
                        rows = im.size[1]
                        if joins:
                            run_now(lambda p, a=a, src=src, pitch=pitch, im=im, rows=rows:
                                    copy(a, src, pitch, im.row, rows, p))
                        else:
                            copy(a, src, pitch, im.row, rows, stream)
                    m("copies")
                if queries:
                    for _ in group:
                        owner_check()
                    bind(); not_capturing(stream)
                unmap(res, stream); m("unmap")
            if use == "written":
                gl_use([im.use() for im in images]); m("gl")
            elif use == "untouched":
                gl_use([t.use() for t in untouched]); m("gl")
            else:
                ck(cuStreamSynchronize(stream), "sync"); m("sync")
        return body

    def all_private(images):
        """The whole hand-off on the private stream: one join (the caller's stream's record, the
        private stream's wait), map, arrays, copies and unmap queued on the private stream, the
        join back (its record, the caller's wait), then GL's use; cuda-gl's PrivateQueue::run
        around all of it, as one call."""
        def body(i, m):
            frame.write(i); m("write")

            def work(p):
                res = map_(images, p); m("map")
                arrays = [array_of(im) for im in images]; m("arrays")
                for im, a, (src, pitch) in zip(images, arrays, plane_sources(frame, images)):
                    copy(a, src, pitch, im.row, im.size[1], p)
                m("copies")
                unmap(res, p); m("unmap")
            run_now(work, m)
            gl_use([im.use() for im in images]); m("gl")
        return body

    def surface_fill(image, per_map, use="written"):
        """map, the array (+ its descriptor, as cuda-gl asks), a surface object over it (created
        per map and destroyed after the iteration's end, or created once and kept while the map
        returns the same array, as cuda-gl's cache does), surface_fill_rgba8 with this
        iteration's seed, unmap; then GL's use, or cuStreamSynchronize with `use` "none".
        Returns (body, expect, note): expect says what texels (0, 0) and (w-1, h-1) must hold,
        note how many surface objects were created."""
        fn, _ = fill_kernel()
        fill = Fill(fn, image.size) if fn else None
        state = {"seed": None, "kept": None, "created": 0}
        iw, ih = image.size

        def body(i, m):
            frame.write(i); m("write")
            res = map_([image], stream); m("map")
            made = None
            try:
                a = array_of(image); m("arrays")
                if per_map:
                    made = surf = surface_create(a)
                    state["created"] += 1
                else:
                    key = (a, DESC.Width, DESC.Height, DESC.Depth, DESC.Format, DESC.NumChannels)
                    if state["kept"] is None or state["kept"][0] != key:
                        if state["kept"] is not None:
                            # no pending work uses it: every iteration ends synchronized
                            ck(cuSurfObjectDestroy(state["kept"][1]), "cuSurfObjectDestroy")
                            state["kept"] = None
                        state["kept"] = (key, surface_create(a))
                        state["created"] += 1
                    surf = state["kept"][1]
                m("surface")
                seed = seed_of(i)
                fill.launch(surf, seed, stream)
                state["seed"] = seed
                m("kernel")
            except CudaFailed:
                cuGraphicsUnmapResources(1, res, stream)
                cuStreamSynchronize(stream)
                if made is not None:
                    cuSurfObjectDestroy(made)
                raise
            unmap(res, stream); m("unmap")
            if use == "written":
                gl_use([image.use()]); m("gl")
            else:
                ck(cuStreamSynchronize(stream), "sync"); m("sync")
            if per_map:
                # after the iteration's end (GL's use waited for the unmap, which waited for the
                # kernel), so no pending work uses it
                ck(cuSurfObjectDestroy(made), "cuSurfObjectDestroy"); m("destroy")

        def expect():
            seed = state["seed"]
            if seed is None:
                return []
            return [(image, x, y, pattern_texel(x, y, iw, seed)) for x, y in ((0, 0), (iw - 1, ih - 1))]

        def note():
            return f"{state['created']} surface object(s) created"
        return body, expect, note

    for flags in FLAG_SETS:
        for storage in ("immutable", "mutable"):
            ims = planes(flags, storage)
            tag = f"{flags} {storage}"
            add(f"{tag}: map2 + unmap", upload(ims, copies=False), ims)
            add(f"{tag}: map2 + 2 copies + unmap", upload(ims), ims, checks=ims,
                tags=(ALL_PRIVATE,) if storage == "immutable" and flags in ("NONE", "WD", "SLS|WD")
                else ())
    for flags in ("NONE", "WD", "SLS|WD"):
        ims = planes(flags)
        tag = f"{flags} immutable"
        add(f"{tag}: each mapped, copied, unmapped alone", upload(ims, together=False), ims, ims)
        add(f"{tag}: luma alone (map, copy, unmap, GL use)", upload(ims[:1]), ims[:1], ims[:1])
        add(f"{tag}: chroma alone (map, copy, unmap, GL use)", upload(ims[1:]), ims[1:], ims[1:])
        add(f"{tag}: map2 + 2 copies + unmap, GL uses UNTOUCHED textures",
            upload(ims, use="untouched"), ims, ims)
        add(f"{tag}: map2 + 2 copies + unmap + sync, NO GL use", upload(ims, use="none"), ims, ims,
            tags=(JOIN_NO_GL,))
        add(f"{tag}: map2 + 2 copies + unmap + cuda-gl's GL/context/capture queries",
            upload(ims, emulate=("queries",)), ims, ims)
        add(f"{tag}: map2 + 2 copies on a private stream joined by events + unmap",
            upload(ims, emulate=("joins",)), ims, ims, tags=(ALL_PRIVATE, JOIN_NO_GL))
        add(f"{tag}: map2 + 2 copies on a private stream joined by events + unmap + sync, NO GL use",
            upload(ims, use="none", emulate=("joins",)), ims, ims, tags=(JOIN_NO_GL,))
        add(f"{tag}: map2 + 2 copies + unmap ALL on a private stream joined by events",
            all_private(ims), ims, ims, tags=(ALL_PRIVATE,))
        add(f"{tag}: map2 + 2 copies + unmap with every cuda-gl call",
            upload(ims, emulate=("queries", "joins")), ims, ims)
    for flags in ("NONE", "WD", "SLS|WD", "SLS"):
        surf = flags in ("SLS|WD", "SLS")
        full = [Image(GL_RGBA8, size, flags)]
        add(f"{flags} RGBA8 {w}x{h}: map + copy + unmap", upload(full), full, full,
            tags=(SURFACE,) if surf else ())
        if surf:
            modes = (("per map", "written"), ("kept across maps", "written"), ("kept", "none")) \
                if flags == "SLS|WD" else (("kept across maps", "written"),)
            for mode, use in modes:
                if use == "none":
                    plain = [Image(GL_RGBA8, size, flags)]
                    add(f"{flags} RGBA8 {w}x{h}: map + copy + unmap + sync, NO GL use",
                        upload(plain, use="none"), plain, plain, tags=(SURFACE,))
                one = Image(GL_RGBA8, size, flags)
                body, expect, note = surface_fill(one, per_map=mode == "per map", use=use)
                c = add(f"{flags} RGBA8 {w}x{h}: map + surface kernel + unmap (surface object {mode})"
                        + (" + sync, NO GL use" if use == "none" else ""),
                        body, [one], tags=(SURFACE,), expect=expect)
                c.note = note
                c.error = fill_kernel()[1]
        if flags != "SLS":
            quarter = [Image(GL_RGBA8, (w // 4, h), flags)]
            add(f"{flags} RGBA8 {w // 4}x{h} (the luma's bytes): map + copy + unmap", upload(quarter),
                quarter, quarter)
    return cases


def run_case(case, iters, start):
    bad = [im.error for im in case.images if im.error]
    if bad and not case.error:
        case.error = bad[0]
    if case.error:
        return
    try:
        for i in range(start, start + iters):
            marks = [("start", time.perf_counter())]
            case.body(i, lambda label: marks.append((label, time.perf_counter())))
            case.samples.append((marks[-1][1] - marks[0][1]) * 1e6)
            mark_phases(case, marks)
    except CudaFailed as e:
        case.error = str(e)
        glFinish()
        cuStreamSynchronize(stream)


def check_data(case, frame):
    """Texel (0, 0) of every written texture holds the last frame's byte; for a case with
    `expect` (the surface kernel's), the texels it names hold what it says. A round's DATA WRONG
    stays, whatever later rounds read."""
    if case.error or not (case.checks or case.expect) or (case.data or "").startswith("DATA WRONG"):
        return
    if case.expect:
        wanted = case.expect()
        if not wanted:
            case.data = "DATA WRONG (nothing was written)"
            return
        got = [read_texel(im.name, im.internal, 0, x, y) for im, x, y, _ in wanted]
        want = [t for _, _, _, t in wanted]
        case.data = "data ok" if got == want else \
            f"DATA WRONG (texels {[(x, y) for _, x, y, _ in wanted]}: want {want}, got {got})"
        return
    want = frame.byte
    got = [read_texel(im.name, im.internal) for im in case.checks]
    case.data = "data ok" if all(all(b == want for b in t) for t in got) else \
        f"DATA WRONG (want {want}, got {got})"


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def report(cases, out):
    by_size = {}
    for c in cases:
        by_size.setdefault(c.size, []).append(c)
    for size, group in by_size.items():
        floor = statistics.median(group[0].samples) if group[0].samples else float("nan")
        width = max([78] + [len(c.name) for c in group])
        print(f"\n== {size[0]}x{size[1]} (floor {floor:.1f} µs)", flush=True)
        for c in group:
            if c.error:
                print(f"  {c.name:<{width}} ERROR {c.error}", flush=True)
                out.append({"size": list(size), "case": c.name, "error": c.error})
                continue
            if not c.samples:
                print(f"  {c.name:<{width}} no samples", flush=True)
                continue
            med = statistics.median(c.samples)
            phases = {k: statistics.median(v) for k, v in c.phases.items()}
            ph = " ".join(f"{k} {v:.0f}" for k, v in phases.items())
            note = c.note() if callable(c.note) else c.note
            print(f"  {c.name:<{width}} {med:8.1f} µs  ({pct(c.samples, .1):.0f}-{pct(c.samples, .9):.0f})"
                  f"  x{med / floor:5.2f}  [{ph}]  {c.data or ''}{'; ' + note if note else ''}", flush=True)
            row = {"size": list(size), "case": c.name, "median_us": med,
                   "p10_us": pct(c.samples, .1), "p90_us": pct(c.samples, .9),
                   "ratio_to_floor": med / floor, "phase_median_us": phases,
                   "n": len(c.samples), "data": c.data}
            if note:
                row["note"] = note
            out.append(row)


def kept_after_map(out):
    """What each flag set keeps of a 2-level R8 texture GL filled, when mapped and unmapped
    with no write, then when level 0 is copied into."""
    print("\n== what the driver keeps (64x36 R8, 2 levels, filled by GL: level 0 = 17, level 1 = 34)")
    size = (64, 36)
    src = c_uint64()
    ck(cuMemAlloc(byref(src), 64 * 36), "cuMemAlloc")
    ck(cuMemsetD32Async(src.value, 51 * 0x01010101, 64 * 36 // 4, stream), "memset")
    ck(cuStreamSynchronize(stream), "sync")
    for flags in FLAG_SETS:
        for storage in ("immutable", "mutable"):
            im = Image(GL_R8, size, flags, storage, levels=2)
            if im.error:
                print(f"  {flags} {storage}: {im.error}")
                continue
            for level, byte in ((0, 17), (1, 34)):
                lw, lh = size[0] >> level, size[1] >> level
                data = (ctypes.c_ubyte * (lw * lh))(*([byte] * (lw * lh)))
                glPixelStorei(0x0CF5, 1)  # UNPACK_ALIGNMENT
                glTextureSubImage2D(im.name, level, 0, 0, lw, lh, GL_RED, GL_UNSIGNED_BYTE, data)
                glPixelStorei(0x0CF5, 4)
            glFinish()
            try:
                res = map_([im], stream)
                unmap(res, stream)
                glFinish()
                after_map = (read_texel(im.name, GL_R8, 0, 5, 5)[0], read_texel(im.name, GL_R8, 1, 5, 5)[0])
                res = map_([im], stream)
                copy(array_of(im), src.value, 64, 64, 36, stream)
                unmap(res, stream)
                glFinish()
                after_copy = (read_texel(im.name, GL_R8, 0, 5, 5)[0], read_texel(im.name, GL_R8, 1, 5, 5)[0])
            except CudaFailed as e:
                print(f"  {flags} {storage}: {e}")
                continue
            line = (f"  {flags:<11} {storage:<9}: map+unmap, no write: level 0 {after_map[0]} "
                    f"({'kept' if after_map[0] == 17 else 'NOT kept'}), level 1 {after_map[1]} "
                    f"({'kept' if after_map[1] == 34 else 'NOT kept'}); level 0 copied (51): "
                    f"level 0 {after_copy[0]}, level 1 {after_copy[1]} "
                    f"({'kept' if after_copy[1] == 34 else 'NOT kept'})")
            print(line, flush=True)
            out.append({"kept": flags, "storage": storage, "after_map": after_map,
                        "after_copy": after_copy})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--only", action="append", default=None, metavar="NAME",
                    help="run only the cases whose names contain NAME, or those a friendly name "
                    "selects (repeatable: the union; the floor always runs): " +
                    "; ".join(f"{k}: {v}" for k, v in FRIENDLY.items()))
    ap.add_argument("--write-spin-us", type=int, default=0, metavar="US",
                    help="after each frame's memset, a kernel that spins US µs (every case, the "
                    "floors too): does a long write hide GL's handover after CUDA's copies?")
    ap.add_argument("--json", default=os.path.join(os.environ["OUT"], "planes_probe.json")
                    if os.environ.get("OUT") else "")
    args = ap.parse_args()
    version = I()
    cuDriverGetVersion(byref(version))
    print(f"GL_RENDERER {glGetString(0x1F01).decode()}; GL_VERSION {glGetString(0x1F02).decode()}; "
          f"CUDA driver API {version.value}; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    if args.write_spin_us:
        print(f"each frame's write: the memset, then a kernel spinning {args.write_spin_us} µs")
    print(f"{args.iters} iterations per case in 3 interleaved rounds; µs per iteration: median "
          f"(p10-p90), x floor, [median CPU µs per phase]", flush=True)
    rounds = 3
    per_round = max(1, args.iters // rounds)
    out = []

    def save():  # after each part, so that a run stopped by a time limit keeps what it measured
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"iters": args.iters, "write_spin_us": args.write_spin_us, "renderer": glGetString(0x1F01).decode(),
                           "cuda_driver_api": version.value, "rows": out}, f, indent=1)

    for text in args.sizes.split(","):
        size = tuple(int(v) for v in text.split("x"))
        frame = Frame(size, args.write_spin_us)
        cases = make_cases(size, frame)
        onlys = args.only or [""]
        cases = [c for i, c in enumerate(cases)
                 if i == 0 or any(o in c.name or o in c.tags for o in onlys)]
        for c in cases:  # warm-up: first maps, page-ins
            run_case(c, 10, 0)
            c.samples.clear(); c.phases.clear()
        for r in range(rounds):
            for c in cases:
                run_case(c, per_round, 1000 * r)
                check_data(c, frame)
        report(cases, out)
        save()
    kept_after_map(out)
    save()
    if args.json:
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
