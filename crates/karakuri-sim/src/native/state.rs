//! The state of a simulation ([`SimState`], MuJoCo's `mjData` state part: what a step starts
//! from and what it carries to the next) and the serialisable parts it holds (the warm-start
//! entries, the sleep state). Shapes are given as `(rows x cols)`, `nq`/`nv` the world model's
//! sizes.

use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use super::build::SimModel;
use crate::compile::Push;
use crate::engine::Diagnostics;
use crate::rng::SplitMix64;
use crate::scene::Target;
use crate::solver::NONE;

/// What a step starts from and carries to the next. It is serialised whole into a checkpoint
/// (`checkpoint.rs`), so a field added here is saved and restored with no more code (and
/// must be serialisable: everything a step depends on lives here, never in the workspace).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimState {
    /// Configuration `(nq)`; a free flyer's is `[p; quaternion x y z w]`.
    #[serde(with = "dvector")]
    pub q: DVector<f64>,
    /// Velocity `(nv)`; a free flyer's is `[linear; angular]` in its body frame.
    #[serde(with = "dvector")]
    pub v: DVector<f64>,
    /// Joint forces set by the user (actuation) `(nv)`, applied from the next step on.
    #[serde(with = "dvector")]
    pub tau_user: DVector<f64>,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// Impulses of the last step's contacts by key, sorted by key `(contacts of the last
    /// step)`: the warm start of the next solve.
    pub warm_contacts: Vec<WarmEntry>,
    /// Each actuator's command `(actuators)`: the scene's target until the world sets one.
    pub targets: Vec<Target>,
    /// Impulses of the last step's loop and limit rows, in row order `(their rows)`.
    pub warm_other: Vec<f64>,
    /// Whether the last step's solve kept an active-set try on a warm-started robot island, so
    /// the next one tries first (the solver's `Problem::try_first`, record 0128); a checkpoint
    /// without it restores false.
    #[serde(default)]
    pub warm_try_first: bool,
    /// Each loop row's error predicted to first order for the step's end, `C + dt J v⁺`, by
    /// the last step `(loop rows; empty before the first step)`: the next step's drift
    /// feed-forward (see `loop_drift`).
    pub loop_predicted: Vec<f64>,
    /// External wrenches applied through the API (`World::apply_wrench`), with their windows.
    pub pushes: Vec<Push>,
    /// Each sensor's noise stream `(sensors)`: stream `i` (the sensor's index) of its seed, set
    /// at load; drawn only by noisy sensors.
    pub sensor_rng: Vec<SplitMix64>,
    /// Each track's surface speed command (m/s) `(tracks)`: the scene's until the world sets
    /// one.
    pub track_speeds: Vec<f64>,
    /// Each tree's still-step count and sleeping island (see `sleep.rs`); a checkpoint
    /// without it restores every tree awake.
    #[serde(default)]
    pub sleep: SleepState,
    /// Numerical trouble counted over the run so far (the watch stage): counters that no
    /// stage's physics reads; a checkpoint written before they moved here holds them beside
    /// the state.
    #[serde(default)]
    pub diagnostics: Diagnostics,
}

impl SimState {
    /// The initial state of a model.
    pub fn new(m: &SimModel) -> SimState {
        SimState {
            q: m.q0.clone(),
            v: m.v0.clone(),
            tau_user: DVector::zeros(m.model.nv),
            time: 0.0,
            steps: 0,
            targets: m.actuators.iter().map(|a| a.target.clone()).collect(),
            warm_contacts: Vec::new(),
            warm_other: Vec::new(),
            warm_try_first: false,
            loop_predicted: Vec::new(),
            pushes: Vec::new(),
            sensor_rng: m
                .sensors
                .iter()
                .enumerate()
                .map(|(i, sn)| SplitMix64::new(sn.noise.map_or(0, |n| n.seed), i as u64))
                .collect(),
            track_speeds: m.tracks.iter().map(|t| t.speed).collect(),
            sleep: SleepState::new(m),
            diagnostics: Diagnostics::default(),
        }
    }
}

/// A contact's identity across steps: the two shapes and their features.
pub type WarmKey = (usize, usize, u32, u32);

