//! [`UsageError`]: a call refused before the driver saw it, because of its arguments or of the
//! state of the objects it was given. The caller can fix each one; its message ends in a `help:`
//! line that says how.

use crate::gl_object::RegisterFlags;
use cuda_gl_sys as sys;

/// A call that cuda-gl refused before the driver saw it: an argument out of range, of the wrong
/// size or kind, or objects that cannot be used together. Nothing was queued or changed.
///
/// It reaches callers as [`Error::Usage`](super::Error::Usage); match `Error::Usage(_)` for any
/// of them, or a variant for one; [`Error::kind`](super::Error::kind) gives its coarse kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// An object of one CUDA context was used with an object of another (a stream, a buffer, a
    /// resource of a batch).
    #[error(
        "the {what} belongs to another CUDA context than {owner}.\nhelp: objects used together \
         must come from one cuda_gl::Context: create the {what} in the same Context as {owner} \
         (for another library's stream, share its context: Context::from_cudarc, or \
         Context::from_raw_shared)"
    )]
    WrongCudaContext {
        /// What belongs to the other context, e.g. `stream` or `device buffer`.
        what: &'static str,
        /// What it was used with, e.g. `the device buffer` or `GL buffer 3`.
        owner: String,
    },

    /// An index past the end of a collection (a ring's or frame stream's slots).
    #[error("{what} {index} is out of range: there are {len}.\nhelp: pass an index below {len}")]
    OutOfRange {
        /// What was indexed, e.g. `ring slot` or `frame-stream slot`.
        what: &'static str,
        /// The index given.
        index: usize,
        /// How many there are.
        len: usize,
    },

    /// A copy was given another number of values than the buffer it copies to or from holds.
    #[error(
        "{what} holds {expected} values, but {given} were given; nothing was copied.\nhelp: \
         copies move whole buffers: give exactly {expected} values (a sub-slice, `&data[..n]`, \
         or a buffer of that length)"
    )]
    SizeMismatch {
        /// The buffer, e.g. `the device buffer`.
        what: &'static str,
        /// How many values it holds.
        expected: usize,
        /// How many were given.
        given: usize,
    },

    /// An allocation of zero bytes (zero elements, or elements of a zero-sized type).
    #[error(
        "cannot allocate {what} of 0 bytes.\nhelp: allocate at least one element of a type with \
         a non-zero size; keep an `Option` for \"nothing yet\""
    )]
    ZeroSize {
        /// What was to be allocated, e.g. `a device buffer`.
        what: &'static str,
    },

    /// A size, count or index too large for the call it is passed to.
    #[error(
        "{what} is {value}, more than the largest {max} the call takes.\nhelp: pass a smaller \
         value, or split the work into parts"
    )]
    TooLarge {
        /// What is too large, e.g. `the size of the GL buffer in bytes`.
        what: &'static str,
        /// The value asked for (exact: `u128` holds any product of two `usize`).
        value: u128,
        /// The largest value accepted.
        max: u128,
    },

    /// [`DevicePtr::byte_add`](crate::DevicePtr::byte_add) past the end of the address space.
    #[error(
        "device address {address:#x} + {bytes} bytes overflows 64 bits.\nhelp: the offset must \
         stay within the allocation the address points into"
    )]
    AddressOverflow {
        /// The device address.
        address: u64,
        /// The offset in bytes.
        bytes: usize,
    },

    /// A CUDA write into a GL object that was registered or mapped read-only (CUDA leaves such
    /// writes undefined).
    #[error(
        "GL {kind} {name} was registered or mapped read-only, so CUDA must not write it \
         ({what}).\nhelp: register it without READ_ONLY and map it with MapFlags::None or \
         WriteDiscard"
    )]
    ReadOnlyMapping {
        /// What the object is, e.g. `buffer` or `GL_TEXTURE_2D texture`.
        kind: &'static str,
        /// The GL name.
        name: u32,
        /// The write that was refused, e.g. `a copy into it`.
        what: &'static str,
    },

    /// A surface was asked of an image that was not registered with `SURFACE_LOAD_STORE`.
    #[error(
        "GL image {name} was not registered with SURFACE_LOAD_STORE, so CUDA cannot write it \
         through a surface.\nhelp: register it with RegisterFlags::SURFACE_LOAD_STORE"
    )]
    NotSurfaceRegistered {
        /// The GL name.
        name: u32,
    },

    /// GL name 0 was registered: it is GL's "no object".
    #[error(
        "GL name 0 is not a {kind}: 0 is GL's 'no object'.\nhelp: pass a name from \
         glGen*/glCreate*"
    )]
    ZeroGlName {
        /// What it was to be registered as, e.g. `buffer`.
        kind: &'static str,
    },

    /// `READ_ONLY` and `WRITE_DISCARD` together.
    #[error(
        "READ_ONLY and WRITE_DISCARD contradict each other.\nhelp: pick READ_ONLY when CUDA only \
         reads, WRITE_DISCARD when it overwrites everything"
    )]
    ContradictoryFlags,

    /// `SURFACE_LOAD_STORE` or `TEXTURE_GATHER` on a buffer.
    #[error(
        "{flags:?}: SURFACE_LOAD_STORE and TEXTURE_GATHER apply to images only.\nhelp: register \
         a buffer with NONE, READ_ONLY or WRITE_DISCARD"
    )]
    ImageOnlyFlags {
        /// The flags given.
        flags: RegisterFlags,
    },

    /// A string passed on as a C string (PTX, a kernel name, CUDA source, an NVRTC option)
    /// contains a NUL byte.
    #[error(
        "{what} contains a NUL byte.\nhelp: it is passed on as a C string: remove the NUL byte \
         (PTX: pass the file's text; a cubin goes to Module::from_cubin)"
    )]
    NulByte {
        /// What contains it, e.g. `the PTX text` or `an NVRTC option`.
        what: &'static str,
    },

    /// A [`FrameStream`](crate::external::FrameStream) of an impossible shape.
    #[error(
        "a frame stream of {slots} slots in bursts of {burst} frames cannot be made: it needs \
         1 <= burst <= slots <= {max_slots}.\nhelp: slots = 2 * burst lets CUDA write one burst \
         while GL reads the previous one"
    )]
    BadFrameStreamShape {
        /// The slots asked for.
        slots: usize,
        /// The burst asked for.
        burst: usize,
        /// The most slots a frame stream has.
        max_slots: usize,
    },

    /// An [`ExternalRing`](crate::external::ExternalRing) of no slots or too many.
    #[error(
        "an external ring has 1 to {max} slots, not {slots}.\nhelp: 3 or more keep frames in \
         flight"
    )]
    BadRingSlots {
        /// The slots asked for.
        slots: usize,
        /// The most slots a ring has.
        max: usize,
    },

    /// An elapsed time was asked of events created without timing.
    #[error(
        "elapsed time needs two events created with `timing = true`.\nhelp: create both with \
         Event::new(&ctx, true)"
    )]
    EventWithoutTiming,

    /// A hand-written `unsafe impl KernelArgs` passed another number of argument pointers than
    /// its `count()` and `sizes()` say; the launch was refused before the driver saw it.
    #[error(
        "the KernelArgs implementation passed {pointers} argument pointer(s), but its count() is \
         {count} and its sizes() has {sizes} entries; the launch was refused before the driver \
         saw it.\nhelp: fix the implementation, or pass a tuple of KernelParam values, which \
         implements KernelArgs correctly"
    )]
    KernelArgsImpl {
        /// How many pointers `with_pointers` passed.
        pointers: usize,
        /// What `count()` returned.
        count: usize,
        /// How many entries `sizes()` returned.
        sizes: usize,
    },

    /// A surface or texture object was asked of a mapping for an array of another mapping.
    #[error(
        "the array belongs to another mapping ({array}) than the one asked to create the {what} \
         ({mapping}).\nhelp: create it from the guard or batch entry of the array's own image"
    )]
    ArrayOfAnotherMapping {
        /// What was to be created: `surface object` or `texture object`.
        what: &'static str,
        /// The array's image, e.g. `GL GL_TEXTURE_2D texture 3`.
        array: String,
        /// The image of the mapping asked, e.g. `GL GL_TEXTURE_2D texture 4`.
        mapping: String,
    },

    /// A buffer view given to a batch's method is not one of that batch's views.
    #[error(
        "the {what} was asked of a buffer that is not one of this batch's views.\nhelp: pick the \
         buffer from the views the closure is given (e.g. `|views| &views.0`)"
    )]
    NotOfThisBatch {
        /// What was to be made, e.g. `a mutable cudarc view`.
        what: &'static str,
    },

    /// A map of a registration that an earlier, failed unregister released (or that the
    /// driver refused for good), handed back by `try_unregister`.
    #[error(
        "GL {kind} {name} is no longer registered: an earlier unregister released it although \
         it reported an error.\nhelp: drop this registration and register the object again"
    )]
    Unregistered {
        /// The GL object's name.
        name: u32,
        /// What it is, e.g. `buffer`.
        kind: String,
    },

    /// [`map_all`](crate::map_all) of no resources.
    #[error(
        "map_all needs at least one resource.\nhelp: skip the call when there is nothing to map"
    )]
    EmptyBatch,

    /// A copy of a mapped array whose format has no plain texel layout.
    #[error(
        "a mapped array of format {format:?} has no plain texel layout to copy.\nhelp: only 8-, \
         16- and 32-bit integer, half and float formats can be copied; copy others in a kernel \
         through a surface"
    )]
    UncopyableFormat {
        /// The array's format.
        format: sys::CUarray_format,
    },

    /// A mapped array copied onto storage it shares.
    #[error(
        "a mapped array cannot be copied onto storage it shares (the same layer and mip level of \
         the same texture, through any of its handles).\nhelp: copy through a temporary \
         DeviceBuffer, or between different layers or levels"
    )]
    OverlappingCopy,

    /// A copy between two mappings of different streams (or contexts): either could be unmapped
    /// while the copy runs.
    #[error(
        "the mapped {what} is mapped on another stream (or in another context) than the \
         image.\nhelp: map both on the same stream (or together with map_all), so that neither is \
         unmapped while the copy runs"
    )]
    MappedOnOtherStream {
        /// The other end of the copy: `buffer` or `array`.
        what: &'static str,
    },

    /// A GL buffer without storage was mapped: there is nothing to map.
    #[error(
        "GL buffer {name} has no storage (its size is 0), so there is nothing to map.\nhelp: \
         give it storage with glBufferData/glBufferStorage and a non-zero size"
    )]
    EmptyGlBuffer {
        /// The GL name.
        name: u32,
    },

    /// An `egl::Offscreen` target (feature `egl`) of a zero side or one over
    /// `GL_MAX_TEXTURE_SIZE`.
    #[error(
        "an offscreen target of {width}x{height} pixels cannot be made.\nhelp: each side must be \
         1 to {max} (GL_MAX_TEXTURE_SIZE of this context)"
    )]
    OffscreenSize {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
        /// `GL_MAX_TEXTURE_SIZE` of the current context.
        max: i32,
    },

    /// A cudarc view of a buffer that was not mapped on an `Arc<cudarc::driver::CudaStream>`
    /// (feature `cudarc`).
    #[error(
        "the buffer was not mapped on an Arc<cudarc::driver::CudaStream>, and a cudarc slice \
         needs the stream it belongs to.\nhelp: map it with `registered.map(&stream)` where \
         `stream` is the Arc<CudaStream> that cudarc's `new_stream`, `default_stream` or `fork` \
         returned"
    )]
    NeedsCudarcStream,

    /// A pinned buffer whose earlier asynchronous copy could not be tracked (recording its
    /// event and synchronizing its stream failed), so its memory can no longer be read safely.
    #[error(
        "the end of an earlier asynchronous copy into this pinned buffer could not be tracked \
         (recording its event and synchronizing its stream failed), so its memory can no longer \
         be read safely.\nhelp: drop the buffer (its memory is leaked, not freed) and allocate a \
         new one; see the error of that copy"
    )]
    PinnedBufferUntracked,

    /// [`set_wait_limit`](crate::set_wait_limit) of zero or of more than an hour.
    #[error(
        "set_wait_limit({given:?}) refused: the wait limit must be more than 0 and at most \
         {max:?}; it is unchanged.\nhelp: pass a limit longer than the longest kernel a wait may \
         be behind, e.g. Duration::from_secs(60) for kernels of up to 40 s"
    )]
    BadWaitLimit {
        /// The limit given.
        given: std::time::Duration,
        /// The longest limit taken.
        max: std::time::Duration,
    },
}
