//! Hand-offs of several [`SharedTexture`]s at once: one release and one acquire carry every
//! texture's barriers and semaphore operations (the hand-off's notes). `release_all` and
//! `acquire_all` are also the one-texture path's, with one texture.
//!
//! Each texture keeps its own semaphore, value and [`Owner`]: a hand-off of the group moves
//! each as a hand-off of it alone would, and whatever fails half-way leaves each texture in a
//! state that a write of it alone can leave, which its own recovery handles (`recovery.rs`).

use super::{Owner, SharedTexture};
use crate::error::Result;
use crate::wgpu_interop::handoff::{Handoff, Part};

/// wgpu to CUDA, for textures of one group that are alive and wgpu's: the release of each at
/// its next value, in one hand-off (one submit of every barrier, one of every signal). Returns
/// the values released at. Each texture is [`Owner::Cuda`] at its value from the moment the
/// barriers' submit is accepted, whatever fails after (a signal never made is waited for by
/// the recovery, with a limit).
///
/// # Errors
/// As [`Handoff::release`](crate::wgpu_interop::handoff::Handoff::release); when the barriers'
/// submit is refused, nothing was released and the textures are as they were.
pub(super) fn release_all<const N: usize>(textures: &mut [SharedTexture; N]) -> Result<[u64; N]> {
    let values = textures.each_ref().map(|t| t.value + 1);
    let mut released = false;
    let handed = match textures.first() {
        Some(lead) => {
            let parts: [_; N] = std::array::from_fn(|i| textures[i].part(values[i]));
            lead.handoff_of(parts).release(&mut released)
        }
        None => Ok(()),
    };
    if released {
        for (texture, value) in textures.iter_mut().zip(values) {
            (texture.value, texture.owner) = (value, Owner::Cuda);
        }
    }
    handed.map(|()| values)
}

/// CUDA to wgpu, for textures of one group whose CUDA signal of their value is queued
/// ([`Owner::Signalled`]): the acquire of each in one submit, with `then` after it. When wgpu
/// refuses that submit and `then` was given (a copy into a texture that the application
/// destroyed, which wgpu 30 refuses at the submit), the acquire alone is submitted again at
/// once: the images are then wgpu's, and the refusal is still returned.
///
/// # Errors
/// As [`Handoff::acquire`](crate::wgpu_interop::handoff::Handoff::acquire): when refused
/// (again), the textures stay [`Owner::Signalled`], for their recovery.
pub(super) fn acquire_all<const N: usize>(
    textures: &mut [SharedTexture; N],
    then: Option<wgpu::CommandBuffer>,
) -> Result<()> {
    let Some(lead) = textures.first() else {
        return Ok(());
    };
    let alone_after = then.is_some();
    let handoff = lead.handoff_of(textures.each_ref().map(|t| t.part(t.value)));
    let acquired = handoff.acquire(then);
    let back = match &acquired {
        Ok(()) => true,
        Err(e) if alone_after => {
            log::warn!("cuda-gl: a shared texture's hand-back was refused ({e}); again alone");
            handoff.acquire(None).is_ok()
        }
        Err(_) => false,
    };
    if back {
        for texture in textures.iter_mut() {
            texture.owner = Owner::Wgpu;
        }
    }
    acquired
}

impl SharedTexture {
    /// The texture's part of a hand-off that signals or waits for `value`.
    pub(super) fn part(&self, value: u64) -> Part<'_> {
        Part {
            texture: &self.texture,
            image: self.resources.held.vk_image.image,
            semaphore: self.resources.held.vk_timeline.raw,
            value,
        }
    }

    /// The hand-off of `parts` on this texture's device and queue: this texture's, or those of
    /// a group of textures of this one's context, device and queue.
    pub(super) fn handoff_of<'a, const N: usize>(&'a self, parts: [Part<'a>; N]) -> Handoff<'a, N> {
        Handoff {
            device: &self.device,
            queue: &self.queue,
            ash: &self.ash,
            family: self.family,
            parts,
        }
    }
}
