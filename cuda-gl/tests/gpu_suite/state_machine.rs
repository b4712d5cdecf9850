//! A property test of the registration state machine on a real GPU.
//!
//! proptest drives random sequences of register, map, batch map, unmap (explicit, by dropping the
//! guard, or by leaking it with `mem::forget`), `set_map_flags`, drop and unregister over up to 8
//! resources of mixed kinds (GL buffers and RGBA8 textures of random sizes and flags), and checks
//! every step against a model: what each call returns, `is_mapped()`, `map_flags()`, mapped sizes,
//! and the GL contents after each unregister (the last value a kernel wrote, or the initial data
//! when nothing was written). Every sequence ends with every resource unregistered and
//! `Context::check_drop_errors` clean.
//!
//! The borrow checker rules out some sequences statically (mapping a resource twice, dropping or
//! unregistering it while a guard lives): a mapped resource is checked out of its slot while its
//! guard lives, so operations pick among the registered resources no guard borrows, and a
//! register into a checked-out slot is skipped, as it could not be written. The model covers
//! the sequences that are legal to write but wrong at run time: registering an object that is
//! registered already (`AlreadyRegistered`), an empty batch (`UsageError::EmptyBatch`), and leaked
//! guards (recovered by the next map, `set_map_flags`, unregister or drop).
//!
//! `PROPTEST_CASES` sets the number of sequences (default 1024).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use crate::harness;
use cuda_gl::{
    Error, Function, ImageTarget, MapFlags, RegisterFlags, RegisteredBuffer, RegisteredImage,
    UsageError, map_all,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::{Cell, RefCell};
use std::time::Instant;

// The operations and their strategies, and the model of each slot, in `state_machine/`.
mod model;
mod ops;

use model::*;
use ops::*;

const SLOTS: usize = 8;

struct Env<'g> {
    g: &'g Gpu,
    fill: Function,
    surface_fill: Function,
    seed: Cell<u32>,
    stats: RefCell<Stats>,
}

type Check = Result<(), TestCaseError>;

