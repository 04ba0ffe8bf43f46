//! The dynamics terms the stages share, from the model alone: the kinematics (one
//! `compute_all_terms` call) and the iteration matrix `qH` with the record of what it was
//! factorised from ([`QhInputs`], held by the workspace). Below the stages and the workspace.

use karakuri::algorithms;
use karakuri::linalg::Factorization;
use karakuri::model::JointType;
use karakuri::Data;
use nalgebra::DVector;

use super::build::SimModel;
use crate::SimError;

/// Kinematics and dynamics terms at `(q, v)`, one `compute_all_terms` call (CRBA, then one
/// RNEA sweep with q̈ = 0): writes into `data` the world placements and body velocities (what
/// the world reports), the world Jacobian columns, `M(q)` and the bias forces `h = C v + g`.
/// The kinematics stage runs it at load and at the end of every step, so the next step starts from it (the
/// state does not change between steps). A world of lone roots (`m.plan.lone_roots`) takes
/// the one-pass path, the same numbers.
pub fn compute_terms(m: &SimModel, q: &DVector<f64>, v: &DVector<f64>, data: &mut Data) {
    match &m.plan.lone_roots {
        Some(lone) => algorithms::compute_all_terms_of_lone_roots(&m.model, lone, data, q, v),
        None => algorithms::compute_all_terms(&m.model, data, q, v),
    }
}

/// Iteration matrix: the LᵀDL of `qH = M + diag(armature + forces + servo)` into `qh`, `M`
/// untouched (`factorize_shifted`). `forces` is what the joint forces add to be implicit
/// (`w.force_diag`: `dt d + dt² k` of a spring-damper), `servo` the position servos' `dt (kd +
/// dt kp)` (`w.servo_diag`); empty slices: none (RK4, explicit). When every entry the
/// factorisation reads is bit for bit the one `last` says `qh` was factorised from, `qh` is
/// kept as it is (a free body's `M` is constant: a pile's or a stack's qH never changes).
/// Reads `data`'s mass matrix (fresh from the kinematics stage), `m.dofs`; writes `qh`,
/// `last`.
pub fn factorize_qh(
    m: &SimModel,
    data: &Data,
    (qh, last): (&mut Factorization, &mut QhInputs),
    forces: &[f64],
    servo: &[f64],
) -> Result<(), SimError> {
    let d = &m.dofs;
    let shift = |k: usize| {
        d.armature[k] + forces.get(k).copied().unwrap_or(0.0) + servo.get(k).copied().unwrap_or(0.0)
    };
    let h = data.mass_matrix()?;
    if !last.record(h, shift) {
        qh.factorize_shifted(h, shift);
    }
    Ok(())
}

/// What the factorisation in the workspace's `qh` was formed from: each entry of `M` it reads (the
/// chain of each dof, the factor's pattern) and each diagonal shift, as bits. Workspace, not
/// state: it only says whether `qh` is already the factorisation of this step's inputs (a
/// restored or new workspace starts invalid).
#[derive(Clone, Debug, Default)]
pub struct QhInputs {
    /// The entries of `M` read, as contiguous runs of its column-major storage `(start,
    /// length)` (a free body's chains are one run per column), for an `n x n` matrix.
    runs: Vec<(usize, usize)>,
    /// Size of the matrix the runs index.
    n: usize,
    /// The bits of the runs' entries, run after run.
    m_bits: Vec<u64>,
    /// The bits of the shifts `(n)`.
    shift_bits: Vec<u64>,
    /// The bits describe the factorisation held.
    valid: bool,
}

impl QhInputs {
    /// Room for the inputs of the pattern of `model`'s qH (invalid until the first
    /// factorisation). A model without a free body (a tree of one free joint) and with some
    /// tree of more than one joint, whose qH then changes with q, records nothing and always
    /// refactorises.
    pub fn new(model: &karakuri::Model) -> QhInputs {
        let lone = |j: usize| algorithms::is_lone_root(model, j);
        let free_body = (1..model.njoints).any(|j| lone(j) && model.joint_types[j] == JointType::FreeFlyer);
        // a world of lone roots (pendulums, sliders: CRBA reads their blocks in their own
        // frames, the same bits at every q) has a constant M too
        let all_lone = model.njoints > 1 && (1..model.njoints).all(|j| model.parents[j] != 0 || lone(j));
        if !(free_body || all_lone) {
            return QhInputs::default();
        }
        let qh = Factorization::new(model);
        let n = qh.n();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for k in 0..n {
            // the chain of k: its ancestors (increasing), then k; rows of column k
            for &a in qh.row(k).0.iter().chain([&k]) {
                let at = k * n + a;
                match runs.last_mut() {
                    Some((s, l)) if *s + *l == at => *l += 1,
                    _ => runs.push((at, 1)),
                }
            }
        }
        let len = runs.iter().map(|r| r.1).sum();
        QhInputs {
            runs,
            n,
            m_bits: vec![0; len],
            shift_bits: vec![0; n],
            valid: false,
        }
    }

