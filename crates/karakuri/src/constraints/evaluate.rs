//! Evaluating a bound set's rows at the current kinematics: the constraint Jacobian `G`, the
//! world covector `φ` of every row, the position and velocity errors and the acceleration bias
//! `γ` (Baumgarte terms included), and the constraint forces from the multipliers.

use super::rows;
use super::types::ConstraintKind;
use super::ConstraintSet;
use crate::algorithms::{dof_in_frame, forward_kinematics, forward_kinematics_acceleration};
use crate::data::{Data, Fresh};
use crate::model::Model;
use crate::spatial::{log3, Force, Motion, Se3, Vec3, Vec6};
use nalgebra::{DMatrix, DVector};

impl ConstraintSet {
    /// Fills `G`, `φ` per row, and with `velocities` the velocity errors and `γ` (Baumgarte
    /// included), from `data.o_m_i` (and `data.v`, `data.a` at q̈ = 0 without gravity).
    /// Position errors are computed for all rows when `all_positions`, otherwise only for
    /// Baumgarte-stabilised constraints.
    pub(super) fn fill_rows(&mut self, model: &Model, data: &Data, velocities: bool, all_positions: bool) {
        // world velocity and acceleration of a body (zero when velocities are not asked for)
        let world_va = |j: usize| -> (Motion, Motion) {
            if j == 0 || !velocities {
                (Motion::zero(), Motion::zero())
            } else {
                (data.o_m_i[j].act_motion(&data.v[j]), data.o_m_i[j].act_motion(&data.a[j]))
            }
        };
        let o_m = |j: usize| if j == 0 { Se3::identity() } else { data.o_m_i[j] };
        // world motion subspaces of the dofs the rows touch
        for &k in &self.ws.used_dofs {
            let o_m_i = &data.o_m_i[model.dof_joint[k]];
            self.ws.s_world[k] = dof_in_frame(model, k, o_m_i);
        }
        // G rows: G_r q̇ = φ_r·(v_s - v_p) = Σ_k ±(φ_r·S_k world) q̇_k over the support
        self.g.as_mut_slice().fill(0.0);
        let nc = self.nrows;
        for (c, con) in self.constraints.iter().enumerate() {
            let (s0, s1) = (self.ws.sup_off[c], self.ws.sup_off[c + 1]);
            let mut out = RowWriter {
                g: self.g.as_mut_slice(),
                nc,
                phi: &mut self.ws.phi,
                velocity_error: &mut self.velocity_error,
                gamma: &mut self.gamma,
                position_error: &mut self.position_error,
                s_world: &self.ws.s_world,
                sup: &self.ws.sup[s0..s1],
                sign: &self.ws.sup_sign[s0..s1],
                velocities,
                positions: all_positions || con.baumgarte_time.is_some(),
            };
            let r0 = con.rows.start;
            match &con.kind {
                ConstraintKind::Contact { body, point, normals, anchor } => {
                    let x = o_m(body.0).transform_point(point);
                    out.contact_rows(r0, &x, world_va(body.0), normals, anchor.as_ref());
                }
                ConstraintKind::Frame { body, placement, axes, anchor } => {
                    let o_m_f = o_m(body.0).compose(placement);
                    let (vw, aw) = world_va(body.0);
                    let err = match (out.positions, anchor) {
                        (true, Some(a)) => {
                            let rel = a.inv_compose(&o_m_f);
                            Motion::new(rel.translation, log3(&rel.rotation))
                        }
                        _ => Motion::zero(),
                    };
                    out.axis_rows(r0, &o_m_f, axes, &vw, &aw, &err);
                }
                ConstraintKind::Loop { predecessor, predecessor_frame, successor, successor_frame, axes } => {
                    let (p, s) = (predecessor.0, successor.0);
                    let o_m_fp = o_m(p).compose(predecessor_frame);
                    let (vp, ap) = world_va(p);
                    let (vs, a_s) = world_va(s);
                    // d/dt [φ·(v_s - v_p)] with φ fixed in the predecessor (φ̇ = v_p ×* φ):
                    // φ·(a_s - a_p - v_p × v_s)
                    let dv = vs - vp;
                    let acc = a_s - ap - vp.cross(&vs);
                    let err = if out.positions {
                        let rel = o_m_fp.inv_compose(&o_m(s).compose(successor_frame));
                        Motion::new(rel.translation, log3(&rel.rotation))
                    } else {
                        Motion::zero()
                    };
                    out.axis_rows(r0, &o_m_fp, axes, &dv, &acc, &err);
                }
            }
            if velocities {
                if let Some(t) = con.baumgarte_time {
                    // Baumgarte: ϕ̈ + 2/T ϕ̇ + 1/T² ϕ = 0
                    for r in con.rows.clone() {
                        self.gamma[r] -= 2.0 / t * self.velocity_error[r] + self.position_error[r] / (t * t);
                    }
                }
            }
        }
    }

