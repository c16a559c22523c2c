//! The seen set of the breadth-first search: one 64-bit fingerprint a state, in a table of fingerprints
//! and nothing else, as TLC's fingerprint set keeps them (`tlc2.tool.fp.FPSet`), within a budget of bytes.

/// Fingerprints in open addressing with linear probing. A slot holds a fingerprint or 0 (empty); the
/// fingerprint 0 itself is kept aside in `zero`. A fingerprint's first slot is its value scaled to the
/// table's length (the high half of `fp × len`), so the table can be of any length: it grows by half when
/// three quarters full, and so stays between half and three quarters full (10.7 to 16 bytes a
/// fingerprint) once past its first size. It never grows past its budget, nor where the process has no
/// room for the larger table; there it takes fingerprints until fifteen sixteenths full, and then refuses
/// them ([`Full`]).
#[derive(Debug)]
pub struct FingerprintSet {
    slots: Vec<u64>,
    /// Fingerprints held, 0 included.
    len: usize,
    zero: bool,
    /// The most slots the budget allows.
    max_slots: usize,
}

/// The set is at its budget and cannot take another fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

/// The first size: 8 KiB.
const MIN_SLOTS: usize = 1024;

impl FingerprintSet {
    /// An empty set that will not grow past `budget_bytes` (at least its first 8 KiB).
    pub fn new(budget_bytes: u64) -> Self {
        let max_slots = usize::try_from(budget_bytes / 8).unwrap_or(usize::MAX).max(MIN_SLOTS);
        FingerprintSet { slots: vec![0; MIN_SLOTS], len: 0, zero: false, max_slots }
    }

    /// Fingerprints held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The bytes its table holds.
    pub fn bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<u64>()) as u64
    }

    /// Whether `fp` is in the set.
    pub fn contains(&self, fp: u64) -> bool {
        if fp == 0 {
            return self.zero;
        }
        probe(&self.slots, fp).is_ok()
    }

    /// Adds `fp`: `Ok(true)` if it was not there, `Ok(false)` if it was, [`Full`] if it was not and the
    /// budget leaves no room for it.
    #[cfg(test)]
    pub fn insert(&mut self, fp: u64) -> Result<bool, Full> {
        self.insert_within(fp, |_| true)
    }

    /// [`insert`](FingerprintSet::insert), where growing the table first asks `room` whether the
    /// process has room for the new table's bytes beside the old one's: the two are held at once while
    /// the fingerprints move. If not, the table stops growing for good, as at its budget.
    pub fn insert_within(&mut self, fp: u64, room: impl FnOnce(u64) -> bool) -> Result<bool, Full> {
        if fp == 0 {
            let new = !self.zero;
            self.zero = true;
            self.len += usize::from(new);
            return Ok(new);
        }
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            let grown = (self.slots.len() + self.slots.len() / 2).min(self.max_slots);
            if grown > self.slots.len() && !room((grown * std::mem::size_of::<u64>()) as u64) {
                self.max_slots = self.slots.len();
            }
            if grown > self.slots.len() && grown <= self.max_slots {
                self.grow(grown);
            } else if (self.len + 1) * 16 > self.slots.len() * 15 {
                return if self.contains(fp) { Ok(false) } else { Err(Full) };
            }
        }
        let new = place(&mut self.slots, fp);
        self.len += usize::from(new);
        Ok(new)
    }

    fn grow(&mut self, slots: usize) {
        let mut table = vec![0; slots];
        for &fp in self.slots.iter().filter(|&&fp| fp != 0) {
            place(&mut table, fp);
        }
        self.slots = table;
    }
}

/// Where `fp` (not 0) is, `Ok`, or else the first free slot from its own, `Err`: its own slot is its
/// value scaled to the table's length.
fn probe(slots: &[u64], fp: u64) -> Result<usize, usize> {
    let mut i = ((u128::from(fp) * slots.len() as u128) >> 64) as usize;
    loop {
        match slots[i] {
            0 => return Err(i),
            s if s == fp => return Ok(i),
            _ => i = if i + 1 == slots.len() { 0 } else { i + 1 },
        }
    }
}

/// Puts `fp` (not 0) in the first free slot from its own, unless it is there: whether it was not.
fn place(slots: &mut [u64], fp: u64) -> bool {
    match probe(slots, fp) {
        Ok(_) => false,
        Err(i) => {
            slots[i] = fp;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fingerprints spread as a hash's are, zero among them.
    fn fps(n: u64) -> impl Iterator<Item = u64> {
        (1..=n).map(|i| if i == 7 { 0 } else { i.wrapping_mul(0x9e37_79b9_7f4a_7c15) })
    }

    #[test]
    fn holds_what_it_was_given_and_nothing_else() {
        let mut set = FingerprintSet::new(1 << 30);
        for fp in fps(100_000) {
            assert_eq!(set.insert(fp), Ok(true), "{fp} is new");
        }
        for fp in fps(100_000) {
            assert!(set.contains(fp));
            assert_eq!(set.insert(fp), Ok(false), "{fp} was there");
        }
        assert_eq!(set.len(), 100_000);
        assert!(!set.contains(1) && !set.contains(u64::MAX), "never given");
        // Grown by half at three quarters: between half and three quarters full.
        let per = set.bytes() as f64 / set.len() as f64;
        assert!((32.0 / 3.0..=16.0).contains(&per), "{per} bytes a fingerprint");
    }

    #[test]
    fn refuses_a_fingerprint_past_its_budget_and_keeps_the_others() {
        // 16 KiB: 2,048 slots, of which fifteen sixteenths (1,920) are taken.
        let mut set = FingerprintSet::new(16 << 10);
        let mut taken = Vec::new();
        for fp in fps(10_000) {
            match set.insert(fp) {
                Ok(new) => {
                    assert!(new);
                    taken.push(fp);
                }
                Err(Full) => break,
            }
        }
        assert_eq!(set.bytes(), 16 << 10);
        assert_eq!(taken.len(), 1920);
        assert!(taken.iter().all(|&fp| set.contains(fp)));
        assert_eq!(set.insert(taken[0]), Ok(false), "a fingerprint it holds is still found when full");
    }

    #[test]
    fn stops_growing_where_the_process_has_no_room_for_a_larger_table() {
        let mut set = FingerprintSet::new(1 << 30);
        let mut asked = Vec::new();
        let mut taken = 0;
        for fp in fps(100_000) {
            // Room for tables up to 16 KiB.
            match set.insert_within(fp, |bytes| {
                asked.push(bytes);
                bytes <= 16 << 10
            }) {
                Ok(new) => taken += usize::from(new),
                Err(Full) => break,
            }
        }
        // 1,024 slots, then 1,536 (12 KiB); 2,304 (18 KiB) had no room: full at fifteen sixteenths of
        // 1,536, and asked no more.
        assert_eq!(asked, [12 << 10, 18 << 10]);
        assert_eq!((set.bytes(), taken), (12 << 10, 1440));
    }
}
