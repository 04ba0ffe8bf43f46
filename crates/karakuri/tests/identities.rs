//! Identities between algorithms on random trees (every joint kind, floating and fixed).

mod common;

use common::{random_state, random_tree, random_tree_depth_first};
use karakuri::algorithms::*;
use karakuri::spatial::{log6, Motion};
use karakuri::{Data, JointId, Model};
use nalgebra::{DMatrix, DVector};

fn models() -> Vec<Model> {
    let mut v = vec![];
    for seed in 0..6 {
        v.push(random_tree(seed, 12, seed % 2 == 0));
    }
    v.push(random_tree(100, 30, true));
    // depth-first numbering, as URDF models have: the layout CRBA's and M⁻¹'s fast paths use
    for seed in 200..204 {
        v.push(random_tree_depth_first(seed, 20, seed % 2 == 0));
    }
    v
}

fn rel_err(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    (a - b).amax() / (1.0 + b.amax())
}

#[test]
fn forward_dynamics_inverts_inverse_dynamics() {
    for model in models() {
        let mut data = Data::new(&model);
        for s in 0..5 {
            let (q, v, a) = random_state(&model, s);
            let tau = inverse_dynamics(&model, &mut data, &q, &v, &a).clone();
            let qdd = forward_dynamics(&model, &mut data, &q, &v, &tau).clone();
            assert!(rel_err(&qdd, &a) < 1e-9, "{}: ABA(RNEA(a)) - a = {:e}", model.name, rel_err(&qdd, &a));
        }
    }
}

#[test]
fn mass_matrix_is_rnea_differences_and_spd() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, _) = random_state(&model, 7);
        let m = mass_matrix(&model, &mut data, &q).clone();
        assert!((&m - m.transpose()).amax() < 1e-12);
        assert!(m.clone().cholesky().is_some(), "M not positive definite");
        let zero = DVector::zeros(model.nv);
        let tau0 = inverse_dynamics(&model, &mut data, &q, &v, &zero).clone();
        let nle = nonlinear_effects(&model, &mut data, &q, &v).clone();
        assert!(rel_err(&tau0, &nle) < 1e-12);
        for k in 0..model.nv {
            let mut e = DVector::zeros(model.nv);
            e[k] = 1.0;
            let col = inverse_dynamics(&model, &mut data, &q, &v, &e).clone() - &tau0;
            assert!((col - m.column(k)).amax() < 1e-10);
        }
        let g = gravity_torques(&model, &mut data, &q).clone();
        let g2 = nonlinear_effects(&model, &mut data, &q, &zero).clone();
        assert!(rel_err(&g, &g2) < 1e-12);
    }
}

#[test]
fn mass_matrix_inverse_times_mass_matrix_is_identity() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, _, _) = random_state(&model, 3);
        let m = mass_matrix(&model, &mut data, &q).clone();
        let minv = mass_matrix_inverse(&model, &mut data, &q).clone();
        let err = (&minv * &m - DMatrix::identity(model.nv, model.nv)).amax();
        assert!(err < 1e-9, "{}: Minv M - I = {err:e}", model.name);
    }
}

#[test]
fn ltdl_solve_equals_dense_and_keeps_the_pattern() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, _) = random_state(&model, 4);
        let m = mass_matrix(&model, &mut data, &q).clone();
        let fact = factorize_mass_matrix(&mut data).unwrap().clone();
        // the rows of L are stored exactly at the ancestors (increasing): M vanishes elsewhere
        for k in 0..model.nv {
            let mut chain = vec![];
            let mut j = model.dof_parent[k];
            while j != usize::MAX {
                chain.push(j);
                j = model.dof_parent[j];
            }
            chain.reverse();
            assert_eq!(fact.row(k).0, &chain[..]);
        }
        for k in 0..model.nv {
            for i in 0..k {
                let ancestor = {
                    let mut j = model.dof_parent[k];
                    while j != usize::MAX && j != i {
                        j = model.dof_parent[j];
                    }
                    j == i
                };
                if !ancestor {
                    assert_eq!(m[(k, i)], 0.0, "M nonzero off the branch pattern");
                }
            }
        }
        let mut x = v.clone();
        fact.solve(x.as_mut_slice());
        let dense = m.clone().cholesky().unwrap().solve(&v);
        assert!(rel_err(&x, &dense) < 1e-10);
    }
}

