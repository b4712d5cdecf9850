//! Shader programs: compile and link GLSL with GL's info log in the error, and set integer
//! uniforms.

use crate::object::Kind;
use anyhow::{Result, anyhow};
use gl::types::{GLchar, GLenum, GLint, GLsizei, GLuint};
use std::ffi::CString;

/// Compiles `vertex` and `fragment` (GLSL sources) and links them into a program, which the
/// caller owns (delete it with [`Kind::Program`]). The shader objects are deleted either way.
///
/// # Errors
/// A shader that does not compile or a program that does not link, with GL's info log.
pub fn program(vertex: &str, fragment: &str) -> Result<GLuint> {
    link(&[(gl::VERTEX_SHADER, vertex), (gl::FRAGMENT_SHADER, fragment)])
}

/// Compiles each `(kind, source)` stage (`gl::VERTEX_SHADER`, `gl::FRAGMENT_SHADER`,
/// `gl::COMPUTE_SHADER`, ...) and links them into a program, which the caller owns. The shader
/// objects are deleted either way.
///
/// # Errors
/// A shader that does not compile or a program that does not link, with GL's info log.
pub fn link(stages: &[(GLenum, &str)]) -> Result<GLuint> {
    let mut shaders = Vec::with_capacity(stages.len());
    for &(kind, source) in stages {
        match compile(kind, source) {
            Ok(shader) => shaders.push(shader),
            Err(e) => {
                shaders.into_iter().for_each(delete_shader);
                return Err(e);
            }
        }
    }
    // SAFETY: a context is current (the crate's contract); every shader compiled.
    let program = unsafe {
        let program = gl::CreateProgram();
        for &shader in &shaders {
            gl::AttachShader(program, shader);
        }
        gl::LinkProgram(program);
        program
    };
    // The program keeps what it needs: the shader objects can go once it is linked.
    shaders.into_iter().for_each(delete_shader);
    succeeded(program, Object::Program)
        .map_err(|log| anyhow!("the shader program does not link: {log}"))
}

/// Deletes shader object `shader` (GL ignores a name that is not a shader).
fn delete_shader(shader: GLuint) {
    // SAFETY: a context is current; no pointers are passed.
    unsafe { gl::DeleteShader(shader) };
}

/// The name of a shader stage, for errors.
fn stage_name(kind: GLenum) -> &'static str {
    match kind {
        gl::VERTEX_SHADER => "vertex",
        gl::FRAGMENT_SHADER => "fragment",
        gl::COMPUTE_SHADER => "compute",
        gl::GEOMETRY_SHADER => "geometry",
        _ => "GLSL",
    }
}

/// A shader of `kind` compiled from `source`.
fn compile(kind: GLenum, source: &str) -> Result<GLuint> {
    let source = CString::new(source)?;
    // SAFETY: a context is current; `source` is NUL-terminated, so a null length array is
    // allowed, and outlives the call.
    let shader = unsafe {
        let shader = gl::CreateShader(kind);
        gl::ShaderSource(shader, 1, &source.as_ptr(), std::ptr::null());
        gl::CompileShader(shader);
        shader
    };
    succeeded(shader, Object::Shader)
        .map_err(|log| anyhow!("the {} shader does not compile: {log}", stage_name(kind)))
}

/// Sets integer (or sampler) uniform `name` of `program` to `value`; `false`, with nothing
/// set, when the program has no such active uniform. Leaves no program in use.
pub fn set_int(program: GLuint, name: &str, value: i32) -> bool {
    let Ok(name) = CString::new(name) else {
        return false;
    };
    // SAFETY: a context is current; `name` is NUL-terminated; a location of -1 is not set.
    unsafe {
        gl::UseProgram(program);
        let at = gl::GetUniformLocation(program, name.as_ptr());
        if at >= 0 {
            gl::Uniform1i(at, value);
        }
        gl::UseProgram(0);
        at >= 0
    }
}

/// Shaders and programs: the status query, info log and delete of each.
#[derive(Clone, Copy)]
enum Object {
    Shader,
    Program,
}

type GetIv = unsafe fn(GLuint, GLenum, *mut GLint);
type GetLog = unsafe fn(GLuint, GLsizei, *mut GLsizei, *mut GLchar);

impl Object {
    /// The status to check, the parameter query and the info-log read of this kind of object.
    fn functions(self) -> (GLenum, GetIv, GetLog) {
        match self {
            Object::Shader => (gl::COMPILE_STATUS, gl::GetShaderiv, gl::GetShaderInfoLog),
            Object::Program => (gl::LINK_STATUS, gl::GetProgramiv, gl::GetProgramInfoLog),
        }
    }

    fn delete(self, name: GLuint) {
        match self {
            Object::Shader => delete_shader(name),
            Object::Program => Kind::Program.delete(name),
        }
    }
}

/// `name` when its compile or link status is true; otherwise deletes it and returns its info
/// log.
fn succeeded(name: GLuint, object: Object) -> Result<GLuint, String> {
    let (status, get_iv, get_log) = object.functions();
    let (mut ok, mut len) = (0, 0);
    // SAFETY: a context is current; `name` is an object of `object`'s kind, which the functions
    // take; both out-pointers are valid for one integer.
    unsafe {
        get_iv(name, status, &mut ok);
        get_iv(name, gl::INFO_LOG_LENGTH, &mut len);
    }
    if ok != 0 {
        return Ok(name);
    }
    let mut log = vec![0u8; usize::try_from(len).unwrap_or(0).max(1)];
    let mut written: GLsizei = 0;
    let room = GLsizei::try_from(log.len()).unwrap_or(GLsizei::MAX);
    // SAFETY: as above; GL writes at most `room` bytes, the length of `log`.
    unsafe { get_log(name, room, &mut written, log.as_mut_ptr().cast()) };
    log.truncate(usize::try_from(written).unwrap_or(0));
    object.delete(name);
    Err(String::from_utf8_lossy(&log).trim().to_string())
}
