//! The boilerplate the numbered examples share, and that a program of your own would copy: the
//! command line (`--window`, `--screenshot PATH`), an OpenGL context with the CUDA context on the
//! same GPU (headless through EGL, or a GLFW window), shader compiling, an offscreen framebuffer,
//! reading pixels back, PNG writing, and the one line each example ends with.
//!
//! Exit status of every example: 0 when its check passed, 1 on a mismatch or any failure while
//! running, 2 when it cannot run here (no CUDA device, no NVIDIA OpenGL, no display for
//! `--window`, or a bad command line).
// Each example uses a different part of this module.
#![allow(dead_code)]

use anyhow::{Context as _, Result, anyhow, bail};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{Context, Device, Module, Stream, StreamFlags};
use std::ffi::{CString, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The command line every example takes.
#[derive(Clone, Debug, Default)]
pub struct Args {
    /// `--window`: draw in a GLFW window as well (the check is the same).
    pub window: bool,
    /// `--screenshot PATH`: write the final image as a PNG.
    pub screenshot: Option<PathBuf>,
    /// `--window-secs N`: with `--window`, close the window after N seconds instead of waiting
    /// for the user (for unattended runs, e.g. under Xvfb).
    pub window_secs: Option<f64>,
}

impl Args {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Args> {
        let mut parsed = Args::default();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--window" => parsed.window = true,
                "--window-secs" => {
                    let secs = args
                        .next()
                        .context("--window-secs needs a number of seconds")?;
                    let secs: f64 = secs
                        .parse()
                        .with_context(|| format!("--window-secs {secs}: not a number"))?;
                    parsed.window_secs = Some(secs);
                }
                "--screenshot" => {
                    let path = args.next().context("--screenshot needs a PATH")?;
                    parsed.screenshot = Some(PathBuf::from(path));
                }
                other => bail!(
                    "unknown argument `{other}` (flags: --window, --window-secs N, --screenshot \
                     PATH)"
                ),
            }
        }
        Ok(parsed)
    }
}

/// Why an example cannot run on this machine (exit status 2), as opposed to a failure (1).
#[derive(Debug)]
pub struct Unavailable(pub String);

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// What an example's check found: what was compared, with numbers.
#[derive(Debug)]
pub enum Outcome {
    /// The read-back data matched the CPU computation.
    Ok(String),
    /// It did not.
    Mismatch(String),
}

/// The example's name: its binary's (`01_vertex_buffer`). Every example includes this module as
/// its own, so each one gets its own name here.
pub const NAME: &str = env!("CARGO_BIN_NAME");

/// Parses the command line, runs the example and prints its last line:
/// `<NAME>: ok: ...`, `<NAME>: MISMATCH: ...`, or why it failed or cannot run ([`NAME`]).
pub fn main(run: impl FnOnce(&Args) -> Result<Outcome>) -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{NAME}: {e:#}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(Outcome::Ok(what)) => {
            println!("{NAME}: ok: {what}");
            ExitCode::SUCCESS
        }
        Ok(Outcome::Mismatch(what)) => {
            println!("{NAME}: MISMATCH: {what}");
            ExitCode::from(1)
        }
        Err(e) => {
            // One line, even for cuda-gl's multi-line errors (hints, lists of attempts).
            let text = format!("{e:#}");
            let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if e.downcast_ref::<Unavailable>().is_some() {
                println!("{NAME}: cannot run here: {line}");
                ExitCode::from(2)
            } else {
                println!("{NAME}: error: {line}");
                ExitCode::from(1)
            }
        }
    }
}

/// `Ok(())` when GL has recorded no error, else the error and `what` was being done.
pub fn gl_check(what: &str) -> Result<()> {
    // SAFETY: every caller has made a GL context current (`Gpu::open`).
    match unsafe { gl::GetError() } {
        gl::NO_ERROR => Ok(()),
        code => bail!("OpenGL error {code:#x} while {what}"),
    }
}