#[test]
fn jacobians_match_finite_differences_of_placements() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, _) = random_state(&model, 5);
        joint_jacobians(&model, &mut data, &q);
        let h = 1e-7;
        let q_plus = integrate(&model, &q, &(&v * h));
        let q_minus = integrate(&model, &q, &(&v * -h));
        let mut d_plus = Data::new(&model);
        let mut d_minus = Data::new(&model);
        forward_kinematics(&model, &mut d_plus, &q_plus);
        forward_kinematics(&model, &mut d_minus, &q_minus);
        let mut j = DMatrix::zeros(6, model.nv);
        let (o_m_i, o_m_plus, o_m_minus) =
            (data.joint_placements().unwrap(), d_plus.joint_placements().unwrap(), d_minus.joint_placements().unwrap());
        for i in 1..model.njoints {
            // local spatial velocity from placements: log(oMi⁻¹ oMi(q+h v)) / h, central
            let fd = (log6(&o_m_i[i].inv_compose(&o_m_plus[i])) - log6(&o_m_i[i].inv_compose(&o_m_minus[i])))
                * (0.5 / h);
            joint_jacobian(&model, &data, JointId(i), ReferenceFrame::Local, &mut j).unwrap();
            let jv = Motion::from_slice((&j * &v).as_slice());
            assert!((jv - fd).amax() < 1e-6, "{} joint {i}: local J v vs FD: {:e}", model.name, (jv - fd).amax());
            joint_jacobian(&model, &data, JointId(i), ReferenceFrame::LocalWorldAligned, &mut j).unwrap();
            let jv = Motion::from_slice((&j * &v).as_slice());
            let p_dot = (o_m_plus[i].translation - o_m_minus[i].translation) * (0.5 / h);
            assert!((jv.linear - p_dot).amax() < 1e-6);
        }
        // consistency with body velocities from forward kinematics
        forward_kinematics_velocity(&model, &mut d_plus, &q, &v);
        for i in 1..model.njoints {
            joint_jacobian(&model, &data, JointId(i), ReferenceFrame::Local, &mut j).unwrap();
            let jv = Motion::from_slice((&j * &v).as_slice());
            assert!((jv - d_plus.joint_velocities().unwrap()[i]).amax() < 1e-12);
        }
    }
}

#[test]
fn jacobian_time_variation_matches_finite_differences() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, _) = random_state(&model, 6);
        let h = 1e-6;
        joint_jacobian_time_variation(&model, &mut data, &q, &v);
        let mut d2 = Data::new(&model);
        let mut d3 = Data::new(&model);
        joint_jacobians(&model, &mut d2, &integrate(&model, &q, &(&v * h)));
        joint_jacobians(&model, &mut d3, &integrate(&model, &q, &(&v * -h)));
        for rf in [ReferenceFrame::World, ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned] {
            for i in 1..model.njoints {
                let (mut jp, mut jm, mut dj) =
                    (DMatrix::zeros(6, model.nv), DMatrix::zeros(6, model.nv), DMatrix::zeros(6, model.nv));
                joint_jacobian(&model, &d2, JointId(i), rf, &mut jp).unwrap();
                joint_jacobian(&model, &d3, JointId(i), rf, &mut jm).unwrap();
                joint_jacobian_dot(&model, &data, JointId(i), rf, &mut dj).unwrap();
                let fd = (jp - jm) / (2.0 * h);
                assert!((&fd - &dj).amax() < 1e-5 * (1.0 + fd.amax()), "{rf:?} joint {i}: {:e}", (&fd - &dj).amax());
            }
        }
    }
}

