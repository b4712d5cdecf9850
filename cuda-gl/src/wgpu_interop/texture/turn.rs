//! Whose a [`SharedTexture`](super::SharedTexture)'s image is, at which semaphore value, and
//! whether the resources' `done` event follows CUDA's last queued signal: the state that the
//! hand-offs move and the recovery reads, kept apart from the driver calls so that its rules are
//! tested without a GPU.
//!
//! The rule that matters most: a timeline value is signalled at most once. Signalling a value
//! that is not above the semaphore's current one is invalid Vulkan usage, so once CUDA's signal
//! of a value is queued, the texture is [`Owner::Signalled`] whatever fails after it (recording
//! `done` included), and its recovery acquires that signal again rather than signal anew.

/// Whose the image is (see [`SharedTexture`](super::SharedTexture), "Recovery").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Owner {
    /// wgpu's: the acquire of CUDA's last signal was submitted.
    Wgpu,
    /// Released to CUDA at the turn's value (wgpu's signal), with no signal of CUDA's queued
    /// after it: a write is open, its guard was leaked, or its wait or signal could not be
    /// queued; or the return of an image released ahead queued CUDA's wait but not its signal.
    /// The write's work may be on a stream that is gone.
    Cuda,
    /// CUDA's signal of the turn's value is queued after the write's work, but wgpu refused the
    /// acquire that waits for it (or it was not submitted yet).
    Signalled,
    /// Released to CUDA ahead of a write, at the turn's value (wgpu's signal, made or submitted:
    /// an accepted release whose signal is never made is [`Owner::Cuda`]): no CUDA work waits
    /// for it or uses the image yet. The next write only queues CUDA's wait for that value.
    Ahead,
}

/// A shared texture's hand-off state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Turn {
    /// The semaphore's last value asked for (by either side).
    pub(super) value: u64,
    pub(super) owner: Owner,
    /// CUDA's last signal is queued but `done` could not be recorded after it: `done` then
    /// marks an earlier point of CUDA's work, and is recorded again (or the whole context
    /// waited for) before anything trusts it (the recovery's first step, the drop's).
    pub(super) unmarked: bool,
    /// wgpu's release of the turn's value was accepted but its signal is never made: wgpu
    /// refused the submit that carried it, it was taken back, and the host's signal gave up
    /// (the barriers' submit outlasted the wait limit, or the device refused it). The recovery
    /// then must not wait for the value (nothing signals it), and signals above it.
    pub(super) unsignalled: bool,
}

/// What the recovery of a texture does, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Recovery {
    /// First, `done` is recorded again after CUDA's last signal (queued on cuda-gl's private
    /// stream, where a later record follows it), or the context waited for.
    pub(super) mark: bool,
    /// Then this.
    pub(super) step: Step,
}

/// The recovery's step by the image's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// The image is wgpu's.
    Nothing,
    /// The acquire of CUDA's queued signal of the turn's value is submitted again: wgpu's queue
    /// waits for it on the GPU; the value is not signalled again.
    Acquire,
    /// wgpu's release of the turn's value is waited for, then the whole context, then CUDA
    /// signals [`Turn::next`] (no signal of CUDA's was queued since the release).
    Signal,
    /// The image was released ahead and no write took it ([`Owner::Ahead`]): CUDA waits for
    /// the release on the GPU and signals [`Turn::next`] at once (no CPU wait: no work of
    /// CUDA's uses the image), and wgpu acquires that signal.
    Return,
    /// As [`Step::Signal`] for a release whose signal is never made ([`Turn::unsignalled`]):
    /// the whole context is waited for, then CUDA signals [`Turn::next`], above the value that
    /// nothing signals (waiting for it would give up after the wait limit at every write, and
    /// the texture would never be recovered).
    SignalUnreleased,
}

impl Turn {
    /// A new texture's: wgpu's, at value 0, nothing queued.
    pub(super) fn new() -> Turn {
        Turn {
            value: 0,
            owner: Owner::Wgpu,
            unmarked: false,
            unsignalled: false,
        }
    }

    /// The value of the next signal, either side's: above every value signalled or asked for.
    pub(super) fn next(&self) -> u64 {
        self.value + 1
    }

    /// wgpu's release at `value` was accepted (its barriers' submit): the image is CUDA's.
    pub(super) fn released(&mut self, value: u64) {
        (self.value, self.owner) = (value, Owner::Cuda);
        self.unsignalled = false;
    }

    /// The release just made ([`released`](Self::released)) was made ahead of a write, and
    /// its signal was made or submitted: no write has taken the image yet.
    pub(super) fn released_ahead(&mut self) {
        if !self.unsignalled {
            self.owner = Owner::Ahead;
        }
    }