/// A GLFW window with its OpenGL context. Fields drop in order: the events, the window (and its
/// context), then GLFW.
struct Window {
    _events: glfw::GlfwReceiver<(f64, glfw::WindowEvent)>,
    window: glfw::PWindow,
    glfw: glfw::Glfw,
}

/// Where the GL context comes from.
enum Display {
    Headless(Box<HeadlessContext>),
    Window(Window),
}

/// The examples' kernels (`kernels/examples.cu`), compiled by `cargo xtask ptx`.
pub const PTX: &str = include_str!("../kernels/examples.ptx");

/// [`main`] for the examples that run on the examples' kernels (01 to 05 and 07): opens a
/// `width` x `height` [`Gpu`] ([`Gpu::open`]), makes a non-blocking stream and loads [`PTX`] in
/// its CUDA context, and hands the three to `run`. Parameters drop in reverse order, after
/// everything `run` made: the [`Gpu`], given first, drops last.
pub fn main_with_kernels(
    width: u32,
    height: u32,
    run: impl FnOnce(Gpu, Stream, Module) -> Result<Outcome>,
) -> ExitCode {
    main(|args| {
        let gpu = Gpu::open(args, width, height)?;
        let stream = Stream::new(&gpu.ctx, StreamFlags::NonBlocking)?;
        let module = Module::from_ptx(&gpu.ctx, PTX)?;
        run(gpu, stream, module)
    })
}

/// A current OpenGL context and the CUDA context of the same GPU. Create it first, so that it
/// drops last: CUDA registrations and GL objects must go while the GL context still exists.
pub struct Gpu {
    /// The CUDA context (the device's primary context).
    pub ctx: Arc<Context>,
    /// The command line it was opened with: what [`Gpu::finish`] does.
    args: Args,
    display: Display,
}

impl Gpu {
    /// Makes a GL context current on this thread and finds the CUDA context on the same GPU.
    ///
    /// Headless (the default), the EGL display is chosen by CUDA device 0's identity
    /// (`EGL_CUDA_DEVICE_NV`), so interop works on servers with several GPUs. With `--window`,
    /// GLFW creates a `width` x `height` window titled `cuda-gl <NAME>`, and the CUDA device is
    /// the one behind its context ([`Context::for_current_gl`]); on a laptop whose window runs on
    /// an integrated GPU, that fails with the reason.
    ///
    /// # Errors
    /// [`Unavailable`] when there is no CUDA device, no NVIDIA EGL, or no display.
    pub fn open(args: &Args, width: u32, height: u32) -> Result<Gpu> {
        let (ctx, display) = if args.window {
            Self::open_window(width, height)?
        } else {
            Self::open_headless()?
        };
        let gpu = Gpu {
            ctx,
            args: args.clone(),
            display,
        };
        // SAFETY: a context is current; GL_RENDERER and GL_VERSION are static NUL-terminated
        // strings owned by GL (or null, which `gl_string` handles).
        let (renderer, version) = unsafe { (gl_string(gl::RENDERER), gl_string(gl::VERSION)) };
        let device = gpu.ctx.device();
        println!(
            "OpenGL {version} on {renderer}; CUDA device {} ({})",
            device.ordinal(),
            device.name()?
        );
        Ok(gpu)
    }

    fn open_headless() -> Result<(Arc<Context>, Display)> {
        let unavailable = |what: String| anyhow!(Unavailable(what));
        let device = Device::get(0).map_err(|e| unavailable(format!("no CUDA device 0: {e}")))?;
        // The GL context must be on the same GPU as CUDA: EGL finds the device by its CUDA id.
        let gl = HeadlessContext::for_cuda_device(&device).map_err(|e| {
            unavailable(format!(
                "no headless OpenGL on CUDA device 0 through EGL: {e}"
            ))
        })?;
        let ctx = Context::new(&device)?;
        Ok((ctx, Display::Headless(Box::new(gl))))
    }

