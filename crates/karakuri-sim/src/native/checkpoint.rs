//! The native engine's checkpoint: its [`SimState`] whole (serde-derived, so every field a step
//! depends on is in it, and the run's counters) and its [`StepOutput`] whole (what the last step
//! reported and others read before the next step: sensor readings and applied actuator torques,
//! which controllers read; contacts; the last solve's statistics). The workspace is either
//! recomputed from the state (`w.data`: the kinematics at `(q, v)`, bit for bit what the step
//! left) or written before it is read within a step.
//!
//! Layout: `{"state": {...}, "readings": [...], "act_tau": [...], "contacts": [...],
//! "last_solve": [...]}` (the outputs' fields beside the state). A checkpoint written before the
//! diagnostics moved into the state (`"diagnostics"` beside it) or before `last_solve` was saved
//! loads as it was.

use serde::{Deserialize, Serialize};

use super::output::StepOutput;
use super::state::SimState;
use super::NativeEngine;
use crate::engine::Diagnostics;
use crate::solver::ensure;
use crate::SimError;

/// What [`NativeEngine`]'s checkpoint holds.
#[derive(Serialize, Deserialize)]
struct NativeCheckpoint {
    state: SimState,
    #[serde(flatten)]
    out: StepOutput,
    /// The run's counters as checkpoints before they moved into the state held them (read
    /// only).
    #[serde(default, skip_serializing)]
    diagnostics: Option<Diagnostics>,
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
        let (s, out) = (&self.state, &self.out);
        finite("q", s.q.iter())?;
        finite("v", s.v.iter())?;
        finite("tau_user", s.tau_user.iter())?;
        finite("warm_other", &s.warm_other)?;
        finite("warm_contacts", s.warm_contacts.iter().flat_map(|e| &e.2))?;
        finite("readings", out.readings.iter().flatten())?;
        finite("act_tau", &out.act_tau)?;
        finite("last_solve", [&out.last_solve.residual])?;
        let ck = NativeCheckpoint {
            state: s.clone(),
            out: out.clone(),
            diagnostics: None,
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
            ("readings", ck.out.readings.len(), m.sensors.len()),
            ("act_tau", ck.out.act_tau.len(), m.actuators.len()),
        ] {
            if got != want {
                return Err(bad(format!("{what} has {got} entries, this world {want}: not a state of this world")));
            }
        }
        let nb = m.bodies.len();
        if let Some(p) = s.pushes.iter().find(|p| p.body >= nb || m.bodies[p.body].joint != p.joint) {
            return Err(bad(format!("a push on body {} does not fit this world's bodies", p.body)));
        }
        if let Some(c) = ck.out.contacts.iter().find(|c| c.body_a >= nb || c.body_b >= nb) {
            return Err(bad(format!(
                "a contact between bodies {:?} does not fit this world's {nb} bodies",
                [c.body_a, c.body_b]
            )));
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
        let NativeCheckpoint { mut state, mut out, diagnostics } = ck;
        if !fits {
            // a checkpoint from before sleeping: every tree awake
            state.sleep = super::sleep::SleepState::new(m);
        }
        if state.sleep.commands.len() != m.actuators.len() {
            // a checkpoint from before the commands were watched: as before the first step
            state.sleep.commands = vec![super::state::NO_COMMAND; m.actuators.len()];
        }
        if let Some(d) = diagnostics {
            // a checkpoint from before the counters moved into the state
            state.diagnostics = d;
        }
        let w = &mut self.work;
        // the buffers the step grows keep the room they had (a running step allocates nothing)
        w.reserve(m, &mut state, &mut out, w.reserved_contacts);
        ensure(&mut out.contacts, self.out.contacts.capacity());
        // a restored world reports no stage times until its next timed step
        self.state = state;
        self.out = out;
        super::dynamics::compute_terms(m, &self.state.q, &self.state.v, &mut w.data);
        Ok(())
    }
}
