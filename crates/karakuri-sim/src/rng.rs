//! The simulator's one random generator: SplitMix64 (Steele, Lea & Flood 2014), a tiny,
//! well-mixed, reproducible generator whose whole state is one `u64` (so a [`crate::native::SimState`]
//! holding it is copied and restored exactly). Used for the seeded scene variants of
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

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
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