    fn open_window(width: u32, height: u32) -> Result<(Arc<Context>, Display)> {
        let unavailable = |what: String| anyhow!(Unavailable(what));
        let mut glfw = glfw::init(glfw::log_errors)
            .map_err(|e| unavailable(format!("cannot open a window: GLFW failed ({e})")))?;
        // OpenGL 4.5 core: immutable texture storage, glClearTexImage and the debug-free core.
        glfw.window_hint(glfw::WindowHint::ContextVersion(4, 5));
        glfw.window_hint(glfw::WindowHint::OpenGlProfile(
            glfw::OpenGlProfileHint::Core,
        ));
        glfw.window_hint(glfw::WindowHint::Resizable(false));
        let title = format!("cuda-gl {NAME}");
        let (mut window, events) = glfw
            .create_window(width, height, &title, glfw::WindowMode::Windowed)
            .ok_or_else(|| unavailable("cannot create a window with OpenGL 4.5".into()))?;
        glfw::Context::make_current(&mut *window);
        gl::load_with(|name| {
            window
                .get_proc_address(name)
                .map_or(std::ptr::null(), |f| f as *const c_void)
        });
        // The CUDA device that runs this GL context (cuGLGetDevices).
        let ctx = Context::for_current_gl().map_err(|e| {
            unavailable(format!("the window's OpenGL is not on a CUDA device: {e}"))
        })?;
        let window = Window {
            _events: events,
            window,
            glfw,
        };
        Ok((ctx, Display::Window(window)))
    }

    /// The address of GL entry point `name` in the current context (null when unknown), for
    /// loaders such as `ExternalGl::load_with`.
    pub fn proc_address(&mut self, name: &str) -> *const c_void {
        match &mut self.display {
            Display::Headless(gl) => gl.get_proc_address(name),
            Display::Window(win) => win
                .window
                .get_proc_address(name)
                .map_or(std::ptr::null(), |f| f as *const c_void),
        }
    }

    /// With `--window`, copies `frame` into the window and shows it; returns `false` once the
    /// window was closed. Headless, does nothing and returns `true`.
    pub fn present(&mut self, frame: &Framebuffer) -> Result<bool> {
        let Display::Window(win) = &mut self.display else {
            return Ok(true);
        };
        let (w, h) = win.window.get_framebuffer_size();
        // SAFETY: the window's context is current; `frame.fbo` is a complete framebuffer and
        // framebuffer 0 is the window's.
        unsafe {
            gl::BindFramebuffer(gl::READ_FRAMEBUFFER, frame.fbo);
            gl::BindFramebuffer(gl::DRAW_FRAMEBUFFER, 0);
            gl::BlitFramebuffer(
                0,
                0,
                frame.width as i32,
                frame.height as i32,
                0,
                0,
                w,
                h,
                gl::COLOR_BUFFER_BIT,
                gl::LINEAR,
            );
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        }
        gl_check("copying the frame into the window")?;
        glfw::Context::swap_buffers(&mut *win.window);
        win.glfw.poll_events();
        Ok(!win.window.should_close())
    }

    /// Ends an example: writes `frame` to `--screenshot` when asked, and with `--window` keeps
    /// showing it until the window is closed (or `--window-secs` have passed).
    pub fn finish(&mut self, frame: &Framebuffer) -> Result<()> {
        if let Some(path) = &self.args.screenshot {
            let pixels = frame.read_rgba()?;
            write_png(path, frame.width, frame.height, &pixels)?;
            println!(
                "wrote {} ({}x{})",
                path.display(),
                frame.width,
                frame.height
            );
        }
        if let Display::Window(_) = self.display {
            let until = self
                .args
                .window_secs
                .map(|secs| std::time::Instant::now() + std::time::Duration::from_secs_f64(secs));
            match until {
                Some(_) => println!("showing the window for {:?} s", self.args.window_secs),
                None => println!("close the window to finish"),
            }
            while self.present(frame)? && until.is_none_or(|t| std::time::Instant::now() < t) {
                if let Display::Window(win) = &mut self.display {
                    win.glfw.wait_events_timeout(0.1);
                }
            }
        }
        Ok(())
    }
}

