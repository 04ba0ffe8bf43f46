//! Checkpoints: a [`Snapshot`] is everything a `World`'s next steps depend on — the
//! engine's state ([`crate::Engine::save_state`]: for the native engine its whole
//! `SimState` and what the last step reported) and each controller's state
//! ([`crate::Controller::save_state`]) — with the fingerprint of the world it came from, so it
//! restores only into the same scene. It is written as JSON whose numbers read back bit for
//! bit (shortest round-trip printing, exact parsing), so a resumed run continues exactly as the
//! uninterrupted one.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::engine::BodyInfo;
use crate::scene::Scene;
use crate::SimError;

/// The `format` of a checkpoint file.
pub const FORMAT: &str = "karakuri-checkpoint";

/// The version of the checkpoint layout this build writes and reads.
pub const VERSION: u32 = 1;

/// A world's full state at one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The scene's name (for people; the fingerprint decides).
    pub scene: String,
    /// [`fingerprint`] of the world it was taken from.
    pub fingerprint: String,
    /// The engine's name.
    pub engine: String,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// The engine's state ([`crate::Engine::save_state`]).
    pub state: serde_json::Value,
    /// Each registered controller's state, in registration order.
    pub controllers: Vec<serde_json::Value>,
}

impl Snapshot {
    /// The snapshot as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a snapshot's numbers are finite (checked when taken)")
    }

    /// A snapshot from JSON text; `file` names it in errors.
    pub fn from_json(text: &str, file: &str) -> Result<Snapshot, SimError> {
        let s: Snapshot = serde_json::from_str(text)
            .map_err(|e| SimError::Checkpoint(format!("{file}: not a karakuri checkpoint: {e}")))?;
        if s.format != FORMAT || s.version != VERSION {
            return Err(SimError::Checkpoint(format!(
                "{file}: format '{}' version {}, this build reads '{FORMAT}' version {VERSION}",
                s.format, s.version
            )));
        }
        Ok(s)
    }

    /// Writes the snapshot to a file.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), SimError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json() + "\n")
            .map_err(|e| SimError::Output(format!("{}: cannot write the checkpoint: {e}", path.display())))
    }

    /// Reads a snapshot from a file.
    pub fn read(path: impl AsRef<Path>) -> Result<Snapshot, SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| SimError::Checkpoint(format!("{file}: cannot read: {e}")))?;
        Snapshot::from_json(&text, &file)
    }
}

/// The fingerprint of a world: FNV-1a (64 bits) of the scene as serialised (every parameter the
/// simulation uses, `world.duration` aside: a resumed run may run longer) and of what the
/// engine (its name) built from it (body names and masses, one-dof joint names: a URDF edited
/// between the runs changes it). 16 hex digits.
pub fn fingerprint(scene: &Scene, engine: &str, bodies: &[BodyInfo], joints: &[String]) -> String {
    let mut scene = scene.clone();
    scene.world.duration = 0.0;
    let text = serde_json::to_string(&scene).expect("a scene's numbers are finite (checked at load)");
    let mut h = Fnv::default();
    h.write(text.as_bytes());
    h.write(engine.as_bytes());
    for b in bodies {
        h.write(b.name.as_bytes());
        h.write(&b.mass.to_bits().to_le_bytes());
    }
    for j in joints {
        h.write(j.as_bytes());
    }
    format!("{:016x}", h.0)
}

/// FNV-1a, 64 bits: stable across builds and platforms (std's hasher promises neither).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        // a separator, so ("ab", "c") and ("a", "bc") differ
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
}
