//! What [`map_all`](crate::map_all) maps and what it hands out, as types: a [`MapSet`] of
//! registrations (one, a slice or `Vec` of one kind, an array, or a tuple of those) maps to its
//! [`ViewSet`] of typed views (`MappedBuffer`, `MappedImage`, `Vec`s, arrays, tuples of them),
//! so that asking a buffer for an image's arrays does not compile.

use super::Registration;
use super::registered::{BufferMapping, Mapped, Registered, ResourceKind};
use cuda_gl_sys as sys;

/// Types that only this module names: the trait methods that use them are the crate's own.
pub(super) mod private {
    use super::{BufferMapping, Registration, sys};

    /// Seals [`MapSet`](super::MapSet) and [`ViewSet`](super::ViewSet).
    pub trait Sealed {}

    /// The registrations of a batch, in the order of its views.
    #[derive(Debug)]
    pub struct Regs<'r>(pub(crate) Vec<&'r mut Registration>);

    /// What the views of a mapped batch are built from: each registration with its buffer
    /// mapping (`None` for an image), in order, and the stream of the map.
    #[allow(missing_debug_implementations)]
    pub struct Build<'a> {
        pub(crate) items: std::iter::Zip<
            std::vec::IntoIter<&'a mut Registration>,
            std::vec::IntoIter<Option<BufferMapping>>,
        >,
        pub(crate) stream: sys::CUstream,
        pub(crate) stream_any: Option<&'a dyn std::any::Any>,
    }
}

use private::{Build, Regs, Sealed};

/// Registrations that [`map_all`](crate::map_all) maps with one driver call (sealed).
///
/// - `&mut RegisteredBuffer` / `&mut RegisteredImage`: one resource, viewed as a
///   [`MappedBuffer`](crate::MappedBuffer) / [`MappedImage`](crate::MappedImage);
/// - `&mut [Registered<K>]`, `&mut Vec<Registered<K>>` and `Vec<&mut Registered<K>>`: any number
///   of one kind, viewed as a `Vec` of views (by index: they are all one type);
/// - `[&mut Registered<K>; N]`: viewed as `[Mapped<K>; N]`;
/// - tuples of 2 to 4 of the above, mixed: viewed as the tuple of their views, e.g.
///   `(&mut buffer, &mut image)` as `(MappedBuffer, MappedImage)`.
pub trait MapSet<'a>: Sealed {
    /// The typed views the batch hands out for these registrations.
    type Views: ViewSet<'a>;
    /// How many registrations of each part: what building the views needs to know.
    #[doc(hidden)]
    type Shape: Copy;
    /// Appends the registrations, in the order of the views.
    #[doc(hidden)]
    fn append_to(self, out: &mut Regs<'a>) -> Self::Shape;
    /// Builds the views from the mapped registrations, in the order of `append_to`; `None` when they
    /// do not fit (never: `map_all` builds from what `append_to` gave).
    #[doc(hidden)]
    fn build(shape: Self::Shape, from: &mut Build<'a>) -> Option<Self::Views>;
}

/// The typed views of a mapped batch: [`Mapped`] guards (`MappedBuffer`, `MappedImage`), `Vec`s
/// and arrays of them, and tuples of those (sealed). A [`MappedAll`](crate::MappedAll) owns them
/// and lends them out by shared reference only.
pub trait ViewSet<'a>: Sealed {
    /// Appends the registrations of the views, in order, for the batch's unmap.
    #[doc(hidden)]
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>);
}

impl<K: ResourceKind> Sealed for &mut Registered<K> {}
impl<K: ResourceKind> Sealed for &mut [Registered<K>] {}
impl<K: ResourceKind> Sealed for &mut Vec<Registered<K>> {}
impl<K: ResourceKind> Sealed for Vec<&mut Registered<K>> {}
impl<K: ResourceKind, const N: usize> Sealed for [&mut Registered<K>; N] {}
impl<K: ResourceKind> Sealed for Mapped<'_, K> {}
impl<K: ResourceKind> Sealed for Vec<Mapped<'_, K>> {}
impl<K: ResourceKind, const N: usize> Sealed for [Mapped<'_, K>; N] {}
impl<A: Sealed, B: Sealed> Sealed for (A, B) {}
impl<A: Sealed, B: Sealed, C: Sealed> Sealed for (A, B, C) {}
impl<A: Sealed, B: Sealed, C: Sealed, D: Sealed> Sealed for (A, B, C, D) {}

/// The next view of kind `K` of a batch being built.
fn next_view<'a, K: ResourceKind>(from: &mut Build<'a>) -> Option<Mapped<'a, K>> {
    let (reg, pre) = from.items.next()?;
    let mapping = K::prefetched(pre)?;
    Some(Mapped::batched(reg, from.stream, from.stream_any, mapping))
}

/// The next `n` views of kind `K`.
fn next_views<'a, K: ResourceKind>(n: usize, from: &mut Build<'a>) -> Option<Vec<Mapped<'a, K>>> {
    (0..n).map(|_| next_view(from)).collect()
}

