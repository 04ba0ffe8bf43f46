//! Track surfaces (Choreonoid's crawlers and conveyors): a body whose surface moves relative
//! to it. At each of its contacts the surface velocity `speed · R d` (d the track's direction
//! in the body's axes, R the body's world rotation) projected onto the contact plane becomes
//! the target of the friction rows, so friction carries what touches it along (a conveyor) or
//! pushes the body over what it stands on (a crawler). The speed is a command in
//! [`SimState::track_speeds`].

use karakuri::spatial::Vec3;

pub use crate::compile::Track;

use super::build::SimModel;
use super::state::SimState;
use super::work::StepData;
use crate::SimError;

/// Track velocities, before the contact rows: each track's surface velocity `speed · R d` in
/// world axes (not yet projected onto a contact plane). Reads `m.tracks`, `s.track_speeds`,
/// the placements of `w.data` (the step's start); writes `w.track_velocity`.
pub fn track_velocities(m: &SimModel, s: &SimState, w: &mut StepData) -> Result<(), SimError> {
    let o_m_i = w.data.joint_placements()?;
    for (k, t) in m.tracks.iter().enumerate() {
        w.track_velocity[k] = o_m_i[t.joint].rotation * t.direction * s.track_speeds[k];
    }
    Ok(())
}

/// The velocity of B relative to A at a contact of normal `n` between bodies `a` and `b` at
/// which their surfaces do not slip: `s_a − s_b` projected onto the contact plane, `s` a
/// body's track surface velocity (zero without a track). It is the target of the contact's
/// friction rows, which measure B's velocity relative to A's. Reads `m.body_track`,
/// `w.track_velocity`.
pub fn no_slip_velocity(m: &SimModel, w: &StepData, a: usize, b: usize, n: &Vec3) -> Vec3 {
    let velocity = |body: usize| m.body_track[body].map_or(Vec3::zeros(), |k| w.track_velocity[k]);
    let rel = velocity(a) - velocity(b);
    rel - n * n.dot(&rel)
}
