use std::collections::HashSet;

use super::{dof_axis, elementary_rotation_axis, signed_dof_axis, Frame, FrameId, FrameKind, JointId, JointType, Mimic, Model};
use crate::spatial::quarter_turn::{quarter_turn_code, quarter_turn_matrix};
use crate::spatial::{Inertia, Motion, OriginInertia, Se3};
use crate::ModelError;

/// Assembles a [`Model`] joint by joint; parents must be added before their children.
///
/// ```
/// use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
/// use karakuri::spatial::{Inertia, Mat3, Se3, Vec3};
/// let mut b = ModelBuilder::new("pendulum");
/// let j = b.add_joint(JointId::UNIVERSE, "hinge", JointType::Revolute { axis: Axis::Y }, Se3::identity()).unwrap();
/// b.add_body(j, "rod", Inertia::new(1.0, Vec3::new(0.0, 0.0, -0.5), Mat3::identity() * 0.01)).unwrap();
/// let model = b.build().unwrap();
/// assert_eq!((model.nq, model.nv), (1, 1));
/// ```
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    model: Model,
    /// The joint names so far, and the (name, kind) of the frames: duplicate checks in
    /// constant time (a linear scan per addition made large models quadratic to load).
    joint_names: HashSet<String>,
    frame_names: HashSet<(String, u8)>,
}

impl ModelBuilder {
    /// A model with only the universe, gravity (0, 0, -9.81).
    pub fn new(name: &str) -> Self {
        let mut gravity = Motion::zero();
        gravity.linear.z = -9.81;
        let model = Model {
            name: name.to_string(),
            nq: 0,
            nv: 0,
            njoints: 1,
            joint_names: vec!["universe".into()],
            body_names: vec!["universe".into()],
            joint_types: vec![JointType::Universe],
            parents: vec![0],
            children: vec![vec![]],
            joint_placements: vec![Se3::identity()],
            inertias: vec![Inertia::zero()],
            idx_q: vec![0],
            idx_v: vec![0],
            nqs: vec![0],
            nvs: vec![0],
            dof_joint: vec![],
            dof_parent: vec![],
            motion_subspace: vec![],
            dof_axis: vec![],
            signed_dof_axis: vec![],
            origin_inertias: vec![],
            subtree_end_v: vec![0],
            placement_quarter_turn: vec![Some(0)],
            elementary_rotation_axis: vec![None],
            subtree_v_ranges: vec![],
            subtree_v_ranges_start: vec![0, 0],
            lower_position_limit: vec![],
            upper_position_limit: vec![],
            velocity_limit: vec![],
            effort_limit: vec![],
            damping: vec![],
            friction: vec![],
            armature: vec![],
            mimic: vec![None],
            frames: vec![Frame {
                name: "universe".into(),
                parent_joint: JointId::UNIVERSE,
                placement: Se3::identity(),
                kind: FrameKind::Body,
            }],
            gravity,
        };
        Self {
            model,
            joint_names: HashSet::from(["universe".to_string()]),
            frame_names: HashSet::from([("universe".to_string(), FrameKind::Body as u8)]),
        }
    }

    /// Number of joints so far, the universe included.
    pub fn njoints(&self) -> usize {
        self.model.njoints
    }

