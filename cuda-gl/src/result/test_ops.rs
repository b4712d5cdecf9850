//! The record of the copies, kernels and cudarc records queued on this thread, in order, that
//! lib tests read (`recording_ops`): the driver calls' wrappers note theirs.

use cuda_gl_sys as sys;
use std::cell::RefCell;

/// What a run queued on a stream, as [`recording_ops`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// A 2-D copy (`cuMemcpy2DAsync`) on `stream`, out of device address `src` (0 for a source
    /// that is not device memory: a host address or an array).
    Copy { stream: sys::CUstream, src: u64 },
    /// A kernel launch (`cuLaunchKernel`) on `stream`.
    Kernel { stream: sys::CUstream },
    /// cudarc's event `event` recorded on `stream` (`CudarcEvent::record`).
    CudarcRecord {
        stream: sys::CUstream,
        event: sys::CUevent,
    },
}

impl Op {
    /// The stream it was queued on.
    pub(crate) fn stream(&self) -> sys::CUstream {
        match *self {
            Op::Copy { stream, .. } | Op::Kernel { stream } | Op::CudarcRecord { stream, .. } => {
                stream
            }
        }
    }
}

thread_local! {
    /// The ops queued on this thread while [`recording_ops`] runs.
    static OPS: RefCell<Option<Vec<Op>>> = const { RefCell::new(None) };
}

/// Notes `op` when [`recording_ops`] runs on this thread (the copies', kernels' and cudarc
/// records' own calls note theirs).
pub(crate) fn note(op: Op) {
    OPS.with(|ops| {
        if let Some(ops) = ops.borrow_mut().as_mut() {
            ops.push(op);
        }
    });
}

/// `f`'s result and the ops it queued on this thread, in order (runs queue their work on the
/// calling thread).
#[allow(dead_code)]
pub(crate) fn recording_ops<R>(f: impl FnOnce() -> R) -> (R, Vec<Op>) {
    OPS.with(|ops| *ops.borrow_mut() = Some(Vec::new()));
    let out = f();
    let ops = OPS.with(|ops| ops.borrow_mut().take()).unwrap_or_default();
    (out, ops)
}

/// The record is kept while [`recording_ops`] runs, in order, and only then.
#[test]
fn ops_are_recorded_in_order_while_asked_only() {
    let (a, b) = (1usize as sys::CUstream, 2usize as sys::CUstream);
    note(Op::Kernel { stream: a });
    let ((), ops) = recording_ops(|| {
        note(Op::Copy { stream: a, src: 5 });
        note(Op::CudarcRecord {
            stream: b,
            event: std::ptr::null_mut(),
        });
    });
    assert_eq!(
        ops,
        [
            Op::Copy { stream: a, src: 5 },
            Op::CudarcRecord {
                stream: b,
                event: std::ptr::null_mut()
            }
        ]
    );
    assert_eq!(ops[1].stream(), b);
    note(Op::Kernel { stream: a });
    assert_eq!(
        recording_ops(|| ()).1,
        [],
        "nothing kept between recordings"
    );
}
