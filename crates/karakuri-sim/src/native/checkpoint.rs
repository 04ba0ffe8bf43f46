//! The native engine's checkpoint: its [`SimState`] whole (serde-derived, so every field a step
//! depends on is in it) and what the last step reported and others read before the next step
//! (sensor readings and applied actuator torques, which controllers read; contacts;
//! diagnostics). The workspace's other buffers are either recomputed from the state
//! (`w.data`: the kinematics stage at `(q, v)`, bit for bit what the step left) or written
//! before they are read within a step.

use serde::{Deserialize, Serialize};

use super::state::SimState;
use super::NativeEngine;
use crate::engine::{ContactInfo, Diagnostics};
use crate::SimError;

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

/// A contact of the last step as plain numbers: bodies, point, normal, depth, force.
type ContactRecord = ([usize; 2], [f64; 3], [f64; 3], f64, [f64; 3]);

/// What [`NativeEngine`]'s checkpoint holds.
#[derive(Serialize, Deserialize)]
struct NativeCheckpoint {
    state: SimState,
    /// `StepData::readings` `(sensors)`.
    readings: Vec<[f64; 6]>,
    /// `StepData::act_tau` `(actuators)`.
    act_tau: Vec<f64>,
    /// `StepData::contacts` `(contacts)`.
    contacts: Vec<ContactRecord>,
    /// `StepData::diagnostics`.
    diagnostics: Diagnostics,
}

fn bad(reason: String) -> SimError {
    SimError::Checkpoint(reason)
}

/// Every number of a list finite, else an error naming the field (JSON has no NaN: a
/// non-finite number would come back as something else).
fn finite<'a>(field: &str, xs: impl IntoIterator<Item = &'a f64>) -> Result<(), SimError> {
    match xs.into_iter().find(|x| !x.is_finite()) {
        Some(x) => Err(bad(format!("the state's {field} holds {x}: only finite numbers are saved"))),
        None => Ok(()),
    }
}

impl NativeEngine {
    /// See [`crate::Engine::save_state`].
    pub(super) fn save(&self) -> Result<serde_json::Value, SimError> {
        let (s, w) = (&self.state, &self.work);
        finite("q", s.q.iter())?;
        finite("v", s.v.iter())?;
        finite("tau_user", s.tau_user.iter())?;
        finite("warm_other", &s.warm_other)?;
        finite("warm_contacts", s.warm_contacts.iter().flat_map(|e| &e.2))?;
        finite("readings", w.readings.iter().flatten())?;
        finite("act_tau", &w.act_tau)?;
        let contacts = w
            .contacts
            .iter()
            .map(|c| ([c.body_a, c.body_b], c.point.into(), c.normal.into(), c.depth, c.force.into()))
            .collect();
        let ck = NativeCheckpoint {
            state: s.clone(),
            readings: w.readings.clone(),
            act_tau: w.act_tau.clone(),
            contacts,
            diagnostics: w.diagnostics,
        };
        serde_json::to_value(&ck).map_err(|e| bad(format!("cannot serialise the state: {e}")))
    }

    /// See [`crate::Engine::restore_state`]: the sizes are checked against the model before
    /// anything changes; the kinematics are recomputed at the restored `(q, v)`.
    pub(super) fn restore(&mut self, value: &serde_json::Value) -> Result<(), SimError> {
        let ck = NativeCheckpoint::deserialize(value).map_err(|e| bad(format!("not a native engine state: {e}")))?;
        let m = &self.model;
        let (nq, nv) = (m.model.nq, m.model.nv);
        let s = &ck.state;
        for (what, got, want) in [
            ("q", s.q.len(), nq),
            ("v", s.v.len(), nv),
            ("tau_user", s.tau_user.len(), nv),
            ("targets", s.targets.len(), m.actuators.len()),
            ("readings", ck.readings.len(), m.sensors.len()),
            ("act_tau", ck.act_tau.len(), m.actuators.len()),
        ] {
            if got != want {
                return Err(bad(format!("{what} has {got} entries, this world {want}: not a state of this world")));
            }
        }
        let nb = m.bodies.len();
        if let Some(p) = s.pushes.iter().find(|p| p.body >= nb || m.bodies[p.body].joint != p.joint) {
            return Err(bad(format!("a push on body {} does not fit this world's bodies", p.body)));
        }
        if let Some(c) = ck.contacts.iter().find(|c| c.0[0] >= nb || c.0[1] >= nb) {
            return Err(bad(format!("a contact between bodies {:?} does not fit this world's {nb} bodies", c.0)));
        }
        let ntrees = m.sleep.trees.start.len();
        let sl = &s.sleep;
        let fits = sl.still.len() == ntrees
            && sl.island.len() == ntrees
            && sl.island.iter().all(|&i| i == crate::solver::NONE || (i as usize) < ntrees)
            && sl.contacts.iter().all(|c| (c.island as usize) < ntrees && c.bodies.iter().all(|&b| b < nb));
        let before_sleep = sl.still.is_empty() && sl.island.is_empty();
        if !(fits || before_sleep) {
            return Err(bad(format!("the sleep state does not fit this world's {ntrees} trees")));
        }
        let NativeCheckpoint {
            mut state,
            readings,
            act_tau,
            contacts,
            diagnostics,
        } = ck;
        if !fits {
            // a checkpoint from before sleeping: every tree awake
            state.sleep = super::sleep::SleepState::new(m);
        }
        let w = &mut self.work;
        // the buffers the step grows keep the room they had (a running step allocates nothing)
        w.reserve(m, &mut state, w.reserved_contacts);
        self.state = state;
        w.readings.copy_from_slice(&readings);
        w.act_tau.copy_from_slice(&act_tau);
        w.diagnostics = diagnostics;
        w.contacts.clear();
        w.contacts.extend(contacts.iter().map(|&(b, p, n, depth, f)| ContactInfo {
            body_a: b[0],
            body_b: b[1],
            point: p.into(),
            normal: n.into(),
            depth,
            force: f.into(),
        }));
        super::stages::kinematics(m, &self.state.q, &self.state.v, &mut w.data);
        Ok(())
    }
}
