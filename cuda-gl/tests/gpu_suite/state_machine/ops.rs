//! The operations a sequence is made of, and the proptest strategies that draw them.

use super::*;

/// How a mapping ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// `unmap()`, checked.
    Unmap,
    /// The guard is dropped.
    Drop,
    /// The guard is leaked with `mem::forget`: the resource stays mapped until recovered.
    Forget,
}

/// A GL object to create for an empty slot.
#[derive(Debug, Clone, Copy)]
pub(crate) enum NewObject {
    Buffer { words: usize },
    Texture { w: usize, h: usize },
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Register {
        slot: usize,
        object: NewObject,
        flags: usize,
    },
    Map {
        slot: usize,
        end: End,
        inner: Vec<Op>,
    },
    MapBatch {
        slots: Vec<usize>,
        end: End,
        inner: Vec<Op>,
    },
    SetMapFlags {
        slot: usize,
        flags: MapFlags,
    },
    Drop {
        slot: usize,
    },
    Unregister {
        slot: usize,
    },
}

pub(crate) const BUFFER_FLAGS: [RegisterFlags; 3] = [
    RegisterFlags::NONE,
    RegisterFlags::READ_ONLY,
    RegisterFlags::WRITE_DISCARD,
];

pub(crate) fn texture_flags() -> [RegisterFlags; 5] {
    [
        RegisterFlags::NONE,
        RegisterFlags::READ_ONLY,
        RegisterFlags::SURFACE_LOAD_STORE,
        RegisterFlags::SURFACE_LOAD_STORE.union(RegisterFlags::WRITE_DISCARD),
        RegisterFlags::TEXTURE_GATHER,
    ]
}

pub(crate) fn end_strategy() -> impl Strategy<Value = End> {
    prop_oneof![3 => Just(End::Unmap), 3 => Just(End::Drop), 1 => Just(End::Forget)]
}

/// Operations without a scope: register (into slot `slot`), map with no nested operations,
/// `set_map_flags`, drop, unregister. Every operation but register names a resource by `pick`,
/// an index into the registered resources that no live guard borrows (see [`Env::resolve`]).
pub(crate) fn leaf_strategy() -> BoxedStrategy<Op> {
    let object = prop_oneof![
        (1usize..=4096).prop_map(|words| NewObject::Buffer { words }),
        (1usize..=64, 1usize..=64).prop_map(|(w, h)| NewObject::Texture { w, h }),
    ];
    let map_flags = prop_oneof![
        Just(MapFlags::None),
        Just(MapFlags::ReadOnly),
        Just(MapFlags::WriteDiscard)
    ];
    prop_oneof![
        3 => (0..SLOTS, object, 0usize..16)
            .prop_map(|(slot, object, flags)| Op::Register { slot, object, flags }),
        2 => (0..SLOTS, map_flags).prop_map(|(slot, flags)| Op::SetMapFlags { slot, flags }),
        1 => (0..SLOTS).prop_map(|slot| Op::Drop { slot }),
        1 => (0..SLOTS).prop_map(|slot| Op::Unregister { slot }),
        3 => (0..SLOTS, end_strategy())
            .prop_map(|(slot, end)| Op::Map { slot, end, inner: Vec::new() }),
    ]
    .boxed()
}

/// `inner`, or a map or batch map whose guard lives while up to 3 `inner` operations run.
pub(crate) fn with_scopes(inner: BoxedStrategy<Op>) -> BoxedStrategy<Op> {
    prop_oneof![
        6 => inner.clone(),
        2 => (0..SLOTS, end_strategy(), prop::collection::vec(inner.clone(), 0..4))
            .prop_map(|(slot, end, inner)| Op::Map { slot, end, inner }),
        1 => (
            prop::collection::vec(0..SLOTS, 1..6),
            end_strategy(),
            prop::collection::vec(inner, 0..4)
        )
            .prop_map(|(slots, end, inner)| Op::MapBatch { slots, end, inner }),
    ]
    .boxed()
}

/// Operations with mappings nested up to two deep.
pub(crate) fn op_strategy() -> BoxedStrategy<Op> {
    with_scopes(with_scopes(leaf_strategy()))
}

/// Ends a mapping as `end` says; returns whether the resource stays mapped (leaked).
pub(crate) fn finish<G>(
    guard: G,
    end: End,
    unmap: impl FnOnce(G) -> cuda_gl::Result<()>,
) -> Result<bool, TestCaseError> {
    match end {
        End::Unmap => {
            let r = unmap(guard);
            prop_assert!(r.is_ok(), "unmap: {:?}", r);
            Ok(false)
        }
        End::Drop => {
            drop(guard);
            Ok(false)
        }
        End::Forget => {
            std::mem::forget(guard);
            Ok(true)
        }
    }
}
