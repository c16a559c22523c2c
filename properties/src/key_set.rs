//! A set of object keys, small and `Copy`: the monitor keeps several per client in every state, and the
//! truth check reads one.

use listwatch_model::Key;

/// A set of object keys (every `Key` fits), `Copy` so that monitor states stay cheap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeySet([u128; 2]);

impl KeySet {
    pub fn of(key: Key) -> KeySet {
        let mut set = KeySet::default();
        set.insert(key);
        set
    }

    pub fn insert(&mut self, key: Key) {
        self.0[usize::from(key.0 / 128)] |= 1 << (key.0 % 128);
    }

    pub fn contains(self, key: Key) -> bool {
        self.0[usize::from(key.0 / 128)] >> (key.0 % 128) & 1 == 1
    }
}