/// # Safety
/// A GL context must be current.
unsafe fn gl_string(name: u32) -> String {
    // SAFETY: the caller has a context current; GL returns a static string or null.
    let s = unsafe { gl::GetString(name) };
    if s.is_null() {
        return String::from("?");
    }
    // SAFETY: a non-null glGetString result is a NUL-terminated string that GL keeps alive.
    unsafe { std::ffi::CStr::from_ptr(s.cast()) }
        .to_string_lossy()
        .into_owned()
}

/// Compiles and links a vertex and a fragment shader into a program; the error carries GL's log.
pub fn program(vertex: &str, fragment: &str) -> Result<u32> {
    let shader = |kind: u32, source: &str| -> Result<u32> {
        let source = CString::new(source)?;
        // SAFETY: a GL context is current; the source is NUL-terminated and outlives the call.
        unsafe {
            let shader = gl::CreateShader(kind);
            gl::ShaderSource(shader, 1, &source.as_ptr(), std::ptr::null());
            gl::CompileShader(shader);
            succeeded(
                shader,
                gl::COMPILE_STATUS,
                gl::GetShaderiv,
                gl::GetShaderInfoLog,
            )
            .inspect_err(|_| gl::DeleteShader(shader))
            .context("the shader does not compile")?;
            Ok(shader)
        }
    };
    let vs = shader(gl::VERTEX_SHADER, vertex)?;
    let fs = shader(gl::FRAGMENT_SHADER, fragment)?;
    // SAFETY: a GL context is current; `vs` and `fs` are compiled shaders.
    unsafe {
        let program = gl::CreateProgram();
        gl::AttachShader(program, vs);
        gl::AttachShader(program, fs);
        gl::LinkProgram(program);
        // The program keeps what it needs; the shader objects can go.
        gl::DeleteShader(vs);
        gl::DeleteShader(fs);
        succeeded(
            program,
            gl::LINK_STATUS,
            gl::GetProgramiv,
            gl::GetProgramInfoLog,
        )
        .inspect_err(|_| gl::DeleteProgram(program))
        .context("the program does not link")?;
        Ok(program)
    }
}

/// `Ok` when the shader's or program's `status` (compile or link) is true, else its info log.
///
/// # Safety
/// A GL context must be current, and `object` a shader or program that the functions accept.
unsafe fn succeeded(
    object: u32,
    status: u32,
    get_iv: unsafe fn(u32, u32, *mut i32),
    get_log: unsafe fn(u32, i32, *mut i32, *mut gl::types::GLchar),
) -> Result<()> {
    let mut ok = 0;
    // SAFETY: the caller's contract; `ok` receives one integer.
    unsafe { get_iv(object, status, &mut ok) };
    if ok != 0 {
        return Ok(());
    }
    let mut log = vec![0u8; 4096];
    let mut len = 0;
    // SAFETY: the caller's contract; `log` has room for the 4096 bytes GL may write.
    unsafe { get_log(object, log.len() as i32, &mut len, log.as_mut_ptr().cast()) };
    log.truncate(usize::try_from(len).unwrap_or(0));
    bail!("{}", String::from_utf8_lossy(&log).trim())
}

/// What an example draws: a shader program and a vertex array over one vertex buffer. The GL
/// objects are deleted on drop (the GL context must still be current, see [`Gpu`]).
#[derive(Debug)]
pub struct Mesh {
    /// The linked program.
    pub program: u32,
    /// The vertex array object.
    pub vao: u32,
    /// The vertex buffer: CUDA can register it.
    pub vbo: u32,
    /// `GL_POINTS`, `GL_TRIANGLES`, ...
    pub mode: u32,
    /// Vertices drawn.
    pub vertices: usize,
}

