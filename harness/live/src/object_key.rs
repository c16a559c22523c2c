//! The key of an API object in the live cache, `namespace/name`, kept inline when short.
//!
//! Nearly every key is short (`default/checkout-7d9f8b6c5-x2kqz` is 31 bytes); held inline, a key is
//! compared where the map's node holds it, with no pointer to follow. Keys compare as bytes, the order
//! of `str`, and a map of keys is searched with a borrowed `&[u8]`, so a lookup allocates nothing.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;

const INLINE: usize = 30;

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

/// `namespace/name`, or `name` for a cluster-scoped object.
#[derive(Clone)]
pub struct ObjectKey(Repr);

impl ObjectKey {
    pub fn new(key: &str) -> ObjectKey {
        let b = key.as_bytes();
        if b.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..b.len()].copy_from_slice(b);
            ObjectKey(Repr::Inline { len: b.len() as u8, bytes })
        } else {
            ObjectKey(Repr::Heap(b.into()))
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Heap(b) => b,
        }
    }
}

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for ObjectKey {}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ObjectKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Borrow<[u8]> for ObjectKey {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_their_strings_inline_or_not() {
        let long = "kube-system/".to_string() + &"x".repeat(40);
        let mut words = ["default/b", "default/a", "", "default/ab", long.as_str(), "kube-system/a"];
        let mut keys: Vec<ObjectKey> = words.iter().map(|w| ObjectKey::new(w)).collect();
        words.sort();
        keys.sort();
        let back: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        assert_eq!(back, words);
        assert_eq!(ObjectKey::new(&long).as_bytes(), long.as_bytes());
        assert_eq!(ObjectKey::new("default/a"), ObjectKey::new("default/a"));
    }
}