    /// Adds a joint under `parent` whose frame sits at `placement` in the parent joint frame.
    pub fn add_joint(
        &mut self,
        parent: JointId,
        name: &str,
        kind: JointType,
        placement: Se3,
    ) -> Result<JointId, ModelError> {
        let m = &mut self.model;
        if parent.0 >= m.njoints {
            return Err(ModelError::UnknownParent { joint: name.into(), parent: parent.0 });
        }
        if self.joint_names.contains(name) {
            return Err(ModelError::DuplicateName { what: "joint", name: name.into() });
        }
        if kind == JointType::Universe {
            return Err(ModelError::Invalid(format!("joint '{name}': only joint 0 is the universe")));
        }
        if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } | JointType::Prismatic { axis } = kind {
            let n = axis.vector().norm();
            if !n.is_finite() || (n - 1.0).abs() > 1e-9 {
                return Err(ModelError::Invalid(format!("joint '{name}': axis must be a unit vector (norm {n})")));
            }
        }
        self.joint_names.insert(name.into());
        self.frame_names.insert((name.into(), FrameKind::Joint as u8));
        let id = m.njoints;
        let (nq, nv) = (kind.nq(), kind.nv());
        m.njoints += 1;
        m.joint_names.push(name.into());
        m.body_names.push(name.into());
        m.joint_types.push(kind);
        m.parents.push(parent.0);
        m.children.push(vec![]);
        m.children[parent.0].push(id);
        m.joint_placements.push(placement);
        m.inertias.push(Inertia::zero());
        m.idx_q.push(m.nq);
        m.idx_v.push(m.nv);
        m.nqs.push(nq);
        m.nvs.push(nv);
        m.mimic.push(None);
        // branch-induced parent of each new dof: the last dof on the path to the root
        let mut ancestor = parent.0;
        while ancestor != 0 && m.nvs[ancestor] == 0 {
            ancestor = m.parents[ancestor];
        }
        let mut prev = if ancestor == 0 { usize::MAX } else { m.idx_v[ancestor] + m.nvs[ancestor] - 1 };
        for s in kind.motion_subspace() {
            m.dof_joint.push(id);
            m.dof_parent.push(prev);
            prev = m.dof_joint.len() - 1;
            m.motion_subspace.push(s);
        }
        let mut neutral = vec![0.0; nq];
        kind.neutral(&mut neutral);
        let (lo, hi) = match kind {
            JointType::FreeFlyer => (vec![f64::NEG_INFINITY; 7], vec![f64::INFINITY; 7]),
            JointType::Spherical => (vec![-1.0; 4], vec![1.0; 4]),
            _ => (vec![f64::NEG_INFINITY; nq], vec![f64::INFINITY; nq]),
        };
        m.lower_position_limit.extend(lo);
        m.upper_position_limit.extend(hi);
        m.velocity_limit.extend(std::iter::repeat_n(f64::INFINITY, nv));
        m.effort_limit.extend(std::iter::repeat_n(f64::INFINITY, nv));
        m.damping.extend(std::iter::repeat_n(0.0, nv));
        m.friction.extend(std::iter::repeat_n(0.0, nv));
        m.armature.extend(std::iter::repeat_n(0.0, nv));
        m.nq += nq;
        m.nv += nv;
        m.frames.push(Frame {
            name: name.into(),
            parent_joint: JointId(id),
            placement: Se3::identity(),
            kind: FrameKind::Joint,
        });
        Ok(JointId(id))
    }

    /// Adds a rigid body to `joint` (its inertia in the joint frame). The first body added to a
    /// joint names it; later ones (merged fixed children) are combined with it.
    pub fn add_body(&mut self, joint: JointId, name: &str, inertia: Inertia) -> Result<FrameId, ModelError> {
        self.check_joint(joint)?;
        check_inertia(name, &inertia)?;
        let m = &mut self.model;
        m.inertias[joint.0] = m.inertias[joint.0].combined(&inertia);
        self.add_frame(name, joint, Se3::identity(), FrameKind::Body)
    }

    /// Sets the body name of a joint (the link it moves).
    pub fn set_body_name(&mut self, joint: JointId, name: &str) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        self.model.body_names[joint.0] = name.into();
        Ok(())
    }

    /// Adds inertia to a joint's body without a frame (a merged fixed child's mass).
    pub fn add_inertia(&mut self, joint: JointId, body: &str, inertia: Inertia) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        check_inertia(body, &inertia)?;
        let m = &mut self.model;
        m.inertias[joint.0] = m.inertias[joint.0].combined(&inertia);
        Ok(())
    }

    /// Adds a frame on `joint` at `placement` (joint_from_frame).
    pub fn add_frame(&mut self, name: &str, joint: JointId, placement: Se3, kind: FrameKind) -> Result<FrameId, ModelError> {
        self.check_joint(joint)?;
        if !self.frame_names.insert((name.into(), kind as u8)) {
            return Err(ModelError::DuplicateName { what: "frame", name: name.into() });
        }
        let m = &mut self.model;
        m.frames.push(Frame { name: name.into(), parent_joint: joint, placement, kind });
        Ok(FrameId(m.frames.len() - 1))
    }

    /// Sets position limits (`nq` values each) of a joint.
    pub fn set_position_limits(&mut self, joint: JointId, lower: &[f64], upper: &[f64]) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        let m = &mut self.model;
        let (i, n) = (m.idx_q[joint.0], m.nqs[joint.0]);
        if lower.len() != n || upper.len() != n {
            return Err(ModelError::Invalid(format!("joint '{}': {n} position limits expected", m.joint_names[joint.0])));
        }
        if lower.iter().zip(upper).any(|(l, u)| l > u || l.is_nan() || u.is_nan()) {
            return Err(ModelError::Invalid(format!("joint '{}': lower limit above upper limit", m.joint_names[joint.0])));
        }
        m.lower_position_limit[i..i + n].copy_from_slice(lower);
        m.upper_position_limit[i..i + n].copy_from_slice(upper);
        Ok(())
    }

    /// Sets velocity and effort limits (`nv` values each) of a joint.
    pub fn set_velocity_effort_limits(&mut self, joint: JointId, velocity: &[f64], effort: &[f64]) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        let m = &mut self.model;
        let (i, n) = (m.idx_v[joint.0], m.nvs[joint.0]);
        if velocity.len() != n || effort.len() != n {
            return Err(ModelError::Invalid(format!("joint '{}': {n} velocity/effort limits expected", m.joint_names[joint.0])));
        }
        m.velocity_limit[i..i + n].copy_from_slice(velocity);
        m.effort_limit[i..i + n].copy_from_slice(effort);
        Ok(())
    }

    /// Sets viscous damping and Coulomb friction (`nv` values each) of a joint.
    pub fn set_damping_friction(&mut self, joint: JointId, damping: &[f64], friction: &[f64]) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        let m = &mut self.model;
        let (i, n) = (m.idx_v[joint.0], m.nvs[joint.0]);
        if damping.len() != n || friction.len() != n {
            return Err(ModelError::Invalid(format!("joint '{}': {n} damping/friction values expected", m.joint_names[joint.0])));
        }
        m.damping[i..i + n].copy_from_slice(damping);
        m.friction[i..i + n].copy_from_slice(friction);
        Ok(())
    }

    /// Sets the armature (rotor inertia, `nv` values ≥ 0) of a joint: see [`Model::armature`].
    pub fn set_armature(&mut self, joint: JointId, armature: &[f64]) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        let m = &mut self.model;
        let (i, n) = (m.idx_v[joint.0], m.nvs[joint.0]);
        if armature.len() != n {
            return Err(ModelError::Invalid(format!("joint '{}': {n} armature values expected", m.joint_names[joint.0])));
        }
        if armature.iter().any(|a| !a.is_finite() || *a < 0.0) {
            return Err(ModelError::Invalid(format!("joint '{}': armature must be finite and non-negative", m.joint_names[joint.0])));
        }
        m.armature[i..i + n].copy_from_slice(armature);
        Ok(())
    }

    /// Records a mimic relation on a joint.
    pub fn set_mimic(&mut self, joint: JointId, mimic: Mimic) -> Result<(), ModelError> {
        self.check_joint(joint)?;
        self.model.mimic[joint.0] = Some(mimic);
        Ok(())
    }

    /// Sets gravity (linear acceleration in the world frame).
    pub fn set_gravity(&mut self, g: crate::spatial::Vec3) {
        self.model.gravity = Motion::new(g, crate::spatial::Vec3::zeros());
    }

    /// Sets the model name.
    pub fn set_name(&mut self, name: &str) {
        self.model.name = name.into();
    }

    fn check_joint(&self, joint: JointId) -> Result<(), ModelError> {
        if joint.0 >= self.model.njoints {
            return Err(ModelError::Invalid(format!("no joint with id {}", joint.0)));
        }
        Ok(())
    }

    /// Finishes the model without [`build`](Self::build)'s check of forward dynamics, and lists
    /// the dofs that fail it (increasing; see `massless_dofs`): for loaders that accept such
    /// models as Pinocchio does (kinematics and inverse dynamics are defined, forward dynamics
    /// is not) and report them.
    pub(crate) fn build_listing_massless_dofs(self) -> Result<(Model, Vec<usize>), ModelError> {
        let model = self.finish()?;
        let massless = massless_dofs(&model);
        Ok((model, massless))
    }

    /// The model's derived arrays.
    fn finish(mut self) -> Result<Model, ModelError> {
        let m = &mut self.model;
        let mut end = vec![0usize; m.njoints];
        for i in (0..m.njoints).rev() {
            end[i] = end[i].max(m.idx_v[i] + m.nvs[i]);
            if i > 0 {
                let p = m.parents[i];
                end[p] = end[p].max(end[i]);
            }
        }
        m.subtree_end_v = end;
        // quarter-turn placements snap to their exact rotation (see Model::placement_quarter_turn)
        m.placement_quarter_turn = m
            .joint_placements
            .iter_mut()
            .map(|x| {
                let q = quarter_turn_code(&x.rotation, 1e-12)?;
                x.rotation = quarter_turn_matrix(q);
                Some(q)
            })
            .collect();
        m.elementary_rotation_axis =
            (0..m.njoints).map(|i| elementary_rotation_axis(&m.joint_types[i], m.placement_quarter_turn[i])).collect();
        // subtree dof ranges per joint (merged where contiguous): each joint's dofs are appended
        // to the lists of its ancestors (itself included), in increasing joint order, so the
        // work is the sum of the joints' depths, not njoints² ancestor tests (a 5000-link chain)
        let mut per_joint: Vec<Vec<(usize, usize)>> = vec![vec![]; m.njoints];
        for j in 1..m.njoints {
            if m.nvs[j] == 0 {
                continue;
            }
            let r = (m.idx_v[j], m.idx_v[j] + m.nvs[j]);
            let mut a = j;
            loop {
                let merged = &mut per_joint[a];
                match merged.last_mut() {
                    Some(last) if last.1 == r.0 => last.1 = r.1,
                    _ => merged.push(r),
                }
                if a == 0 {
                    break;
                }
                a = m.parents[a];
            }
        }
        m.subtree_v_ranges.clear();
        m.subtree_v_ranges_start = vec![0];
        for merged in per_joint {
            m.subtree_v_ranges.extend(merged);
            m.subtree_v_ranges_start.push(m.subtree_v_ranges.len());
        }
        m.origin_inertias = m.inertias.iter().map(OriginInertia::from).collect();
        m.dof_axis = m.motion_subspace.iter().map(dof_axis).collect();
        m.signed_dof_axis = m.motion_subspace.iter().map(signed_dof_axis).collect();
        Ok(self.model)
    }

    /// Finishes the model and checks that forward dynamics is defined at the neutral
    /// configuration: every degree of freedom moves some mass or inertia, and none only repeats
    /// another's motion (else the mass matrix is singular).
    pub fn build(self) -> Result<Model, ModelError> {
        let (model, massless) = self.build_listing_massless_dofs()?;
        if let Some(&k) = massless.first() {
            let j = model.dof_joint[k];
            return Err(ModelError::BadInertia {
                body: model.body_names[j].clone(),
                reason: format!(
                    "joint '{}' moves no mass or inertia along its degree of freedom {} (or only repeats another joint's motion): the mass matrix would be singular; lock it (make it a fixed joint), give the links it moves mass and inertia, or add armature to it",
                    model.joint_names[j],
                    k - model.idx_v[j]
                ),
            });
        }
        Ok(model)
    }
}