impl Mesh {
    /// Compiles `shaders` (vertex, fragment) and creates a buffer of `vertices` vertices of
    /// `stride` floats each, filled from `data` when given (else left for CUDA to write), with one
    /// float attribute per `(location, components, offset in floats)`.
    pub fn new(
        shaders: (&str, &str),
        mode: u32,
        vertices: usize,
        stride: usize,
        data: Option<&[f32]>,
        attributes: &[(u32, i32, usize)],
    ) -> Result<Mesh> {
        let float = size_of::<f32>();
        let bytes = vertices * stride * float;
        if data.is_some_and(|d| size_of_val(d) != bytes) {
            bail!("the vertex data is not {vertices} vertices of {stride} floats");
        }
        let mut mesh = Mesh {
            program: program(shaders.0, shaders.1)?,
            vao: 0,
            vbo: 0,
            mode,
            vertices,
        };
        // SAFETY: a GL context is current; `data`, when given, holds the `bytes` bytes GL copies
        // (checked above); the attribute offsets are byte offsets into the bound buffer.
        unsafe {
            gl::GenVertexArrays(1, &mut mesh.vao);
            gl::BindVertexArray(mesh.vao);
            gl::GenBuffers(1, &mut mesh.vbo);
            gl::BindBuffer(gl::ARRAY_BUFFER, mesh.vbo);
            // The buffer must have its size before CUDA registers it. DYNAMIC_DRAW: written often.
            let pointer = data.map_or(std::ptr::null(), |d| d.as_ptr().cast());
            gl::BufferData(gl::ARRAY_BUFFER, bytes as isize, pointer, gl::DYNAMIC_DRAW);
            for &(location, components, offset) in attributes {
                let (stride, offset) = ((stride * float) as i32, (offset * float) as *const c_void);
                gl::VertexAttribPointer(location, components, gl::FLOAT, gl::FALSE, stride, offset);
                gl::EnableVertexAttribArray(location);
            }
            gl::BindVertexArray(0);
            gl::BindBuffer(gl::ARRAY_BUFFER, 0);
        }
        gl_check("creating the vertex array")?;
        Ok(mesh)
    }

    /// Clears `frame` to `clear` and draws the mesh into it.
    pub fn draw(&self, frame: &Framebuffer, clear: [f32; 4]) -> Result<()> {
        frame.bind();
        // SAFETY: a GL context is current; the vertex array holds `vertices` vertices.
        unsafe {
            gl::ClearColor(clear[0], clear[1], clear[2], clear[3]);
            gl::Clear(gl::COLOR_BUFFER_BIT);
            gl::UseProgram(self.program);
            gl::BindVertexArray(self.vao);
            gl::DrawArrays(self.mode, 0, self.vertices as i32);
            gl::BindVertexArray(0);
            gl::UseProgram(0);
        }
        gl_check("drawing")
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // SAFETY: the GL context is current (it outlives every mesh, see `Gpu`); the names came
        // from glGen* and glCreateProgram.
        unsafe {
            gl::DeleteVertexArrays(1, &self.vao);
            gl::DeleteBuffers(1, &self.vbo);
            gl::DeleteProgram(self.program);
        }
    }
}