impl<'a, K: ResourceKind> MapSet<'a> for &'a mut Registered<K> {
    type Views = Mapped<'a, K>;
    type Shape = ();
    fn append_to(self, out: &mut Regs<'a>) {
        out.0.push(self.registration());
    }
    fn build((): (), from: &mut Build<'a>) -> Option<Mapped<'a, K>> {
        next_view(from)
    }
}

/// `MapSet` for the sets of any number of registrations of one kind: each hands out its
/// registrations in order, and its views as a `Vec` (by index: they are all one type).
macro_rules! map_set_of_many {
    ($($set:ty),* $(,)?) => {$(
        impl<'a, K: ResourceKind> MapSet<'a> for $set {
            type Views = Vec<Mapped<'a, K>>;
            type Shape = usize;
            fn append_to(self, out: &mut Regs<'a>) -> usize {
                let n = self.len();
                out.0.extend(self.into_iter().map(Registered::registration));
                n
            }
            fn build(n: usize, from: &mut Build<'a>) -> Option<Vec<Mapped<'a, K>>> {
                next_views(n, from)
            }
        }
    )*};
}

map_set_of_many!(
    &'a mut [Registered<K>],
    &'a mut Vec<Registered<K>>,
    Vec<&'a mut Registered<K>>,
);

impl<'a, K: ResourceKind, const N: usize> MapSet<'a> for [&'a mut Registered<K>; N] {
    type Views = [Mapped<'a, K>; N];
    type Shape = ();
    fn append_to(self, out: &mut Regs<'a>) {
        out.0.extend(self.into_iter().map(Registered::registration));
    }
    fn build((): (), from: &mut Build<'a>) -> Option<[Mapped<'a, K>; N]> {
        next_views(N, from)?.try_into().ok()
    }
}

impl<'a, A: MapSet<'a>, B: MapSet<'a>> MapSet<'a> for (A, B) {
    type Views = (A::Views, B::Views);
    type Shape = (A::Shape, B::Shape);
    fn append_to(self, out: &mut Regs<'a>) -> Self::Shape {
        (self.0.append_to(out), self.1.append_to(out))
    }
    fn build(shape: Self::Shape, from: &mut Build<'a>) -> Option<Self::Views> {
        Some((A::build(shape.0, from)?, B::build(shape.1, from)?))
    }
}

impl<'a, A: MapSet<'a>, B: MapSet<'a>, C: MapSet<'a>> MapSet<'a> for (A, B, C) {
    type Views = (A::Views, B::Views, C::Views);
    type Shape = (A::Shape, B::Shape, C::Shape);
    fn append_to(self, out: &mut Regs<'a>) -> Self::Shape {
        (
            self.0.append_to(out),
            self.1.append_to(out),
            self.2.append_to(out),
        )
    }
    fn build(shape: Self::Shape, from: &mut Build<'a>) -> Option<Self::Views> {
        let (a, b) = <(A, B)>::build((shape.0, shape.1), from)?;
        Some((a, b, C::build(shape.2, from)?))
    }
}

impl<'a, A: MapSet<'a>, B: MapSet<'a>, C: MapSet<'a>, D: MapSet<'a>> MapSet<'a> for (A, B, C, D) {
    type Views = (A::Views, B::Views, C::Views, D::Views);
    type Shape = (A::Shape, B::Shape, C::Shape, D::Shape);
    fn append_to(self, out: &mut Regs<'a>) -> Self::Shape {
        let (a, b, c) = (self.0, self.1, self.2).append_to(out);
        (a, b, c, self.3.append_to(out))
    }
    fn build(shape: Self::Shape, from: &mut Build<'a>) -> Option<Self::Views> {
        let (a, b, c) = <(A, B, C)>::build((shape.0, shape.1, shape.2), from)?;
        Some((a, b, c, D::build(shape.3, from)?))
    }
}

impl<'a, K: ResourceKind> ViewSet<'a> for Mapped<'a, K> {
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>) {
        out.0.push(self.registration_mut());
    }
}

impl<'a, K: ResourceKind> ViewSet<'a> for Vec<Mapped<'a, K>> {
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>) {
        out.0.extend(self.iter_mut().map(Mapped::registration_mut));
    }
}

impl<'a, K: ResourceKind, const N: usize> ViewSet<'a> for [Mapped<'a, K>; N] {
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>) {
        out.0.extend(self.iter_mut().map(Mapped::registration_mut));
    }
}

impl<'a, A: ViewSet<'a>, B: ViewSet<'a>> ViewSet<'a> for (A, B) {
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>) {
        self.0.registrations(out);
        self.1.registrations(out);
    }
}

impl<'a, A: ViewSet<'a>, B: ViewSet<'a>, C: ViewSet<'a>> ViewSet<'a> for (A, B, C) {
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>) {
        self.0.registrations(out);
        self.1.registrations(out);
        self.2.registrations(out);
    }
}

impl<'a, A: ViewSet<'a>, B: ViewSet<'a>, C: ViewSet<'a>, D: ViewSet<'a>> ViewSet<'a>
    for (A, B, C, D)
{
    fn registrations<'s>(&'s mut self, out: &mut Regs<'s>) {
        self.0.registrations(out);
        self.1.registrations(out);
        self.2.registrations(out);
        self.3.registrations(out);
    }
}