/// The degrees of freedom whose forward dynamics is undefined at the neutral configuration:
/// those that move no mass or inertia, and those that only repeat others (two hinges on one
/// axis with no mass between them, a massless base over a single hinge), in increasing order.
///
/// The test is the articulated-body pivots of ABA (RBDA Table 7.1) at q = 0: `D = Sᵀ Iᴬ S`,
/// positive definite for every joint exactly when the mass matrix is. A pivot below 1e-13 of
/// the largest entry of `Iᴬ` (or not finite) marks the joint's dofs; such a joint is then
/// treated as locked for its ancestors, so that each degenerate dof is named once.
fn massless_dofs(m: &Model) -> Vec<usize> {
    use crate::spatial::{Mat6, Motion};
    use nalgebra::DMatrix;
    let mut articulated: Vec<Mat6> = m.inertias.iter().map(|i| i.to_matrix()).collect();
    let mut out = vec![];
    for i in (1..m.njoints).rev() {
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let mut ia = articulated[i];
        if nv > 0 {
            let s = DMatrix::from_fn(6, nv, |r, c| m.motion_subspace[iv + c].to_vec6()[r]);
            let u = DMatrix::from_fn(6, 6, |r, c| ia[(r, c)]) * &s;
            let mut d = s.transpose() * &u;
            for k in 0..nv {
                d[(k, k)] += m.armature[iv + k];
            }
            let tol = 1e-13 * ia.amax();
            let pivots_ok = d.iter().all(|x| x.is_finite())
                && d.clone().symmetric_eigenvalues().iter().all(|&e| e > tol);
            match d.clone().try_inverse() {
                Some(d_inv) if pivots_ok => {
                    let reduced = &u * d_inv * u.transpose();
                    ia -= Mat6::from_fn(|r, c| reduced[(r, c)]);
                }
                _ => out.extend(iv..iv + nv),
            }
        }
        // to the parent's frame: Iᴬ_parent += Bᵀ Iᴬ B, B the parent-to-child motion transform
        let x = &m.joint_placements[i];
        let b = Mat6::from_fn(|r, c| {
            let mut e = [0.0; 6];
            e[c] = 1.0;
            x.inv_act_motion(&Motion::from_slice(&e)).to_vec6()[r]
        });
        let p = m.parents[i];
        articulated[p] += b.transpose() * ia * b;
    }
    out.sort_unstable();
    out
}