/// An offscreen framebuffer with one RGBA8 colour texture. A headless EGL context has no default
/// framebuffer, so everything is drawn into one of these; CUDA can register its texture too.
#[derive(Debug)]
pub struct Framebuffer {
    /// The framebuffer object.
    pub fbo: u32,
    /// Its colour attachment: a `width` x `height` `GL_RGBA8` texture with one level.
    pub texture: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Framebuffer {
    /// A complete framebuffer of `width` x `height` RGBA8 pixels.
    pub fn new(width: u32, height: u32) -> Result<Framebuffer> {
        let texture = texture_rgba8(width, height)?;
        let mut fbo = 0;
        // SAFETY: a GL 4.5 context is current (direct state access: nothing is bound); the name
        // comes from glCreateFramebuffers.
        let status = unsafe {
            gl::CreateFramebuffers(1, &mut fbo);
            gl::NamedFramebufferTexture(fbo, gl::COLOR_ATTACHMENT0, texture, 0);
            gl::CheckNamedFramebufferStatus(fbo, gl::FRAMEBUFFER)
        };
        let framebuffer = Framebuffer {
            fbo,
            texture,
            width,
            height,
        };
        gl_check("creating the framebuffer")?;
        if status != gl::FRAMEBUFFER_COMPLETE {
            bail!("the {width}x{height} RGBA8 framebuffer is incomplete ({status:#x})");
        }
        Ok(framebuffer)
    }

    /// Binds it for drawing (and reading), with the viewport covering it.
    pub fn bind(&self) {
        // SAFETY: a GL context is current; `fbo` is a framebuffer of this context.
        unsafe {
            gl::BindFramebuffer(gl::FRAMEBUFFER, self.fbo);
            gl::Viewport(0, 0, self.width as i32, self.height as i32);
        }
    }

    /// The texture's pixels, RGBA8, bottom row first (GL's order).
    pub fn read_rgba(&self) -> Result<Vec<u8>> {
        read_texture_rgba8(self.texture, 0, self.width, self.height)
    }
}

impl Drop for Framebuffer {
    fn drop(&mut self) {
        // SAFETY: the GL context is current (it outlives every framebuffer, see `Gpu`).
        unsafe {
            gl::DeleteFramebuffers(1, &self.fbo);
            gl::DeleteTextures(1, &self.texture);
        }
    }
}

/// A `width` x `height` `GL_RGBA8` 2D texture with one level, sampled NEAREST (one texel per
/// pixel when drawn at its size), with no contents yet. Delete it with glDeleteTextures.
pub fn texture_rgba8(width: u32, height: u32) -> Result<u32> {
    texture_rgba8_levels(width, height, 1)
}

/// As [`texture_rgba8`], with `levels` mip levels (level n is `width >> n` x `height >> n`).
pub fn texture_rgba8_levels(width: u32, height: u32, levels: u32) -> Result<u32> {
    let mut texture = 0;
    // SAFETY: a GL context is current; the name comes from glGenTextures.
    unsafe {
        gl::GenTextures(1, &mut texture);
        gl::BindTexture(gl::TEXTURE_2D, texture);
        // Immutable storage (glTexStorage2D): the size and format cannot change while CUDA has
        // the texture registered.
        let (levels, width, height) = (levels as i32, width as i32, height as i32);
        gl::TexStorage2D(gl::TEXTURE_2D, levels, gl::RGBA8, width, height);
        gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MIN_FILTER, gl::NEAREST as i32);
        gl::TexParameteri(gl::TEXTURE_2D, gl::TEXTURE_MAG_FILTER, gl::NEAREST as i32);
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    gl_check("creating an RGBA8 texture")?;
    Ok(texture)
}

/// A GL buffer of `bytes` bytes, contents undefined.
pub fn gl_buffer(bytes: usize) -> Result<u32> {
    let mut buffer = 0;
    // SAFETY: a GL context is current; the name comes from glCreateBuffers and gets storage.
    unsafe {
        gl::CreateBuffers(1, &mut buffer);
        gl::NamedBufferData(buffer, bytes as isize, std::ptr::null(), gl::STREAM_COPY);
    }
    gl_check("creating a buffer")?;
    Ok(buffer)
}

/// Copies `bytes` bytes from the start of buffer `from` to byte `at` of buffer `to`, on the
/// GPU, in GL's queue.
pub fn copy_buffer(from: u32, to: u32, at: usize, bytes: usize) -> Result<()> {
    // SAFETY: a GL context is current; GL checks the ranges against both buffers' sizes.
    unsafe { gl::CopyNamedBufferSubData(from, to, 0, at as isize, bytes as isize) };
    gl_check("copying between buffers")
}

/// Copies one `width` x `height` RGBA8 image from the start of buffer `buffer` into level 0 of
/// 2D texture `texture` (`glTexSubImage2D` from a pixel unpack buffer: on the GPU).
pub fn upload_from_buffer(texture: u32, buffer: u32, width: u32, height: u32) -> Result<()> {
    // SAFETY: a GL context is current; with `buffer` bound as the pixel unpack buffer the null
    // pointer is offset 0 into it, and GL checks the image against the buffer's size.
    unsafe {
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, buffer);
        gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
        gl::TextureSubImage2D(
            texture,
            0,
            0,
            0,
            width as i32,
            height as i32,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            std::ptr::null(),
        );
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
    }
    gl_check("uploading a frame from a buffer")
}

