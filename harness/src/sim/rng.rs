//! The simulator's one source of randomness: SplitMix64, spelled out here so that a seed means the same
//! run on every machine and in every version of the dependencies.

/// A deterministic pseudo-random generator seeded by one number.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift: no division, no modulo bias worth the name.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: u8, hi: u8) -> u8 {
        lo + self.below(u64::from(hi - lo) + 1) as u8
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn a_seed_is_the_same_sequence_everywhere() {
        // SplitMix64's published first outputs for seed 0.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = r.below(5) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert!((0..1000).all(|_| r.between(3, 4) >= 3));
    }
}