impl Env<'_> {
    fn next_seed(&self) -> u32 {
        let s = self.seed.get().wrapping_add(0x9E37_79B9);
        self.seed.set(s);
        s
    }

    fn create(&self, kind: NewObject) -> (SlotObject, u32) {
        let seed = self.next_seed();
        let name = match kind {
            NewObject::Buffer { words } => gl_buffer(words * 4, Some(&pattern_words(words, seed))),
            NewObject::Texture { w, h } => {
                let tex = gl_texture_rgba8(w as i32, h as i32, 1);
                let data = pattern_words(w * h, seed);
                upload_texels_rgba8(tex, w, h, &data);
                tex
            }
        };
        (SlotObject { name, kind }, seed)
    }

    fn register(&self, obj: SlotObject, flags: usize) -> cuda_gl::Result<(Res, RegisterFlags)> {
        match obj.kind {
            NewObject::Buffer { .. } => {
                let f = BUFFER_FLAGS[flags % BUFFER_FLAGS.len()];
                Ok((
                    Res::Buffer(RegisteredBuffer::register(&self.g.ctx, obj.name, f)?),
                    f,
                ))
            }
            NewObject::Texture { .. } => {
                let all = texture_flags();
                let f = all[flags % all.len()];
                Ok((
                    Res::Image(RegisteredImage::register(
                        &self.g.ctx,
                        obj.name,
                        ImageTarget::Texture2D,
                        f,
                    )?),
                    f,
                ))
            }
        }
    }

    /// Checks the GL object's contents against the model.
    fn check_content(&self, obj: SlotObject, content: Option<u32>) -> Check {
        let Some(seed) = content else { return Ok(()) };
        let (got, words) = match obj.kind {
            NewObject::Buffer { words } => (read_gl_buffer(obj.name, words), words),
            NewObject::Texture { w, h } => (read_texture_rgba8(obj.name, w, h, 0), w * h),
        };
        self.stats.borrow_mut().content_checks += 1;
        prop_assert!(
            got == pattern_words(words, seed),
            "GL object {} ({:?}) does not hold pattern {seed:#x}",
            obj.name,
            obj.kind
        );
        Ok(())
    }

    fn delete(&self, obj: SlotObject) {
        match obj.kind {
            NewObject::Buffer { .. } => delete_buffer(obj.name),
            NewObject::Texture { .. } => delete_texture(obj.name),
        }
    }

    fn check_slots(&self, slots: &[Slot]) -> Check {
        for s in slots {
            if let Slot::Registered(r) = s {
                let (mapped, flags) = match &r.res {
                    Res::Buffer(b) => (b.is_mapped(), b.map_flags()),
                    Res::Image(i) => (i.is_mapped(), i.map_flags()),
                };
                prop_assert_eq!(mapped, r.model.leaked, "is_mapped of {:?}", r.obj);
                prop_assert_eq!(flags, r.model.map_flags, "map_flags of {:?}", r.obj);
            }
        }
        Ok(())
    }

    fn run(&self, slots: &mut [Slot], ops: &[Op]) -> Check {
        for op in ops {
            self.stats.borrow_mut().ops += 1;
            self.step(slots, op)?;
            self.check_slots(slots)?;
        }
        Ok(())
    }

    /// The slot of the `pick`-th registered resource that no live guard borrows, if any.
    fn resolve(&self, slots: &[Slot], pick: usize) -> Option<usize> {
        let live: Vec<usize> = (0..slots.len())
            .filter(|&i| matches!(slots[i], Slot::Registered(_)))
            .collect();
        if live.is_empty() {
            self.stats.borrow_mut().idle += 1;
            return None;
        }
        Some(live[pick % live.len()])
    }

    fn step(&self, slots: &mut [Slot], op: &Op) -> Check {
        let op = &match op {
            Op::Register { .. } => op.clone(),
            Op::Map { slot, end, inner } => match self.resolve(slots, *slot) {
                Some(slot) => Op::Map {
                    slot,
                    end: *end,
                    inner: inner.clone(),
                },
                None => return self.run(slots, inner),
            },
            Op::MapBatch {
                slots: picks,
                end,
                inner,
            } => {
                let mut chosen: Vec<usize> = picks
                    .iter()
                    .filter_map(|&p| self.resolve(slots, p))
                    .collect();
                chosen.sort_unstable();
                chosen.dedup();
                Op::MapBatch {
                    slots: chosen,
                    end: *end,
                    inner: inner.clone(),
                }
            }
            Op::SetMapFlags { slot, flags } => match self.resolve(slots, *slot) {
                Some(slot) => Op::SetMapFlags {
                    slot,
                    flags: *flags,
                },
                None => return Ok(()),
            },
            Op::Drop { slot } => match self.resolve(slots, *slot) {
                Some(slot) => Op::Drop { slot },
                None => return Ok(()),
            },
            Op::Unregister { slot } => match self.resolve(slots, *slot) {
                Some(slot) => Op::Unregister { slot },
                None => return Ok(()),
            },
        };
        match op {
            Op::Register {
                slot,
                object,
                flags,
            } => self.op_register(slots, *slot, *object, *flags),
            Op::Map { slot, end, inner } => self.op_map(slots, *slot, *end, inner),
            Op::MapBatch {
                slots: list,
                end,
                inner,
            } => self.op_batch(slots, list, *end, inner),
            Op::SetMapFlags { slot, flags } => {
                let Slot::Registered(r) = &mut slots[*slot] else {
                    return self.skip(&slots[*slot]);
                };
                let result = match &mut r.res {
                    Res::Buffer(b) => b.set_map_flags(*flags),
                    Res::Image(i) => i.set_map_flags(*flags),
                };
                prop_assert!(result.is_ok(), "set_map_flags: {:?}", result);
                r.model.map_flags = *flags;
                r.model.leaked = false;
                self.stats.borrow_mut().set_flags += 1;
                Ok(())
            }
            Op::Drop { slot } | Op::Unregister { slot } => {
                let explicit = matches!(op, Op::Unregister { .. });
                match std::mem::replace(&mut slots[*slot], Slot::Empty) {
                    Slot::Registered(r) => {
                        let Registered {
                            obj, content, res, ..
                        } = *r;
                        if explicit {
                            let result = match res {
                                Res::Buffer(b) => b.unregister(),
                                Res::Image(i) => i.unregister(),
                            };
                            prop_assert!(result.is_ok(), "unregister: {:?}", result);
                            self.stats.borrow_mut().unregisters += 1;
                        } else {
                            drop(res);
                            self.stats.borrow_mut().drops += 1;
                        }
                        let errors = self.g.ctx.check_drop_errors();
                        prop_assert!(errors.is_ok(), "drop errors: {:?}", errors);
                        self.check_content(obj, content)?;
                        slots[*slot] = Slot::Gl { obj, content };
                        Ok(())
                    }
                    other => {
                        let skipped = self.skip(&other);
                        slots[*slot] = other;
                        skipped
                    }
                }
            }
        }
    }

    fn skip(&self, slot: &Slot) -> Check {
        if matches!(slot, Slot::CheckedOut) {
            self.stats.borrow_mut().static_skips += 1;
        }
        Ok(())
    }

    fn op_register(
        &self,
        slots: &mut [Slot],
        slot: usize,
        object: NewObject,
        flags: usize,
    ) -> Check {
        match std::mem::replace(&mut slots[slot], Slot::CheckedOut) {
            Slot::CheckedOut => {
                self.stats.borrow_mut().static_skips += 1;
            }
            Slot::Registered(r) => {
                // The object is registered already: the model expects the refusal.
                let again = self.register(r.obj, flags);
                prop_assert!(
                    matches!(again, Err(Error::AlreadyRegistered { .. })),
                    "registering {:?} twice: {:?}",
                    r.obj,
                    again.map(|_| ())
                );
                self.stats.borrow_mut().already_registered += 1;
                slots[slot] = Slot::Registered(r);
            }
            fresh @ (Slot::Empty | Slot::Gl { .. }) => {
                let (obj, content) = match fresh {
                    Slot::Gl { obj, content } => (obj, content),
                    _ => {
                        let (obj, seed) = self.create(object);
                        (obj, Some(seed))
                    }
                };
                let registered = self.register(obj, flags);
                prop_assert!(
                    registered.is_ok(),
                    "register {:?}: {:?}",
                    obj,
                    registered.as_ref().err()
                );
                let (res, flags) = registered.unwrap();
                self.stats.borrow_mut().registers += 1;
                slots[slot] = Slot::Registered(Box::new(Registered {
                    obj,
                    content,
                    res,
                    model: Model {
                        flags,
                        map_flags: MapFlags::None,
                        leaked: false,
                    },
                }));
            }
        }
        Ok(())
    }

    /// Whether a single map of `r` lets the test write it, and whether a map that does not write
    /// may discard the contents.
    fn writable(r: &Registered, batch: bool) -> (bool, bool) {
        let m = r.model;
        let reads_only =
            m.flags.contains(RegisterFlags::READ_ONLY) || m.map_flags == MapFlags::ReadOnly;
        let can_write = match r.obj.kind {
            NewObject::Buffer { .. } => true,
            // A batch hands out arrays, not surfaces, so the test writes textures only alone.
            NewObject::Texture { .. } => {
                !batch && m.flags.contains(RegisterFlags::SURFACE_LOAD_STORE)
            }
        };
        let discards =
            m.flags.contains(RegisterFlags::WRITE_DISCARD) || m.map_flags == MapFlags::WriteDiscard;
        (can_write && !reads_only, discards)
    }

    fn launch_fill(&self, ptr: cuda_gl::DevicePtr<'_>, words: usize, seed: u32) -> Check {
        // SAFETY: `ptr` is a mapped buffer of `words` words, mapped until the guard ends, which
        // is ordered after the launch on the same stream.
        let r = unsafe { launch_words(&self.fill, &self.g.stream, ptr, words, seed) };
        prop_assert!(r.is_ok(), "launch: {:?}", r);
        Ok(())
    }

    fn op_map(&self, slots: &mut [Slot], slot: usize, end: End, inner: &[Op]) -> Check {
        let mut r = match std::mem::replace(&mut slots[slot], Slot::CheckedOut) {
            Slot::Registered(r) => r,
            other => {
                let skipped = self.skip(&other);
                slots[slot] = other;
                return skipped;
            }
        };
        self.stats.borrow_mut().maps += 1;
        let (write, discards) = Self::writable(&r, false);
        let seed = self.next_seed();
        let stream = &self.g.stream;
        let obj = r.obj;
        let leak = match &mut r.res {
            Res::Buffer(b) => {
                let mapped = b.map(stream);
                prop_assert!(mapped.is_ok(), "map {:?}: {:?}", obj, mapped.as_ref().err());
                let mapped = mapped.unwrap();
                let NewObject::Buffer { words } = obj.kind else {
                    unreachable!()
                };
                prop_assert_eq!(mapped.size(), words * 4);
                if write {
                    self.launch_fill(mapped.device_ptr(), words, seed)?;
                }
                self.run(slots, inner)?;
                finish(mapped, end, |m| m.unmap())?
            }
            Res::Image(i) => {
                let mapped = i.map(stream);
                prop_assert!(mapped.is_ok(), "map {:?}: {:?}", obj, mapped.as_ref().err());
                let mapped = mapped.unwrap();
                let NewObject::Texture { w, h } = obj.kind else {
                    unreachable!()
                };
                let array = mapped.array(0, 0);
                prop_assert!(array.is_ok(), "array: {:?}", array.err());
                let array = array.unwrap();
                prop_assert_eq!((array.width(), array.height()), (w, h));
                if write {
                    let surface = mapped.surface();
                    prop_assert!(surface.is_ok(), "surface: {:?}", surface.err());
                    let surface = surface.unwrap();
                    // SAFETY: the surface covers the w x h texture, mapped until the guard ends.
                    let launched =
                        unsafe { launch_image(&self.surface_fill, stream, surface, (w, h), seed) };
                    prop_assert!(launched.is_ok(), "launch: {:?}", launched);
                }
                self.run(slots, inner)?;
                finish(mapped, end, |m| m.unmap())?
            }
        };
        if write {
            r.content = Some(seed);
        } else if discards {
            r.content = None;
        }
        r.model.leaked = leak;
        self.stats.borrow_mut().leaked_guards += u64::from(leak);
        slots[slot] = Slot::Registered(r);
        Ok(())
    }

    fn op_batch(&self, slots: &mut [Slot], list: &[usize], end: End, inner: &[Op]) -> Check {
        let mut taken: Vec<(usize, Box<Registered>)> = Vec::new();
        for &i in list {
            match std::mem::replace(&mut slots[i], Slot::CheckedOut) {
                Slot::Registered(r) => taken.push((i, r)),
                other => {
                    self.skip(&other)?;
                    slots[i] = other;
                }
            }
        }
        self.stats.borrow_mut().batches += 1;
        if taken.is_empty() {
            let empty: Vec<&mut RegisteredBuffer> = Vec::new();
            let r = map_all(empty, &self.g.stream);
            prop_assert!(
                matches!(r, Err(Error::Usage(UsageError::EmptyBatch))),
                "an empty batch: {:?}",
                r.map(|b| b.len())
            );
            self.stats.borrow_mut().empty_batches += 1;
            return self.run(slots, inner);
        }
        self.stats.borrow_mut().batch_members += taken.len() as u64;
        let plan: Vec<(bool, bool, SlotObject, u32)> = taken
            .iter()
            .map(|(_, r)| {
                let (w, d) = Self::writable(r, true);
                (w, d, r.obj, self.next_seed())
            })
            .collect();
        let leak = {
            // The buffers and the images of the batch, each with its plan: mapped as the pair
            // `(buffers, images)`, viewed as `(Vec<MappedBuffer>, Vec<MappedImage>)`.
            let (mut buffers, mut images) = (Vec::new(), Vec::new());
            let (mut buffer_plan, mut image_plan) = (Vec::new(), Vec::new());
            for ((_, r), step) in taken.iter_mut().zip(&plan) {
                match &mut r.res {
                    Res::Buffer(b) => {
                        buffers.push(b);
                        buffer_plan.push(*step);
                    }
                    Res::Image(i) => {
                        images.push(i);
                        image_plan.push(*step);
                    }
                }
            }
            let batch = map_all((buffers, images), &self.g.stream);
            prop_assert!(batch.is_ok(), "map_all: {:?}", batch.as_ref().err());
            let batch = batch.unwrap();
            prop_assert_eq!(batch.len(), plan.len());
            let (mapped_buffers, mapped_images) = batch.views();
            for (b, &(write, _, obj, seed)) in mapped_buffers.iter().zip(&buffer_plan) {
                if let NewObject::Buffer { words } = obj.kind {
                    prop_assert_eq!(b.size(), words * 4);
                    if write {
                        self.launch_fill(b.device_ptr(), words, seed)?;
                    }
                }
            }
            for (i, &(_, _, obj, _)) in mapped_images.iter().zip(&image_plan) {
                if let NewObject::Texture { w, h } = obj.kind {
                    let a = i.array(0, 0);
                    prop_assert!(a.is_ok(), "array of a batch's image: {:?}", a.err());
                    let a = a.unwrap();
                    prop_assert_eq!((a.width(), a.height()), (w, h));
                }
            }
            self.run(slots, inner)?;
            finish(batch, end, |b| b.unmap())?
        };
        if leak {
            self.stats.borrow_mut().leaked_guards += taken.len() as u64;
        }
        for ((i, mut r), (write, discards, _, seed)) in taken.into_iter().zip(plan) {
            if write {
                r.content = Some(seed);
            } else if discards {
                r.content = None;
            }
            r.model.leaked = leak;
            slots[i] = Slot::Registered(r);
        }
        Ok(())
    }

    /// Unregisters and deletes everything, checking contents and the context's drop errors.
    fn teardown(&self, slots: &mut [Slot]) -> Check {
        for slot in slots.iter_mut() {
            match std::mem::replace(slot, Slot::Empty) {
                Slot::Registered(r) => {
                    let Registered {
                        obj, content, res, ..
                    } = *r;
                    let result = match res {
                        Res::Buffer(b) => b.unregister(),
                        Res::Image(i) => i.unregister(),
                    };
                    prop_assert!(result.is_ok(), "final unregister: {:?}", result);
                    self.check_content(obj, content)?;
                    self.delete(obj);
                }
                Slot::Gl { obj, content } => {
                    self.check_content(obj, content)?;
                    self.delete(obj);
                }
                Slot::Empty | Slot::CheckedOut => {}
            }
        }
        let errors = self.g.ctx.check_drop_errors();
        prop_assert!(errors.is_ok(), "drop errors left over: {:?}", errors);
        let synced = self.g.stream.synchronize();
        prop_assert!(synced.is_ok(), "stream: {:?}", synced);
        check_gl();
        Ok(())
    }
}