/// Deletes GL buffer `buffer`.
pub fn delete_buffer(buffer: u32) {
    // SAFETY: a GL context is current; deleting a name twice or 0 is ignored by GL.
    unsafe { gl::DeleteBuffers(1, &buffer) };
}

/// Deletes GL texture `texture`.
pub fn delete_texture(texture: u32) {
    // SAFETY: a GL context is current; deleting a name twice or 0 is ignored by GL.
    unsafe { gl::DeleteTextures(1, &texture) };
}

/// Level `level` (`width` x `height`) of 2D texture `texture` read back with glGetTexImage:
/// RGBA8, bottom row first. Any GL work that wrote the texture, and any CUDA work ordered before
/// an unmap, is done before the pixels arrive.
pub fn read_texture_rgba8(texture: u32, level: i32, width: u32, height: u32) -> Result<Vec<u8>> {
    let mut pixels = vec![0u8; width as usize * height as usize * 4];
    // SAFETY: a GL context is current; with no pixel-pack buffer bound and a pack alignment of
    // 4, GL writes width * height * 4 bytes, which is the length of `pixels`.
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        gl::BindTexture(gl::TEXTURE_2D, texture);
        gl::GetTexImage(
            gl::TEXTURE_2D,
            level,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            pixels.as_mut_ptr().cast(),
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    gl_check("reading the texture back")?;
    Ok(pixels)
}

/// Layer `layer` of level 0 of the `side` x `side` array texture `texture`, read back with
/// glGetTextureSubImage as `format`/`kind` into `len` values of `T` (e.g. RGBA / UNSIGNED_BYTE
/// into `side * side` `[u8; 4]`s, or RED / FLOAT into as many `f32`s), bottom row first.
pub fn read_texture_layer<T: Copy + Default>(
    texture: u32,
    layer: usize,
    side: u32,
    (format, kind): (u32, u32),
    len: usize,
) -> Result<Vec<T>> {
    let mut data = vec![T::default(); len];
    // SAFETY: a GL context is current; with no pixel-pack buffer bound GL writes at most
    // `bufSize` bytes, the size of `data` (rows are packed for the sides the examples use: a
    // multiple of the pack alignment 4).
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        gl::GetTextureSubImage(
            texture,
            0,
            0,
            0,
            layer as i32,
            side as i32,
            side as i32,
            1,
            format,
            kind,
            size_of_val(data.as_slice()) as i32,
            data.as_mut_ptr().cast(),
        );
    }
    gl_check("reading a layer back")?;
    Ok(data)
}

/// The first `len` values of type `T` in GL buffer `buffer`, read back with glGetBufferSubData.
/// Any GL work that wrote the buffer, and any CUDA work ordered before an unmap, is done before
/// the data arrive.
pub fn read_buffer<T: cuda_gl::DeviceCopy + Default>(buffer: u32, len: usize) -> Result<Vec<T>> {
    let mut data = vec![T::default(); len];
    // SAFETY: a GL context is current; GL writes exactly the byte size of `data` (or nothing,
    // with GL_INVALID_VALUE, when the buffer is smaller), and any bytes are a valid `T` (plain
    // data, `DeviceCopy`). GL_COPY_READ_BUFFER is a binding point no example draws with.
    unsafe {
        gl::BindBuffer(gl::COPY_READ_BUFFER, buffer);
        gl::GetBufferSubData(
            gl::COPY_READ_BUFFER,
            0,
            size_of_val(data.as_slice()) as isize,
            data.as_mut_ptr().cast(),
        );
        gl::BindBuffer(gl::COPY_READ_BUFFER, 0);
    }
    gl_check("reading a buffer back")?;
    Ok(data)
}

/// Writes an RGBA8 image given bottom row first (GL's order) as a PNG, top row first, creating
/// its folder if needed.
pub fn write_png(path: &Path, width: u32, height: u32, rgba_bottom_up: &[u8]) -> Result<()> {
    let row = width as usize * 4;
    let top_down: Vec<u8> = rgba_bottom_up
        .chunks_exact(row)
        .rev()
        .flatten()
        .copied()
        .collect();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&top_down)?;
    writer.finish()?;
    Ok(())
}
