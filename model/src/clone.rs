//! `Clone` by field, with a `clone_from` that clones each field into the one it replaces.
//!
//! A derived `Clone` leaves `clone_from` at its default, a fresh clone and a drop: every vector and queue
//! of a state allocated again. A checker makes each successor into the same spare state, and with
//! [`clone_by_field!`] the spare's vectors and queues keep their buffers (`Vec::clone_from` and
//! `VecDeque::clone_from` reuse them), so a successor costs the copies and not the allocations.
//! The pattern names every field and has no `..`: a field added to the struct and not to the macro's
//! list does not compile. A [`LiteMap`] field is marked `: map` ([`map_clone_from`]), or `: map_in_place`
//! when its values hold buffers of their own ([`map_clone_in_place`]).

use litemap::LiteMap;

/// `impl Clone` for a struct, field by field; see the [module](self).
///
/// ```
/// # use listwatch_model::clone_by_field;
/// struct Queue { items: Vec<u8>, head: usize }
/// clone_by_field!(Queue { items, head });
/// let (a, mut b) = (Queue { items: vec![1, 2], head: 1 }, Queue { items: Vec::with_capacity(8), head: 0 });
/// b.clone_from(&a);
/// assert_eq!((b.items.as_slice(), b.head, b.items.capacity()), (&[1, 2][..], 1, 8));
/// ```
#[macro_export]
macro_rules! clone_by_field {
    ($name:ident $(<$($param:ident),+>)? { $($field:ident $(: $kind:ident)?),* $(,)? }) => {
        impl$(<$($param: Clone),+>)? Clone for $name$(<$($param),+>)? {
            fn clone(&self) -> Self {
                let $name { $($field),* } = self;
                $name { $($field: $field.clone()),* }
            }

            fn clone_from(&mut self, source: &Self) {
                let $name { $($field),* } = self;
                $($crate::clone_by_field!(@from $field, &source.$field $(, $kind)?);)*
            }
        }
    };
    (@from $field:ident, $source:expr) => {
        $field.clone_from($source)
    };
    (@from $field:ident, $source:expr, map) => {
        $crate::clone::map_clone_from($field, $source)
    };
    (@from $field:ident, $source:expr, map_in_place) => {
        $crate::clone::map_clone_in_place($field, $source)
    };
}

/// `dst.clone_from(src)` for a [`LiteMap`], keeping `dst`'s buffer: its derived `Clone` allocates
/// afresh. A field marked `: map` in [`clone_by_field!`] is cloned so.
pub fn map_clone_from<K: Clone + Ord, V: Clone>(dst: &mut LiteMap<K, V>, src: &LiteMap<K, V>) {
    let mut pairs = std::mem::take(dst).into_tuple_vec();
    pairs.clear();
    pairs.extend(src.iter().map(|(k, v)| (k.clone(), v.clone())));
    // Sorted: the pairs are `src`'s, in its order.
    *dst = LiteMap::from_sorted_store_unchecked(pairs);
}

/// [`map_clone_from`] for a map whose values hold buffers of their own (a connection's queue): the
/// places both maps have are cloned into with `clone_from`, as `Vec::clone_from` does for its
/// elements, so that those buffers are kept too. For values without buffers the plain copy of
/// [`map_clone_from`] is cheaper. A field marked `: map_in_place` in [`clone_by_field!`] is cloned so.
pub fn map_clone_in_place<K: Clone + Ord, V: Clone>(dst: &mut LiteMap<K, V>, src: &LiteMap<K, V>) {
    let mut pairs = std::mem::take(dst).into_tuple_vec();
    pairs.truncate(src.len());
    let kept = pairs.len();
    let mut from = src.iter();
    for ((key, value), (from_key, from_value)) in pairs.iter_mut().zip(from.by_ref()) {
        key.clone_from(from_key);
        value.clone_from(from_value);
    }
    debug_assert_eq!(from.len(), src.len() - kept);
    pairs.extend(from.map(|(k, v)| (k.clone(), v.clone())));
    // Sorted: the pairs are `src`'s, in its order.
    *dst = LiteMap::from_sorted_store_unchecked(pairs);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(u8, &[u8])]) -> LiteMap<u8, Vec<u8>> {
        pairs.iter().map(|(k, v)| (*k, v.to_vec())).collect()
    }

    #[test]
    fn map_clone_in_place_equals_the_source_and_keeps_the_values_buffers() {
        let src = map(&[(1, &[1]), (4, &[4, 4]), (9, &[9])]);
        for before in [map(&[]), map(&[(2, &[0; 64])]), map(&[(0, &[]), (1, &[1]), (3, &[3]), (5, &[5])])] {
            let mut dst = before.clone();
            for (_, v) in dst.iter_mut() {
                v.reserve_exact(64);
            }
            let capacities: Vec<usize> = dst.values().map(Vec::capacity).collect();
            map_clone_in_place(&mut dst, &src);
            assert_eq!(dst, src);
            // The places `dst` had keep their values' buffers.
            for (kept, was) in dst.values().zip(&capacities) {
                assert_eq!(kept.capacity(), *was);
            }
        }
    }
}