#[test]
fn random_sequences_match_the_model() {
    let Some(g) = gpu() else { return };
    let cases = harness::env_or("PROPTEST_CASES", 1024) as u32;
    let env = Env {
        g: &g,
        fill: g.kernels.function("fill_u32").unwrap(),
        surface_fill: g.kernels.function("surface_fill_rgba8").unwrap(),
        seed: Cell::new(1),
        stats: RefCell::new(Stats::default()),
    };
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let timer = Instant::now();
    let outcome = runner.run(&prop::collection::vec(op_strategy(), 1..32), |ops| {
        env.stats.borrow_mut().cases += 1;
        // A failed earlier case (while shrinking) may have left drop errors: start clean.
        g.ctx.take_drop_errors();
        let mut slots: Vec<Slot> = (0..SLOTS).map(|_| Slot::Empty).collect();
        env.run(&mut slots, &ops)?;
        env.teardown(&mut slots)
    });
    let secs = timer.elapsed().as_secs_f64();
    let s = env.stats.borrow();
    eprintln!(
        "state machine: {cases} proptest cases ({} runs with shrinking) in {secs:.2} s, {} ops: \
         {} registers, {} maps, {} batch maps ({} resources), {} set_map_flags, {} drops, {} \
         unregisters; model-predicted errors: {} AlreadyRegistered, {} EmptyBatch; {} leaked guards recovered, {} registers skipped as the borrow \
         checker would forbid them, {} ops with no free registered resource; {} GL content \
         checks",
        s.cases,
        s.ops,
        s.registers,
        s.maps,
        s.batches - s.empty_batches,
        s.batch_members,
        s.set_flags,
        s.drops,
        s.unregisters,
        s.already_registered,
        s.empty_batches,
        s.leaked_guards,
        s.static_skips,
        s.idle,
        s.content_checks,
    );
    if let Err(e) = outcome {
        panic!("{e}");
    }
}
