//! The dofs pass: the one-dof joints of the world model (in model order, with their names),
//! and the recorded passive parameters in velocity indices: armature per dof, the springs and
//! dampers as one set of joint forces, Coulomb friction.

use karakuri::Model;

use super::builder::Builder;
use super::model::{DofParams, Friction, Springs};

/// The one-dof joints (world joint indices, in model order) and their names.
pub(super) fn one_dof(model: &Model) -> (Vec<usize>, Vec<String>) {
    let one_dof: Vec<usize> = (1..model.njoints).filter(|&j| model.nvs[j] == 1).collect();
    let names = one_dof.iter().map(|&j| model.joint_names[j].clone()).collect();
    (one_dof, names)
}

/// Armature per dof, the springs and dampers (joints with a nonzero stiffness or damping) and
/// the joints with friction, in the order the joints were added.
pub(super) fn passive(b: &Builder, model: &Model) -> (DofParams, Springs, Vec<Friction>) {
    let mut dofs = DofParams { armature: vec![0.0; model.nv] };
    let mut springs = Springs::default();
    let mut frictions = Vec::new();
    for s in &b.dofs {
        let k = model.idx_v[s.joint];
        dofs.armature[k] = s.armature;
        if s.damping != 0.0 || s.stiffness != 0.0 {
            springs.iq.push(model.idx_q[s.joint]);
            springs.dof.push(k);
            springs.forces.stiffness.push(s.stiffness);
            springs.forces.damping.push(s.damping);
            springs.forces.reference.push(s.spring_reference);
        }
        if s.friction > 0.0 {
            frictions.push(Friction { dof: k, friction: s.friction });
        }
    }
    (dofs, springs, frictions)
}