    /// A write (or the recovery's return) takes an image released ahead: CUDA's wait for the
    /// turn's value is queued, and from here CUDA's work may use the image.
    pub(super) fn taken(&mut self) {
        self.owner = Owner::Cuda;
    }

    /// The signal of the release just accepted ([`released`](Self::released)) is never made.
    pub(super) fn never_signalled(&mut self) {
        self.unsignalled = true;
    }

    /// CUDA's signal of `value` is queued, and `done` after it when `marked`: from here that
    /// value is never signalled again.
    pub(super) fn signalled(&mut self, value: u64, marked: bool) {
        (self.value, self.owner) = (value, Owner::Signalled);
        self.unmarked = !marked;
        self.unsignalled = false;
    }

    /// wgpu's acquire of CUDA's queued signal was submitted: the image is wgpu's.
    pub(super) fn acquired(&mut self) {
        self.owner = Owner::Wgpu;
    }

    /// `done` follows CUDA's last signal again.
    pub(super) fn marked(&mut self) {
        self.unmarked = false;
    }

    /// What the recovery does now.
    pub(super) fn recovery(&self) -> Recovery {
        let step = match self.owner {
            Owner::Wgpu => Step::Nothing,
            Owner::Signalled => Step::Acquire,
            Owner::Ahead => Step::Return,
            Owner::Cuda if self.unsignalled => Step::SignalUnreleased,
            Owner::Cuda => Step::Signal,
        };
        Recovery {
            mark: self.unmarked,
            step,
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    /// Applies one event of a texture's life to `turn`, recording each value CUDA signals (the
    /// recovery's signal included, made as `recover` makes it).
    fn apply(turn: &mut Turn, event: &str, signals: &mut Vec<u64>) {
        match event {
            "release" => turn.released(turn.next()),
            "release ahead" => {
                turn.released(turn.next());
                turn.released_ahead();
            }
            // A write of an image released ahead: CUDA's wait is queued, no release.
            "take" => turn.taken(),
            // Accepted, but its signal was refused and not made from the host either.
            "release, never signalled" => {
                turn.released(turn.next());
                turn.never_signalled();
            }
            // CUDA's signal queued, and `done` recorded after it or not.
            "signal" | "signal, done refused" => {
                let value = turn.next();
                signals.push(value);
                turn.signalled(value, event == "signal");
            }
            "acquire" => turn.acquired(),
            "recover" => {
                let plan = turn.recovery();
                if plan.mark {
                    turn.marked();
                }
                match plan.step {
                    Step::Nothing => {}
                    Step::Acquire => turn.acquired(),
                    Step::Return | Step::Signal | Step::SignalUnreleased => {
                        if plan.step == Step::Return {
                            turn.taken();
                        }
                        let value = turn.next();
                        signals.push(value);
                        turn.signalled(value, true);
                        turn.acquired();
                    }
                }
            }
            other => panic!("unknown event {other}"),
        }
    }

    /// A new texture's turn after `events`, and the values CUDA signalled, in order.
    fn run(events: &[&str]) -> (Turn, Vec<u64>) {
        let mut turn = Turn::new();
        let mut signals = Vec::new();
        for event in events {
            apply(&mut turn, event, &mut signals);
        }
        (turn, signals)
    }

    /// The recovery of a texture whose `done` follows CUDA's last signal: `step` alone.
    fn unmarked(step: Step) -> Recovery {
        Recovery { mark: false, step }
    }

    /// Each value above the last: none signalled twice.
    fn assert_each_signalled_once(signals: &[u64], events: &[&str]) {
        assert!(
            signals.windows(2).all(|w| w[0] < w[1]),
            "a timeline value signalled again, or out of order: {signals:?} after {events:?}"
        );
    }

    /// CUDA's signal was queued and only recording `done` after it failed: the texture is
    /// CUDA-signalled, so its recovery records `done` again and acquires that signal; it never
    /// signals the value a second time (the texture was left CUDA's, whose recovery signalled
    /// the same value again: invalid Vulkan usage).
    #[test]
    fn a_queued_signal_is_never_signalled_again_when_done_was_not_recorded() {
        let (turn, signals) = run(&["release", "signal, done refused"]);
        assert_eq!(
            (turn.owner, turn.value, turn.unmarked),
            (Owner::Signalled, 2, true)
        );
        assert_eq!(
            turn.recovery(),
            Recovery {
                mark: true,
                step: Step::Acquire
            }
        );
        let events = ["release", "signal, done refused", "recover", "release"];
        let (turn, after) = run(&events);
        assert_eq!(after, signals, "the recovery signalled again");
        assert_eq!(
            (turn.owner, turn.value, turn.unmarked),
            (Owner::Cuda, 3, false)
        );
    }

    /// A write whose signal was never queued (a leaked guard) is recovered by one signal of
    /// the value after wgpu's release; later hand-offs go on above it.
    #[test]
    fn a_write_left_cudas_is_recovered_by_one_signal_above_the_release() {
        let events = [
            "release", "recover", "release", "signal", "acquire", "release", "signal",
        ];
        let (turn, signals) = run(&events);
        assert_eq!(signals, [2, 4, 6]);
        assert_eq!(
            (turn.owner, turn.value, turn.unmarked),
            (Owner::Signalled, 6, false)
        );
    }

    /// A release whose signal is never made (wgpu refused the submit carrying it, and the
    /// host's signal gave up) is recovered without waiting for that value, which nothing will
    /// signal: CUDA signals the value above it. (Before, the recovery waited for wgpu's signal
    /// of the value at every later write, gave up after the wait limit, and never recovered.)
    /// A later release that is signalled waits as before.
    #[test]
    fn a_release_never_signalled_is_recovered_without_waiting_for_its_value() {
        let (turn, _) = run(&["release, never signalled"]);
        assert_eq!((turn.owner, turn.value), (Owner::Cuda, 1));
        assert_eq!(turn.recovery(), unmarked(Step::SignalUnreleased));
        let events = ["release, never signalled", "recover", "release"];
        let (turn, signals) = run(&events);
        assert_eq!(signals, [2]);
        assert_eq!((turn.owner, turn.value), (Owner::Cuda, 3));
        assert_eq!(turn.recovery().step, Step::Signal);
    }

    /// An image released ahead is taken by the next write with no release of its own (CUDA
    /// waits for the value released ahead, and signals the one above it); one that no write
    /// took is returned without a CPU wait: CUDA waits for the release and signals above it.
    #[test]
    fn an_image_released_ahead_is_taken_by_a_write_or_returned_without_a_cpu_wait() {
        let (turn, _) = run(&["release ahead"]);
        assert_eq!((turn.owner, turn.value), (Owner::Ahead, 1));
        assert_eq!(turn.recovery(), unmarked(Step::Return));
        let (turn, signals) = run(&["release ahead", "take", "signal", "acquire"]);
        assert_eq!(signals, [2]);
        assert_eq!((turn.owner, turn.value), (Owner::Wgpu, 2));
        let (turn, signals) = run(&["release ahead", "recover", "release ahead"]);
        assert_eq!(signals, [2]);
        assert_eq!((turn.owner, turn.value), (Owner::Ahead, 3));
        // A release whose signal is never made is not one ahead: the write's recovery must not
        // wait for it.
        let mut turn = Turn::new();
        turn.released(1);
        turn.never_signalled();
        turn.released_ahead();
        assert_eq!(
            (turn.owner, turn.recovery().step),
            (Owner::Cuda, Step::SignalUnreleased)
        );
    }

    /// Whether the texture can see `events`: wgpu releases only an image of its own, CUDA
    /// signals once per release, and wgpu acquires only a queued signal.
    fn possible(events: &[&str]) -> bool {
        let mut turn = Turn::new();
        let mut signals = Vec::new();
        events.iter().all(|event| {
            let can = match *event {
                "release" | "release, never signalled" | "release ahead" => {
                    turn.owner == Owner::Wgpu
                }
                "take" => turn.owner == Owner::Ahead,
                "signal" | "signal, done refused" => turn.owner == Owner::Cuda,
                "acquire" => turn.owner == Owner::Signalled,
                _ => true,
            };
            apply(&mut turn, event, &mut signals);
            can
        })
    }

    /// Every sequence of hand-offs, failures and recoveries that a texture can see signals each
    /// value once, and a recovery leaves the image wgpu's with `done` after CUDA's last signal.
    #[test]
    fn no_sequence_of_hand_offs_and_recoveries_signals_a_value_twice() {
        let steps = [
            "release",
            "release ahead",
            "take",
            "release, never signalled",
            "signal",
            "signal, done refused",
            "acquire",
            "recover",
        ];
        let mut seen = 0;
        for a in steps {
            for b in steps {
                for c in steps {
                    for d in steps {
                        let events = [a, b, c, d, "recover", "release", "signal"];
                        if !possible(&events) {
                            continue;
                        }
                        seen += 1;
                        let (_, signals) = run(&events);
                        assert_each_signalled_once(&signals, &events);
                        let (turn, _) = run(&events[..5]);
                        assert_eq!(
                            (turn.owner, turn.unmarked),
                            (Owner::Wgpu, false),
                            "{events:?}"
                        );
                    }
                }
            }
        }
        assert!(seen > 20, "only {seen} sequences were possible");
    }
}