#[test]
fn center_of_mass_jacobian_matches_velocity() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, _) = random_state(&model, 8);
        let jc = center_of_mass_jacobian(&model, &mut data, &q).clone();
        let c = center_of_mass(&model, &mut data, &q);
        let vc = center_of_mass_velocity(&model, &mut data, &q, &v);
        assert!((jc * &v - vc).amax() < 1e-12);
        assert!((center_of_mass(&model, &mut data, &q) - c).amax() < 1e-14);
        let h = 1e-7;
        let cp = center_of_mass(&model, &mut data, &integrate(&model, &q, &(&v * h)));
        let cm = center_of_mass(&model, &mut data, &integrate(&model, &q, &(&v * -h)));
        assert!(((cp - cm) / (2.0 * h) - vc).amax() < 1e-6);
    }
}

#[test]
fn kinetic_energy_is_half_v_m_v() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, _) = random_state(&model, 9);
        let m = mass_matrix(&model, &mut data, &q).clone();
        let ke = kinetic_energy(&model, &mut data, &q, &v);
        assert!((ke - 0.5 * v.dot(&(&m * &v))).abs() < 1e-10 * (1.0 + ke));
    }
}

/// RK4 over the configuration manifold with τ = 0: total energy stays constant.
#[test]
fn energy_is_conserved_without_damping() {
    for model in models().into_iter().take(4) {
        let mut data = Data::new(&model);
        let (mut q, v0, _) = random_state(&model, 10);
        let mut v = v0 * 0.5;
        let zero = DVector::zeros(model.nv);
        let energy = |data: &mut Data, q: &DVector<f64>, v: &DVector<f64>| {
            kinetic_energy(&model, data, q, v) + potential_energy(&model, data, q)
        };
        let e0 = energy(&mut data, &q, &v);
        let dt = 1e-3;
        for _ in 0..300 {
            let mut acc = |q: &DVector<f64>, v: &DVector<f64>| forward_dynamics(&model, &mut data, q, v, &zero).clone();
            let k1v = acc(&q, &v);
            let k1q = v.clone();
            let q2 = integrate(&model, &q, &(&k1q * (dt / 2.0)));
            let v2 = &v + &k1v * (dt / 2.0);
            let k2v = acc(&q2, &v2);
            let k2q = v2.clone();
            let q3 = integrate(&model, &q, &(&k2q * (dt / 2.0)));
            let v3 = &v + &k2v * (dt / 2.0);
            let k3v = acc(&q3, &v3);
            let k3q = v3.clone();
            let q4 = integrate(&model, &q, &(&k3q * dt));
            let v4 = &v + &k3v * dt;
            let k4v = acc(&q4, &v4);
            let k4q = v4.clone();
            q = integrate(&model, &q, &((k1q + k2q * 2.0 + k3q * 2.0 + k4q) * (dt / 6.0)));
            v += (k1v + k2v * 2.0 + k3v * 2.0 + k4v) * (dt / 6.0);
        }
        let e1 = energy(&mut data, &q, &v);
        assert!((e1 - e0).abs() < 1e-6 * (1.0 + e0.abs()), "{}: energy {e0} -> {e1}", model.name);
    }
}

#[test]
fn integrate_difference_roundtrip() {
    for model in models() {
        let (q1, _, _) = random_state(&model, 11);
        let (q2, _, _) = random_state(&model, 12);
        let d = difference(&model, &q1, &q2);
        let back = integrate(&model, &q1, &d);
        assert!(difference(&model, &back, &q2).amax() < 1e-10);
        let mut qn = q1.clone();
        normalize(&model, &mut qn);
        assert!((qn - &q1).amax() < 1e-12);
        assert_eq!(neutral(&model).len(), model.nq);
    }
}

#[test]
fn external_forces_enter_rnea_and_aba_consistently() {
    use karakuri::spatial::{Force, Vec3};
    for model in models() {
        let mut data = Data::new(&model);
        let (q, v, a) = random_state(&model, 13);
        let f_ext: Vec<Force> = (0..model.njoints)
            .map(|i| Force::new(Vec3::new(i as f64 * 0.1, -0.2, 0.3), Vec3::new(0.05, 0.0, -(i as f64) * 0.02)))
            .collect();
        let tau = inverse_dynamics_with_forces(&model, &mut data, &q, &v, &a, &f_ext).clone();
        let qdd = forward_dynamics_with_forces(&model, &mut data, &q, &v, &tau, &f_ext).clone();
        assert!(rel_err(&qdd, &a) < 1e-9);
    }
}
