//! The simulator's one random generator: SplitMix64 (Steele, Lea & Flood 2014), a tiny,
//! well-mixed, reproducible generator whose whole state is one `u64` (so a [`crate::native::SimState`]
//! holding it is copied and restored exactly). The stepping is the dynamics core's
//! [`karakuri::algorithms::SplitMix64`]; this type adds serde, seeded streams and the
//! distributions the simulator draws from. Used for the seeded scene variants of
//! [`crate::batch::perturb`] and for sensor noise.

/// A SplitMix64 stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The stream `stream` of `seed`: `seed` and `stream` mixed, so streams of one seed draw
    /// independent numbers.
    pub fn new(seed: u64, stream: u64) -> SplitMix64 {
        let mut g = SplitMix64(seed);
        let s = g.next_u64() ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        SplitMix64(s)
    }

    /// The next 64 random bits (the dynamics core's generator, stepped from this state).
    pub fn next_u64(&mut self) -> u64 {
        let mut g = karakuri::algorithms::SplitMix64::new(self.0);
        let x = g.next_u64();
        self.0 = g.state();
        x
    }

    /// Uniform in [-1, 1).
    pub fn symmetric(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    }

    /// Uniform in (0, 1].
    fn open_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal number (Box–Muller from two uniform draws; the second normal of the
    /// pair is not kept, so the stream's state stays one `u64`).
    pub fn gaussian(&mut self) -> f64 {
        let (u1, u2) = (self.open_unit(), self.open_unit());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn the_stream_is_vignas_splitmix64() {
        // splitmix64.c (Vigna) from state 0: the published first outputs
        let mut g = SplitMix64(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        // the state is the whole generator: a copy continues the stream
        let mut h = g;
        assert_eq!(g.next_u64(), h.next_u64());
    }
}
