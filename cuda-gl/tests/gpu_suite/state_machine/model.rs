//! What the test tracks per slot: the GL object, the registration and the model of its state,
//! and the counts it reports.

use super::*;

/// The GL object a slot holds: its name and what was created.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotObject {
    pub(crate) name: u32,
    pub(crate) kind: NewObject,
}

#[derive(Debug)]
pub(crate) enum Res {
    Buffer(RegisteredBuffer),
    Image(RegisteredImage),
}

/// The model of one registration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Model {
    pub(crate) flags: RegisterFlags,
    pub(crate) map_flags: MapFlags,
    /// Mapped by a leaked guard.
    pub(crate) leaked: bool,
}

#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) obj: SlotObject,
    /// The pattern seed the GL object holds, or `None` when the model cannot know (a discarding
    /// map that wrote nothing).
    pub(crate) content: Option<u32>,
    pub(crate) res: Res,
    pub(crate) model: Model,
}

#[derive(Debug)]
pub(crate) enum Slot {
    Empty,
    Gl {
        obj: SlotObject,
        content: Option<u32>,
    },
    Registered(Box<Registered>),
    /// Mapped: the resource is borrowed by a live guard, so nothing else may name it.
    CheckedOut,
}

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) cases: u64,
    pub(crate) ops: u64,
    pub(crate) registers: u64,
    pub(crate) maps: u64,
    pub(crate) batches: u64,
    pub(crate) batch_members: u64,
    pub(crate) set_flags: u64,
    pub(crate) drops: u64,
    pub(crate) unregisters: u64,
    pub(crate) already_registered: u64,
    pub(crate) empty_batches: u64,
    pub(crate) leaked_guards: u64,
    pub(crate) static_skips: u64,
    pub(crate) idle: u64,
    pub(crate) content_checks: u64,
}
