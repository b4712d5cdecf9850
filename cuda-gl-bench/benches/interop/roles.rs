//! Rows tagged with their role in a group and their frame size: the present, wgpu present and
//! video groups, whose summaries set each frame row against its limits measured at the same size, and
//! the look-ups those summaries make among a run's rows.

use crate::measure::{Case, Ratio};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a row measures in its group (`R`, the group's roles), and its frame size.
#[derive(Debug, Clone, Serialize)]
pub struct RoleTag<R> {
    /// What the row measures.
    pub role: R,
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
}

impl<R> RoleTag<R> {
    /// The tag of a row of `role` at `width` x `height`.
    pub fn new(role: R, (width, height): (u32, u32)) -> RoleTag<R> {
        RoleTag {
            role,
            width,
            height,
        }
    }

    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }
}

/// A group's roles, and which of [`Case`]'s tags holds them.
pub trait GroupRole: Copy + PartialEq + Sized {
    /// The row's tag, when it is one of the group's rows.
    fn tag(case: &Case) -> Option<&RoleTag<Self>>;

    /// Where the row's tag goes.
    fn tag_mut(case: &mut Case) -> &mut Option<RoleTag<Self>>;
}

impl GroupRole for crate::present::Role {
    fn tag(case: &Case) -> Option<&RoleTag<Self>> {
        case.present.as_ref()
    }

    fn tag_mut(case: &mut Case) -> &mut Option<RoleTag<Self>> {
        &mut case.present
    }
}

impl GroupRole for crate::wgpu_present::Role {
    fn tag(case: &Case) -> Option<&RoleTag<Self>> {
        case.wgpu.as_ref()
    }

    fn tag_mut(case: &mut Case) -> &mut Option<RoleTag<Self>> {
        &mut case.wgpu
    }
}

impl GroupRole for crate::video::Role {
    fn tag(case: &Case) -> Option<&RoleTag<Self>> {
        case.video.as_ref()
    }

    fn tag_mut(case: &mut Case) -> &mut Option<RoleTag<Self>> {
        &mut case.video
    }
}

/// The rows of `rows`, each tagged with its role at `size`.
pub fn tagged<R: GroupRole>(
    rows: impl IntoIterator<Item = (Case, R)>,
    size: (u32, u32),
) -> Vec<Case> {
    rows.into_iter()
        .map(|(mut case, role)| {
            *R::tag_mut(&mut case) = Some(RoleTag::new(role, size));
            case
        })
        .collect()
}

/// The row of `role` at `size`.
pub fn row<R: GroupRole>(cases: &[Case], role: R, size: (u32, u32)) -> Option<&Case> {
    cases
        .iter()
        .find(|c| R::tag(c).is_some_and(|t| t.role == role && t.size() == size))
}

/// The name of the row of `role` at `size` (empty when there is none), for a ratio's `to`.
pub fn row_name<R: GroupRole>(cases: &[Case], role: R, size: (u32, u32)) -> String {
    row(cases, role, size)
        .map(|c| c.name.clone())
        .unwrap_or_default()
}

/// The median of the row of `role` at `size`.
pub fn median<R: GroupRole>(cases: &[Case], role: R, size: (u32, u32)) -> Option<f64> {
    row(cases, role, size).map(|c| c.stats.median_us)
}

/// The sizes the group's rows of `cases` hold, in run order.
pub fn sizes<R: GroupRole>(cases: &[Case]) -> Vec<(u32, u32)> {
    let mut sizes = Vec::new();
    for t in cases.iter().filter_map(R::tag) {
        if !sizes.contains(&t.size()) {
            sizes.push(t.size());
        }
    }
    sizes
}

/// A group's summary of one size, made of its rows at that size (roles `R`), which gives some
/// of them their ratio.
pub trait SizeSummary<R: GroupRole>: Sized {
    /// The summary of `size`, when all the rows it is made of were measured.
    fn of(cases: &[Case], size: (u32, u32)) -> Option<Self>;

    /// The ratios it gives the rows at `size`, by role.
    fn ratios(&self, cases: &[Case], size: (u32, u32)) -> Vec<(R, Ratio)>;

    /// The summary of each size the group's rows hold (in run order) where it is made, with
    /// the size.
    fn each(cases: &[Case]) -> Vec<((u32, u32), Self)> {
        sizes::<R>(cases)
            .into_iter()
            .filter_map(|size| Some((size, Self::of(cases, size)?)))
            .collect()
    }

    /// Gives each row at `size` whose role has one its ratio, where the summary is made.
    fn set_ratios(cases: &mut [Case], size: (u32, u32)) {
        let Some(ratios) = Self::of(cases, size).map(|s| s.ratios(cases, size)) else {
            return;
        };
        for case in cases.iter_mut() {
            let Some(role) = R::tag(case).filter(|t| t.size() == size).map(|t| t.role) else {
                continue;
            };
            if let Some((_, ratio)) = ratios.iter().find(|(r, _)| *r == role) {
                case.ratio = Some(ratio.clone());
            }
        }
    }
}

/// The summaries of [`SizeSummary::each`] by `<W>x<H>`, as `benchmarks.json` keys them.
pub fn keyed<T>(per_size: Vec<((u32, u32), T)>) -> BTreeMap<String, T> {
    per_size
        .into_iter()
        .map(|((w, h), s)| (format!("{w}x{h}"), s))
        .collect()
}