/// One warm-start entry: key, the order it was written in (the last one of a key wins), and
/// the impulses `[normal, tangent 1, tangent 2]`.
pub type WarmEntry = (WarmKey, usize, [f64; 3]);

/// A contact of a sleeping island as it was reported in the step the island fell asleep (its
/// force holds the island in equilibrium while it sleeps).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SleptContact {
    /// The island (its first tree).
    pub island: u32,
    /// The contact as reported.
    pub bodies: [usize; 2],
    /// Point (world).
    pub point: [f64; 3],
    /// Normal (world, from the first body to the second).
    pub normal: [f64; 3],
    /// Depth (m).
    pub depth: f64,
    /// Force on the second body (N).
    pub force: [f64; 3],
}

/// What sleeps, in the state: each tree's still-step count and sleeping island, and the
/// sleeping islands' contacts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SleepState {
    /// Steps each tree has been still, saturating at `SleepModel::steps` `(trees)`.
    pub still: Vec<u32>,
    /// The sleeping island of each tree, named by its first tree; [`NONE`]: awake `(trees)`.
    pub island: Vec<u32>,
    /// The sleeping islands' contacts, reported every step they sleep (by island, in the
    /// order they fell asleep).
    pub contacts: Vec<SleptContact>,
    /// Each actuator's command of the last step, `(x, rate)` at the step's end time as bits
    /// ([`NO_COMMAND`] before the first step) `(actuators)`: a change wakes the actuator's
    /// island or restarts its tree's still count (`sleep::note_command`). A checkpoint
    /// without it restores [`NO_COMMAND`]s.
    #[serde(default)]
    pub commands: Vec<[u64; 2]>,
}

/// The command an actuator has before its first step (NaN bits no finite command has).
pub const NO_COMMAND: [u64; 2] = [u64::MAX; 2];

impl SleepState {
    /// Every tree awake, no still step counted.
    pub fn new(m: &SimModel) -> SleepState {
        let n = m.sleep.trees.start.len();
        SleepState {
            still: vec![0; n],
            island: vec![NONE; n],
            contacts: Vec::new(),
            commands: vec![NO_COMMAND; m.actuators.len()],
        }
    }

    /// Whether tree `t` sleeps.
    pub fn asleep(&self, t: u32) -> bool {
        t != NONE && self.island[t as usize] != NONE
    }

    /// Whether any tree sleeps.
    pub fn any_asleep(&self) -> bool {
        self.island.iter().any(|&i| i != NONE)
    }

    /// Whether every tree sleeps (false in a world of none).
    pub fn all_asleep(&self) -> bool {
        !self.island.is_empty() && self.island.iter().all(|&i| i != NONE)
    }

    /// Sleeping trees.
    pub fn sleeping_trees(&self) -> usize {
        self.island.iter().filter(|&&i| i != NONE).count()
    }

    /// Wakes the island tree `t` sleeps in (nothing when it is awake); true when it slept.
    /// Its trees count their still steps from 0 again (as rapier's strong wake-up), so that
    /// whatever woke it acts for `time` at least.
    pub fn wake(&mut self, t: u32) -> bool {
        if !self.asleep(t) {
            return false;
        }
        let id = self.island[t as usize];
        for (i, c) in self.island.iter_mut().zip(&mut self.still) {
            if *i == id {
                *i = NONE;
                *c = 0;
            }
        }
        self.contacts.retain(|c| c.island != id);
        true
    }

    /// Wakes every island (as [`SleepState::wake`]).
    pub fn wake_all(&mut self) {
        for (i, c) in self.island.iter_mut().zip(&mut self.still) {
            if *i != NONE {
                *i = NONE;
                *c = 0;
            }
        }
        self.contacts.clear();
    }
}

/// `#[serde(with = "dvector")]` for `DVector<f64>`: a plain list of numbers.
pub mod dvector {
    use nalgebra::DVector;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes the vector as a list.
    pub fn serialize<S: Serializer>(v: &DVector<f64>, s: S) -> Result<S::Ok, S::Error> {
        v.as_slice().serialize(s)
    }

    /// Reads a list into a vector.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DVector<f64>, D::Error> {
        Ok(DVector::from_vec(Vec::<f64>::deserialize(d)?))
    }
}