    /// The constraint Jacobian `G` at `q` (rows x nv) (RBDL's `CalcConstraintsJacobian`).
    #[doc(alias = "CalcConstraintsJacobian")]
    pub fn jacobian(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>) -> &DMatrix<f64> {
        self.check_bound(model);
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, false);
        &self.g
    }

    /// Position errors `ϕ(q)` (rows) (RBDL's `CalcConstraintsPositionError`): contacts and
    /// frames against their anchors (zero without one), loops the relative placement of the
    /// two frames, `[translation; rotation vector]` in the predecessor frame, along each axis.
    #[doc(alias = "CalcConstraintsPositionError")]
    pub fn position_errors(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>) -> &DVector<f64> {
        self.check_bound(model);
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, true);
        &self.position_error
    }

    /// Velocity errors `G q̇` (rows) (RBDL's `CalcConstraintsVelocityError`).
    #[doc(alias = "CalcConstraintsVelocityError")]
    pub fn velocity_errors(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> &DVector<f64> {
        self.check_bound(model);
        forward_kinematics_acceleration(model, data, q, v, &self.ws.zero_v);
        self.fill_rows(model, data, true, true);
        &self.velocity_error
    }

    /// The acceleration bias `γ = -Ġ q̇` (rows), with the Baumgarte terms of stabilised
    /// constraints (RBDL's `CalcConstrainedSystemVariables` gamma); `G` comes with it.
    pub fn acceleration_bias(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> &DVector<f64> {
        self.check_bound(model);
        forward_kinematics_acceleration(model, data, q, v, &self.ws.zero_v);
        self.fill_rows(model, data, true, false);
        &self.gamma
    }

    /// Requires `data` to hold `o_m_i`, `v` and `a` at q̈ = 0 (e.g. after
    /// `nonlinear_effects`), then fills the rows.
    pub(super) fn fill_rows_from_rnea(&mut self, model: &Model, data: &Data) {
        debug_assert!(data.fresh.contains(Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::ACCELERATIONS), "constrained dynamics after RNEA");
        self.fill_rows(model, data, true, false);
    }

    /// World forces per constraint from per-row multipliers.
    pub(super) fn update_forces(&mut self, impulses: bool) {
        let lam = if impulses { &self.impulses } else { &self.lambda };
        for (c, con) in self.constraints.iter().enumerate() {
            let mut f = Force::zero();
            for r in con.rows.clone() {
                f += self.ws.phi[r] * lam[r];
            }
            self.forces[c] = f;
        }
    }
}

/// Where [`ConstraintSet::fill_rows`] writes one constraint's rows: `G` (column-major, `nc`
/// rows), the world covectors `φ`, the errors and `γ`; it reads the world motion columns
/// `S_k` over the constraint's support `sup` (with the signs `sign`: +1 successor side, -1
/// predecessor side).
struct RowWriter<'a> {
    g: &'a mut [f64],
    nc: usize,
    phi: &'a mut [Force],
    velocity_error: &'a mut DVector<f64>,
    gamma: &'a mut DVector<f64>,
    position_error: &'a mut DVector<f64>,
    s_world: &'a [Motion],
    sup: &'a [usize],
    sign: &'a [f64],
    velocities: bool,
    positions: bool,
}

impl RowWriter<'_> {
    /// A point contact's rows from `r0`: the velocity of the world point `x` (of a body moving
    /// at world `(v, a)`) along each normal, its classical acceleration, and its distance from
    /// the anchor along the normal.
    fn contact_rows(&mut self, r0: usize, x: &Vec3, (vw, aw): (Motion, Motion), normals: &[Vec3], anchor: Option<&Vec3>) {
        let nc = self.nc;
        // velocity of the body point and its classical acceleration (world axes)
        let v_x = vw.linear + vw.angular.cross(x);
        let a_cl = aw.linear + aw.angular.cross(x) + vw.angular.cross(&v_x);
        // n·(S_lin + S_ang × x): the velocity of the point along n
        if let [n0, n1, n2] = normals {
            // a 3-D contact: the point's velocity once per dof, three stores (the same
            // numbers as `point_coefficient`)
            for (&k, &sg) in self.sup.iter().zip(self.sign) {
                let sk = &self.s_world[k];
                let v = sk.linear + sk.angular.cross(x);
                let g = &mut self.g[k * nc + r0..k * nc + r0 + 3];
                g[0] = sg * n0.dot(&v);
                g[1] = sg * n1.dot(&v);
                g[2] = sg * n2.dot(&v);
            }
        } else {
            for (&k, &sg) in self.sup.iter().zip(self.sign) {
                let sk = &self.s_world[k];
                for (kk, n) in normals.iter().enumerate() {
                    self.g[k * nc + r0 + kk] = sg * rows::point_coefficient(sk, x, n);
                }
            }
        }
        for (k, n) in normals.iter().enumerate() {
            let r = r0 + k;
            self.phi[r] = Force::new(*n, x.cross(n));
            if self.velocities {
                self.velocity_error[r] = n.dot(&v_x);
                self.gamma[r] = -n.dot(&a_cl);
            }
            if self.positions {
                self.position_error[r] = anchor.map_or(0.0, |a| n.dot(&(x - a)));
            }
        }
    }

    /// Rows along spatial axes of a frame at world placement `o_m_f` (a frame constraint, or a
    /// loop's predecessor frame), from `r0`: `φ = X*_{world<-frame} axis`, the velocity error
    /// `φ·v`, `γ = -φ·a` and the position error `err·axis`, with `v`, `a`, `err` what the
    /// kind measures (world spatial).
    fn axis_rows(&mut self, r0: usize, o_m_f: &Se3, axes: &[Vec6], v: &Motion, a: &Motion, err: &Motion) {
        let nc = self.nc;
        for (k, axis) in axes.iter().enumerate() {
            let r = r0 + k;
            // φ·m_world = axis·(frame-local m): φ = X*_{world<-frame} axis
            let phi = o_m_f.act_force(&Force::from_vec6(axis));
            self.phi[r] = phi;
            for (&k, &sg) in self.sup.iter().zip(self.sign) {
                self.g[k * nc + r] = sg * rows::wrench_coefficient(&self.s_world[k], &phi);
            }
            if self.velocities {
                self.velocity_error[r] = v.dot(&phi);
                self.gamma[r] = -a.dot(&phi);
            }
            if self.positions {
                self.position_error[r] = err.to_vec6().dot(axis);
            }
        }
    }
}
