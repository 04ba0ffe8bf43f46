//! The limits pass: the recorded position ranges of one-dof joints (scene hinges' `limits`, a
//! robot's finite URDF limits) in the world model's q and v indices, in the order the joints
//! were added.

use karakuri::Model;

use super::builder::Builder;
use super::model::Limit;

/// Each recorded range on its joint's indices.
pub(super) fn limits(b: &Builder, model: &Model) -> Vec<Limit> {
    b.limits
        .iter()
        .map(|l| Limit { dof: model.idx_v[l.joint], iq: model.idx_q[l.joint], lo: l.lower, hi: l.upper })
        .collect()
}