/// Checks that an inertia is physical: finite, mass ≥ 0, rotational inertia symmetric positive
/// semi-definite and satisfying the triangle inequalities.
fn check_inertia(body: &str, i: &Inertia) -> Result<(), ModelError> {
    let bad = |reason: String| Err(ModelError::BadInertia { body: body.into(), reason });
    if !i.mass.is_finite() || i.mass < 0.0 {
        return bad(format!("mass {} must be finite and non-negative", i.mass));
    }
    if i.com.iter().any(|x| !x.is_finite()) || i.inertia_com.iter().any(|x| !x.is_finite()) {
        return bad("centre of mass and inertia must be finite".into());
    }
    let a = &i.inertia_com;
    let scale = a.amax().max(1e-300);
    if (a - a.transpose()).amax() > 1e-12 * scale {
        return bad("rotational inertia is not symmetric".into());
    }
    let eig = a.symmetric_eigenvalues();
    let tol = 1e-12 * scale + 1e-15; // absolute floor: numerically zero inertias are fine
    if eig.iter().any(|&e| e < -tol) {
        return bad(format!(
            "rotational inertia is not positive semi-definite (eigenvalues {:.3e}, {:.3e}, {:.3e})",
            eig[0], eig[1], eig[2]
        ));
    }
    let (x, y, z) = (eig[0], eig[1], eig[2]);
    if x + y < z - tol || y + z < x - tol || x + z < y - tol {
        return bad(format!("principal moments {x:.3e}, {y:.3e}, {z:.3e} violate the triangle inequality"));
    }
    Ok(())
}
