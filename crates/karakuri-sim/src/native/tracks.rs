//! Track surfaces (Choreonoid's pseudo continuous tracks: crawlers and conveyors): shapes
//! whose surface turns about an axis `a` fixed in their joint's frame, like a wheel's rim, at
//! a commanded speed ([`SimState::track_speeds`]). At a contact whose outward normal is `n`,
//! the surface moves at `speed` along `u = a × n / |a × n|`: on a belt's bottom run backwards,
//! on its top forwards, on its curved or sloped front end downwards, which is what lets a
//! crawler climb onto a step. That direction is the contact's friction direction 1 and the
//! surface velocity its friction rows' target (so friction holds the surfaces together at the
//! belt's speed, up to the friction limit); direction 2, across the belt, may have its own
//! friction coefficient (the track's `lateral_friction`, the row scaled, which turns the
//! solver's friction disk into an ellipse). A contact whose normal lies along the axis (a
//! belt's side) has ordinary friction; between them the drive fades in (see [`drive`]).

use karakuri::spatial::Vec3;

pub use crate::compile::Track;

use super::build::SimModel;
use super::state::SimState;
use super::work::StepData;
use crate::SimError;

/// `|a × n|` from which a track contact gets the full surface speed: normals within 60° of
/// the plane normal to the axis (a belt's running surface, its ends, a rolled vehicle's
/// bottom run). Below it the speed and the lateral coefficient fade linearly to the ordinary
/// contact's at `|a × n| = 0` (a side face), so nothing jumps as a contact's normal turns.
pub const FULL_DRIVE: f64 = 0.5;

/// Track axes, before the contact rows: each track's axis in world axes (`R a`, R its joint's
/// world rotation). Reads `m.tracks`, the placements of `w.data` (the step's start); writes
/// `w.track_axis`.
pub fn track_axes(m: &SimModel, w: &mut StepData) -> Result<(), SimError> {
    let o_m_i = w.data.joint_placements()?;
    for (k, t) in m.tracks.iter().enumerate() {
        w.track_axis[k] = o_m_i[t.joint].rotation * t.axis;
    }
    Ok(())
}

/// The friction frame of a contact and what its friction rows hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionFrame {
    /// Friction directions 1 and 2 (unit, completing the normal to a right-handed frame).
    pub t1: Vec3,
    /// See `t1`.
    pub t2: Vec3,
    /// B's velocity relative to A's along `t1`, `t2` at which the surfaces do not slip.
    pub targets: [f64; 2],
    /// The friction coefficient across the belt (direction 2) and how much of it applies
    /// (the [`drive`] weight), when the driving track has its own.
    pub lateral: Option<(f64, f64)>,
}

/// A track's surface at a contact of outward normal `n`: its direction of motion (unit) and
/// the weight of the drive (1 on the running surface, fading to 0 as `n` turns onto the
/// axis), `None` where `n` lies along the axis.
pub fn drive(axis: &Vec3, n: &Vec3) -> Option<(Vec3, f64)> {
    let u = axis.cross(n);
    let c = u.norm();
    (c > 1e-9).then(|| (u / c, (c / FULL_DRIVE).min(1.0)))
}

/// The friction frame of a contact of normal `n` (from A to B) between shapes `a` and `b`
/// when one of them is a track's and not along its axis: direction 1 along the surface motion
/// of A's track (else B's), targets `s_a − s_b`, `s` a shape's surface velocity
/// (`speed · weight · u`, zero without a track). `None` otherwise (the contact's frame is
/// then the plain tangents with targets 0). Reads `m.shape_track`, `w.track_axis`,
/// `s.track_speeds`.
pub fn friction_frame(m: &SimModel, s: &SimState, w: &StepData, (a, b): (usize, usize), n: &Vec3) -> Option<FrictionFrame> {
    let (ka, kb) = (m.shape_track[a], m.shape_track[b]);
    if ka.is_none() && kb.is_none() {
        return None;
    }
    // each side's track at the contact: (track, direction, weight), its outward normal ±n
    let side = |k: Option<usize>, out: Vec3| k.and_then(|k| drive(&w.track_axis[k], &out).map(|(u, g)| (k, u, g)));
    let (sa, sb) = (side(ka, *n), side(kb, -n));
    let (k, t1, g) = sa.or(sb)?;
    let velocity = |x: Option<(usize, Vec3, f64)>| x.map_or(Vec3::zeros(), |(k, u, g)| u * (s.track_speeds[k] * g));
    let rel = velocity(sa) - velocity(sb);
    let t2 = n.cross(&t1);
    let lateral = m.tracks[k].lateral_friction.map(|mu| (mu, g));
    Some(FrictionFrame { t1, t2, targets: [rel.dot(&t1), rel.dot(&t2)], lateral })
}
