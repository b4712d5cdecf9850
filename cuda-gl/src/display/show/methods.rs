//! [`show_methods!`]: the show family's public methods, written once for every target.

/// The show family's public methods, the same on every target (GL's `DisplayTarget`, wgpu's
/// `WgpuTarget`): `frame`, `resize`, `show`, `show_raw`, `show_cudarc`, `show_video`,
/// `show_video_cudarc`, `show_video_raw`, `set_color_map` and `color_map`, each a one-line call
/// of the [`show`](super) module's function (or of [`ShowTarget`](super::ShowTarget), which the
/// target implements), with one signature and one text of docs, so that the targets cannot
/// drift apart. Users call them as inherent methods (no trait to import).
///
/// Invoked inside the target's one inherent `impl` block. The target has fields
/// `ctx: Arc<Context>` and `kernels: Kernels` (the colour map's) and a `format()`.
/// The part of a method's docs that differs between the targets follows the method's name:
/// - `frame:` what a frame holds in each mode, and `# Errors`;
/// - `resize:` how the target's objects are replaced, and `# Errors`;
/// - `show:` what is ordered after what;
/// - `set_color_map:` what a one-channel image shows without a map, and an example.
macro_rules! show_methods {
    (
        frame: $(#[$frame:meta])*
        resize: $(#[$resize:meta])*
        show: $(#[$show:meta])*
        set_color_map: $(#[$set_color_map:meta])*
    ) => {
        /// Begins a frame on `stream`: a kernel queued on it draws the frame through
        /// [`Frame::surface`](crate::display::Frame::surface) or into
        /// [`Frame::pixels`](crate::display::Frame::pixels), and
        /// [`Frame::present`](crate::display::Frame::present) puts it on the texture (a frame
        /// dropped unpresented shows nothing new).
        $(#[$frame])*
        pub fn frame<'t, S: $crate::stream::AsStream>(
            &'t mut self,
            stream: &'t S,
        ) -> $crate::error::Result<$crate::display::Frame<'t, S>> {
            $crate::display::show::frame(self, stream)
        }

        /// Re-creates the target at `width` x `height` (nothing when it has that size
        /// already), in the same mode and format.
        $(#[$resize])*
        pub fn resize(&mut self, width: u32, height: u32) -> $crate::error::Result<()> {
            let layout = $crate::image::Layout::packed((width, height), self.format())?;
            $crate::display::show::ShowTarget::reconfigure(self, layout)
        }

        /// Shows `src`, an image of `layout`, in one call: the target takes the image's size
        /// and format (as [`resize`](Self::resize), which keeps the objects of a target already
        /// of that size and format: make the target with the size and format of what it will
        /// show, and `show` at the same size re-creates nothing), the pixels are copied on the
        /// GPU in `stream`'s order (or, for a one-channel image on a target with a
        /// [colour map](Self::set_color_map), mapped into RGBA8), and the frame is presented.
        ///
        $(#[$show])*
        ///
        /// `src` is read by the queued copy: it is neither written nor freed before the work
        /// queued on `stream` has run (a [`DeviceBuffer`](crate::DeviceBuffer)'s free waits
        /// for it).
        ///
        /// # Errors
        /// [`DisplayError::PitchedSource`](crate::display::DisplayError::PitchedSource) when
        /// `src` holds fewer bytes than `layout` spans;
        /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) for a buffer
        /// or stream of another context; as [`resize`](Self::resize),
        /// [`frame`](Self::frame), [`Frame::pixels`](crate::display::Frame::pixels) and
        /// [`Frame::present`](crate::display::Frame::present);
        /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) when `stream` is
        /// capturing; for an image mapped through a [colour map](Self::set_color_map), the
        /// driver's error launching cuda-gl's kernel.
        pub fn show<Src: $crate::source::ShowSource + ?Sized>(
            &mut self,
            src: &Src,
            layout: $crate::image::Layout,
            stream: &impl $crate::stream::AsStream,
        ) -> $crate::error::Result<()> {
            $crate::display::show::show_buffer(self, src, layout, stream)
        }

        /// [`show`](Self::show) for device memory of any origin: `src` says where the image is
        /// and how it is laid out.
        ///
        /// # Safety
        /// 1. `src.ptr()` points to `src.layout().bytes()` bytes of device memory of the
        ///    target's CUDA context, which stay allocated and are not written until the work
        ///    queued on `stream` before this returns has run. Not the target's own memory
        ///    (a frame's [`pixels`](crate::display::Frame::pixels)), which this call may write,
        ///    or free on a resize.
        ///
        /// # Errors
        /// As [`show`](Self::show).
        pub unsafe fn show_raw(
            &mut self,
            src: $crate::image::DeviceImage<'_>,
            stream: &impl $crate::stream::AsStream,
        ) -> $crate::error::Result<()> {
            // SAFETY: (1), forwarded.
            unsafe { $crate::display::show::show_raw(self, src, stream) }
        }

        /// [`show`](Self::show) for cudarc device memory: a `CudaSlice`, a `CudaView`, or a
        /// mapped view, holding an image of `layout`; the copy is queued in `stream`'s order,
        /// after cudarc's own writes of `src`, and (with cudarc's event tracking on, its
        /// default) cudarc's later writes or frees of `src` wait for it. What is ordered after
        /// what: as [`show`](Self::show).
        ///
        /// # Errors
        /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) when `stream`
        /// is not of the target's context or `src` is not of `stream`'s cudarc context (the
        /// same `Arc<CudaContext>`: two `CudaContext`s of one device track their streams
        /// apart); [`UsageError::TooLarge`](crate::UsageError::TooLarge) when `src`'s length
        /// in bytes overflows `usize`; otherwise as `show`. Last, when cudarc's read event
        /// could not be recorded after the copy or the colour map's kernel (or a capture of
        /// `stream` began meanwhile), the wait for that work which replaces it:
        /// [`Error::Timeout`](crate::Error::Timeout) past the [wait limit](crate::wait_limit),
        /// or the driver's error. That error can come back after the frame was shown (when the
        /// show itself failed too, its error is returned).
        #[cfg(feature = "cudarc")]
        pub fn show_cudarc<T, Src: $crate::cudarc_interop::CudarcSource<T>>(
            &mut self,
            src: &Src,
            layout: $crate::image::Layout,
            stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        ) -> $crate::error::Result<()> {
            $crate::display::show::show_cudarc(self, src, layout, stream)
        }

        /// Shows a decoded video frame, NV12 or P010 at the start of `src` as `layout` says,
        /// converted into RGBA8 under `color`
        /// ([`ColorSpace::default`](crate::video::ColorSpace) is BT.709, limited range) by
        /// cuda-gl's kernel on the GPU, in `stream`'s order: the target takes the frame's size
        /// and [`Format::Rgba8`](crate::display::Format::Rgba8), and the frame is presented,
        /// as [`show`](Self::show) (whose ordering it has). The kernel is loaded in the
        /// target's CUDA context at the first call and kept. Each pixel is what
        /// [`ColorSpace::rgba8`](crate::video::ColorSpace::rgba8) gives for its luma and
        /// nearest chroma pair (see [`video`](crate::video)).
        ///
        /// # Errors
        /// [`VideoError::FrameTooSmall`](crate::video::VideoError::FrameTooSmall) when `src`
        /// holds fewer bytes than `layout` spans;
        /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) for a buffer
        /// or stream of another context; as [`show`](Self::show); the driver's errors loading
        /// or launching the kernel.
        pub fn show_video<Src: $crate::source::ShowSource + ?Sized>(
            &mut self,
            src: &Src,
            layout: $crate::video::VideoLayout,
            color: $crate::video::ColorSpace,
            stream: &impl $crate::stream::AsStream,
        ) -> $crate::error::Result<()> {
            $crate::display::show::show_video_buffer(self, src, layout, color, stream)
        }

        /// [`show_video`](Self::show_video) of a frame in cudarc device memory: a
        /// `CudaSlice`, a `CudaView`, or a mapped view (of any element type: the frame is at
        /// its first byte, as `layout` says). The conversion is queued in `stream`'s order,
        /// after cudarc's own writes of `src`, and (with cudarc's event tracking on, its
        /// default) cudarc's later writes or frees of `src` wait for it, in every mode.
        ///
        /// # Errors
        /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) when `stream`
        /// is not of the target's context or `src` is not of `stream`'s cudarc context (as
        /// [`show_cudarc`](Self::show_cudarc));
        /// [`VideoError::FrameTooSmall`](crate::video::VideoError::FrameTooSmall) when `src`
        /// holds fewer bytes than `layout` spans;
        /// [`UsageError::TooLarge`](crate::UsageError::TooLarge) when `src`'s length in bytes
        /// overflows `usize`; otherwise as [`show_video`](Self::show_video). Last, when
        /// cudarc's read event could not be recorded after the conversion (or a capture of
        /// `stream` began meanwhile), the wait for the conversion that replaces it:
        /// [`Error::Timeout`](crate::Error::Timeout) past the [wait limit](crate::wait_limit),
        /// or the driver's error. That error can come back after the frame was shown (when the
        /// show itself failed too, its error is returned).
        #[cfg(feature = "cudarc")]
        pub fn show_video_cudarc<T, Src: $crate::cudarc_interop::CudarcSource<T>>(
            &mut self,
            src: &Src,
            layout: $crate::video::VideoLayout,
            color: $crate::video::ColorSpace,
            stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        ) -> $crate::error::Result<()> {
            $crate::display::show::show_video_cudarc(self, src, layout, color, stream)
        }

        /// [`show_video`](Self::show_video) of a frame in device memory of any origin (a
        /// decoder's output surface, say).
        ///
        /// # Safety
        /// 1. The frame's planes (`src.layout().bytes()` bytes from `src.ptr()`) are device
        ///    memory of the target's CUDA context, which stay allocated and are not written
        ///    until the work queued on `stream` before this returns has run. Not the target's
        ///    own memory (a frame's [`pixels`](crate::display::Frame::pixels)), which this call
        ///    may write, or free on a resize.
        ///
        /// # Errors
        /// As [`show_video`](Self::show_video).
        pub unsafe fn show_video_raw(
            &mut self,
            src: &$crate::video::VideoFrame<'_>,
            color: $crate::video::ColorSpace,
            stream: &impl $crate::stream::AsStream,
        ) -> $crate::error::Result<()> {
            // SAFETY: (1), forwarded.
            unsafe { $crate::display::show::show_video_raw(self, src, color, stream) }
        }

        /// Shows the one-channel images ([`Format::R8`](crate::display::Format::R8),
        /// [`Format::R32F`](crate::display::Format::R32F)) given to [`show`](Self::show),
        /// [`show_raw`](Self::show_raw) and `show_cudarc` through `map` from now on: the target
        /// takes [`Format::Rgba8`](crate::display::Format::Rgba8) for them, and a kernel of
        /// cuda-gl's maps each pixel on the GPU in the show's stream order. The map stays
        /// across [`resize`](Self::resize) and shows of any size; frames drawn by the
        /// application's kernels are not mapped. The kernel is loaded (in the target's CUDA
        /// context) when a map is first set, and stays loaded until the target is dropped.
        $(#[$set_color_map])*
        ///
        /// # Errors
        /// [`DisplayError::ColorMapRange`](crate::display::DisplayError::ColorMapRange) for a
        /// map whose fields were changed into a range that is not finite or not increasing
        /// (the map is then not set); the driver's errors loading the kernel or allocating its
        /// tables (the first time).
        pub fn set_color_map(
            &mut self,
            map: Option<$crate::display::ColorMap>,
        ) -> $crate::error::Result<()> {
            self.kernels.set(&self.ctx, map)
        }

        /// The colour map set by [`set_color_map`](Self::set_color_map).
        pub fn color_map(&self) -> Option<$crate::display::ColorMap> {
            self.kernels.map()
        }
    };
}

pub(crate) use show_methods;