    /// Records the inputs `h`, `shift` of a factorisation on `qh`'s pattern; returns whether
    /// they are the ones already recorded (then `qh` is their factorisation).
    fn record(&mut self, h: &nalgebra::DMatrix<f64>, shift: impl Fn(usize) -> f64) -> bool {
        if self.runs.is_empty() || h.nrows() != self.n || h.ncols() != self.n {
            self.valid = false;
            return false;
        }
        let hs = h.as_slice();
        let mut same = self.valid;
        let mut bits = &mut self.m_bits[..];
        for &(start, len) in &self.runs {
            let (out, rest) = std::mem::take(&mut bits).split_at_mut(len);
            bits = rest;
            for (o, x) in out.iter_mut().zip(&hs[start..start + len]) {
                let b = x.to_bits();
                same &= *o == b;
                *o = b;
            }
        }
        for (k, o) in self.shift_bits.iter_mut().enumerate() {
            let b = shift(k).to_bits();
            same &= *o == b;
            *o = b;
        }
        self.valid = true;
        same
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn the_recorded_inputs_say_when_a_factorisation_would_be_the_same() {
        // a pendulum of two hinges (dof 1 a child of dof 0) and a free body (dofs 2..8)
        use karakuri::model::{Axis, JointId, ModelBuilder};
        use karakuri::spatial::{Inertia, Mat3, Se3, Vec3};
        let inertia = || Inertia::new(1.0, Vec3::new(0.0, 0.0, -0.5), Mat3::identity() * 0.1);
        let hinge = || JointType::Revolute { axis: Axis::X };
        let pendulum = |b: &mut ModelBuilder| {
            let j1 = b.add_joint(JointId::UNIVERSE, "a", hinge(), Se3::identity()).unwrap();
            b.add_body(j1, "a", inertia()).unwrap();
            j1
        };
        let mut b = ModelBuilder::new("mixed");
        let j1 = pendulum(&mut b);
        let j2 = b.add_joint(j1, "b", hinge(), Se3::identity()).unwrap();
        b.add_body(j2, "b", inertia()).unwrap();
        let j3 = b.add_joint(JointId::UNIVERSE, "c", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(j3, "c", inertia()).unwrap();
        let mut last = QhInputs::new(&b.build().unwrap());
        let mut h = DMatrix::identity(8, 8);
        h[(0, 1)] = 0.5;
        h[(1, 0)] = 0.5;
        let shift = |k: usize| 0.1 * k as f64;
        assert!(!last.record(&h, shift), "nothing recorded yet");
        assert!(last.record(&h, shift));
        // an entry off the pattern is not read
        h[(2, 0)] = 7.0;
        assert!(last.record(&h, shift));
        // one on it, a shift, a zero's sign: each a new factorisation
        h[(0, 1)] = 0.25;
        assert!(!last.record(&h, shift));
        assert!(last.record(&h, shift));
        assert!(!last.record(&h, |k| 0.2 * k as f64));
        h[(0, 1)] = 0.0;
        assert!(!last.record(&h, shift));
        h[(0, 1)] = -0.0;
        assert!(!last.record(&h, shift));
        // the free body's block
        h[(3, 5)] = 0.125;
        assert!(!last.record(&h, shift));
        assert!(last.record(&h, shift));
        // the double pendulum alone: nothing kept
        let mut b = ModelBuilder::new("double pendulum");
        let j1 = pendulum(&mut b);
        let j2 = b.add_joint(j1, "b", hinge(), Se3::identity()).unwrap();
        b.add_body(j2, "b", inertia()).unwrap();
        let mut none = QhInputs::new(&b.build().unwrap());
        let h = DMatrix::identity(2, 2);
        assert!(!none.record(&h, shift));
        assert!(!none.record(&h, shift));
        // two lone pendulums (a cradle): kept
        let mut b = ModelBuilder::new("two pendulums");
        pendulum(&mut b);
        let j = b.add_joint(JointId::UNIVERSE, "d", hinge(), Se3::identity()).unwrap();
        b.add_body(j, "d", inertia()).unwrap();
        let mut kept = QhInputs::new(&b.build().unwrap());
        assert!(!kept.record(&h, shift));
        assert!(kept.record(&h, shift));
    }
}
