//! No stale reads: for every derived quantity a `Data` holds, compute it at (q₁, v₁), give
//! `Data` new inputs through any algorithm, then read the quantity again through every public
//! path. Each read must give what a never-used `Data` gives after that same last call (the
//! value at the new inputs) or a `Stale` error naming the call to make, never the old value.
//!
//! The issues these pin (Pinocchio's users met all of them): `joint_jacobian` read the columns
//! of an earlier q after `forward_kinematics(q₂)`; `joint_jacobian_dot` accepted what ABA left;
//! placements after CRBA were in a free-flyer root's frame; `Data::a` meant two things.

mod common;

use common::{random_state, random_tree, random_tree_depth_first};
use karakuri::algorithms::hybrid::{hybrid_dynamics, HybridMethod, HybridWorkspace};
use karakuri::algorithms::*;
use karakuri::io::urdf::{self, Root};
use karakuri::model::{FrameId, JointId};
use karakuri::{Data, Model, Stale};
use nalgebra::{DMatrix, DVector};

/// An algorithm given inputs (q, v); the ones without v ignore it.
type Call = (&'static str, fn(&Model, &mut Data, &DVector<f64>, &DVector<f64>));

/// Every public algorithm that writes into `Data`.
fn calls() -> Vec<Call> {
    vec![
        ("forward_kinematics", |m, d, q, _| forward_kinematics(m, d, q)),
        ("forward_kinematics_velocity", |m, d, q, v| forward_kinematics_velocity(m, d, q, v)),
        ("forward_kinematics_acceleration", |m, d, q, v| forward_kinematics_acceleration(m, d, q, v, &v.map(|x| 0.5 - x))),
        ("inverse_dynamics", |m, d, q, v| {
            let _ = inverse_dynamics(m, d, q, v, &v.map(|x| 0.5 - x));
        }),
        ("nonlinear_effects", |m, d, q, v| {
            let _ = nonlinear_effects(m, d, q, v);
        }),
        ("gravity_torques", |m, d, q, _| {
            let _ = gravity_torques(m, d, q);
        }),
        ("mass_matrix", |m, d, q, _| {
            let _ = mass_matrix(m, d, q);
        }),
        ("mass_matrix_inverse", |m, d, q, _| {
            let _ = mass_matrix_inverse(m, d, q);
        }),
        ("forward_dynamics", |m, d, q, v| {
            let _ = forward_dynamics(m, d, q, v, &v.map(|x| 0.5 - x));
        }),
        ("joint_jacobians", |m, d, q, _| {
            let _ = joint_jacobians(m, d, q);
        }),
        ("joint_jacobian_time_variation", |m, d, q, v| joint_jacobian_time_variation(m, d, q, v)),
        ("center_of_mass", |m, d, q, _| {
            let _ = center_of_mass(m, d, q);
        }),
        ("center_of_mass_velocity", |m, d, q, v| {
            let _ = center_of_mass_velocity(m, d, q, v);
        }),
        ("center_of_mass_jacobian", |m, d, q, _| {
            let _ = center_of_mass_jacobian(m, d, q);
        }),
        ("kinetic_energy", |m, d, q, v| {
            let _ = kinetic_energy(m, d, q, v);
        }),
        ("potential_energy", |m, d, q, _| {
            let _ = potential_energy(m, d, q);
        }),
        ("compute_all_terms", |m, d, q, v| compute_all_terms(m, d, q, v)),
        ("hybrid_dynamics (articulated body)", |m, d, q, v| hybrid(m, d, q, v, HybridMethod::ArticulatedBody)),
        ("hybrid_dynamics (CRBA)", |m, d, q, v| hybrid(m, d, q, v, HybridMethod::Crba)),
    ]
}

/// Hybrid dynamics with the first joint forward, the others inverse.
fn hybrid(m: &Model, d: &mut Data, q: &DVector<f64>, v: &DVector<f64>, method: HybridMethod) {
    let mut ws = HybridWorkspace::new(m);
    let mut is_forward = vec![false; m.njoints];
    is_forward[1] = true;
    hybrid_dynamics(m, d, &mut ws, q, v, v, &is_forward, method);
}

/// One public read path of a derived quantity, flattened (`&mut Data` for the reads that
/// derive from what `Data` holds, such as `update_frame_placements`).
type Read = (&'static str, fn(&Model, &mut Data) -> Result<Vec<f64>, Stale>);

fn flat<'a>(it: impl IntoIterator<Item = &'a f64>) -> Vec<f64> {
    it.into_iter().copied().collect()
}

fn last_joint(m: &Model) -> JointId {
    JointId(m.njoints - 1)
}

fn last_frame(m: &Model) -> FrameId {
    FrameId(m.frames.len() - 1)
}

/// A Jacobian-like read into a 6 x nv matrix.
fn jac(m: &Model, f: impl FnOnce(&mut DMatrix<f64>) -> Result<(), Stale>) -> Result<Vec<f64>, Stale> {
    let mut out = DMatrix::zeros(6, m.nv);
    f(&mut out)?;
    Ok(flat(out.iter()))
}

/// Asks for `quantity` (computed by `compute`) again through every path in `reads` after each
/// algorithm in [`calls`] was given new inputs, on several models: new value or `Stale`.
fn check(compute: Call, reads: &[Read]) {
    for (mi, model) in models().iter().enumerate() {
        let (q1, v1, _) = random_state(model, 100 + mi as u64);
        let (q2, v2, _) = random_state(model, 200 + mi as u64);
        // new q and v, or new v only (then what depends on q alone may legitimately be equal)
        for (q_new, v_new, q_changed) in [(&q2, &v2, true), (&q1, &v2, false)] {
            // every algorithm, and last the quantity's own computation at the new inputs
            for (call, run) in calls().into_iter().chain([compute]) {
                let mut data = Data::new(model);
                compute.1(model, &mut data, &q1, &v1);
                let old: Vec<Vec<f64>> = reads
                    .iter()
                    .map(|(r, read)| read(model, &mut data).unwrap_or_else(|e| panic!("{r} right after {}: {e}", compute.0)))
                    .collect();
                run(model, &mut data, q_new, v_new);
                let mut reference = Data::new(model);
                run(model, &mut reference, q_new, v_new);
                for ((r, read), old) in reads.iter().zip(&old) {
                    let context = format!("{}: {} at (q₁, v₁), then {call} at new inputs, then {r}", model.name, compute.0);
                    match read(model, &mut data) {
                        Err(e) => {
                            // the quantity's own computation must make it readable
                            assert!(call != compute.0, "{context}: not readable after computing it anew: {e}");
                            let msg = e.to_string();
                            assert!(msg.contains("call ") && msg.contains(r.split(' ').next().unwrap_or(r)), "{context}: unclear error '{msg}'");
                        }
                        Ok(got) => {
                            let want = read(model, &mut reference)
                                .unwrap_or_else(|e| panic!("{context}: readable on the reused Data but not on a fresh one: {e}"));
                            let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                            assert!(got.len() == want.len() && diff <= 1e-12, "{context}: differs from the value at the new inputs by {diff:e}");
                            if q_changed {
                                let moved = got.iter().zip(old).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                                assert!(moved > 1e-9, "{context}: the old value was returned");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A floating and a fixed random tree with every joint kind, and Talos with a free flyer.
fn models() -> Vec<Model> {
    let talos = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/talos_reduced.urdf");
    vec![
        random_tree(3, 10, true),
        random_tree_depth_first(4, 9, false),
        urdf::load(talos, Root::FreeFlyer).unwrap(),
    ]
}

fn call(name: &str) -> Call {
    calls().into_iter().find(|c| c.0 == name).unwrap()
}

#[test]
fn world_placements() {
    check(
        call("forward_kinematics"),
        &[
            ("joint_placements", |_, d| Ok(d.joint_placements()?.iter().flat_map(|x| flat(x.rotation.iter().chain(&x.translation))).collect())),
            ("parent_placements", |_, d| Ok(d.parent_placements()?.iter().flat_map(|x| flat(x.rotation.iter().chain(&x.translation))).collect())),
            ("frame_placement", |m, d| {
                let x = frame_placement(m, d, last_frame(m))?;
                Ok(flat(x.rotation.iter().chain(&x.translation)))
            }),
            ("update_frame_placements", |m, d| {
                update_frame_placements(m, d)?;
                Ok(d.frame_placements()?.iter().flat_map(|x| flat(x.rotation.iter().chain(&x.translation))).collect())
            }),
        ],
    );
}

#[test]
fn frame_placements() {
    check(
        ("forward_kinematics, update_frame_placements", |m, d, q, _| {
            forward_kinematics(m, d, q);
            update_frame_placements(m, d).unwrap();
        }),
        &[("frame_placements", |_, d| Ok(d.frame_placements()?.iter().flat_map(|x| flat(x.rotation.iter().chain(&x.translation))).collect()))],
    );
}

#[test]
fn velocities() {
    check(
        call("forward_kinematics_velocity"),
        &[
            ("joint_velocities", |_, d| Ok(d.joint_velocities()?.iter().flat_map(|x| flat(&x.to_vec6())).collect())),
            ("frame_velocity", |m, d| Ok(flat(&frame_velocity(m, d, last_frame(m))?.to_vec6()))),
        ],
    );
}

#[test]
fn accelerations() {
    check(
        call("inverse_dynamics"),
        &[
            ("joint_accelerations", |_, d| Ok(d.joint_accelerations()?.iter().flat_map(|x| flat(&x.to_vec6())).collect())),
            ("joint_accelerations_with_gravity", |_, d| {
                Ok(d.joint_accelerations_with_gravity()?.iter().flat_map(|x| flat(&x.to_vec6())).collect())
            }),
        ],
    );
}

#[test]
fn joint_jacobians_in_every_frame() {
    check(
        call("joint_jacobians"),
        &[
            ("jacobians", |_, d| Ok(flat(d.jacobians()?.iter()))),
            ("joint_jacobian", |m, d| jac(m, |o| joint_jacobian(m, d, last_joint(m), ReferenceFrame::World, o))),
            ("joint_jacobian", |m, d| jac(m, |o| joint_jacobian(m, d, last_joint(m), ReferenceFrame::Local, o))),
            ("joint_jacobian", |m, d| jac(m, |o| joint_jacobian(m, d, last_joint(m), ReferenceFrame::LocalWorldAligned, o))),
            ("frame_jacobian", |m, d| jac(m, |o| frame_jacobian(m, d, last_frame(m), ReferenceFrame::LocalWorldAligned, o))),
        ],
    );
}

#[test]
fn jacobian_time_derivatives() {
    check(
        call("joint_jacobian_time_variation"),
        &[
            ("jacobians_dot", |_, d| Ok(flat(d.jacobians_dot()?.iter()))),
            ("joint_jacobian_dot", |m, d| jac(m, |o| joint_jacobian_dot(m, d, last_joint(m), ReferenceFrame::World, o))),
            ("joint_jacobian_dot", |m, d| jac(m, |o| joint_jacobian_dot(m, d, last_joint(m), ReferenceFrame::Local, o))),
            ("joint_jacobian_dot", |m, d| jac(m, |o| joint_jacobian_dot(m, d, last_joint(m), ReferenceFrame::LocalWorldAligned, o))),
        ],
    );
}

#[test]
fn mass_matrix_reads() {
    check(call("mass_matrix"), &[("mass_matrix", |_, d| Ok(flat(d.mass_matrix()?.iter())))]);
}

/// M⁻¹ b through the factorisation, for a fixed b.
fn solve_ones(f: &karakuri::linalg::Factorization) -> Vec<f64> {
    let mut x: Vec<f64> = (0..f.n()).map(|k| 1.0 + k as f64).collect();
    f.solve(&mut x);
    x
}

#[test]
fn mass_matrix_factorization() {
    check(
        ("mass_matrix, factorize_mass_matrix", |m, d, q, _| {
            mass_matrix(m, d, q);
            factorize_mass_matrix(d).unwrap();
        }),
        &[
            ("mass_matrix_factorization", |_, d| Ok(solve_ones(d.mass_matrix_factorization()?))),
            ("factorize_mass_matrix", |_, d| Ok(solve_ones(factorize_mass_matrix(d)?))),
        ],
    );
}

#[test]
fn mass_matrix_inverse_reads() {
    check(call("mass_matrix_inverse"), &[("mass_matrix_inverse", |_, d| Ok(flat(d.mass_matrix_inverse()?.iter())))]);
}

#[test]
fn nonlinear_effects_of_all_terms() {
    check(
        call("compute_all_terms"),
        &[
            ("nonlinear_effects", |_, d| Ok(flat(d.nonlinear_effects()?.iter()))),
            ("mass_matrix", |_, d| Ok(flat(d.mass_matrix()?.iter()))),
            ("jacobians", |_, d| Ok(flat(d.jacobians()?.iter()))),
            ("joint_placements", |_, d| Ok(d.joint_placements()?.iter().flat_map(|x| flat(x.rotation.iter().chain(&x.translation))).collect())),
        ],
    );
}

// --- the cases, by name ---

#[test]
fn joint_jacobian_after_forward_kinematics_at_a_new_q_is_stale() {
    let model = &models()[0];
    let (q1, _, _) = random_state(model, 1);
    let (q2, _, _) = random_state(model, 2);
    let mut data = Data::new(model);
    joint_jacobians(model, &mut data, &q1);
    forward_kinematics(model, &mut data, &q2);
    let mut j = DMatrix::zeros(6, model.nv);
    let e = joint_jacobian(model, &data, last_joint(model), ReferenceFrame::World, &mut j).unwrap_err();
    assert_eq!(e.call, "joint_jacobians", "{e}");
    assert!(e.to_string().contains("joint_jacobian needs joint Jacobians"), "{e}");
}

#[test]
fn joint_jacobian_dot_after_aba_is_stale() {
    let model = &models()[2];
    let (q, v, tau) = random_state(model, 3);
    let mut data = Data::new(model);
    joint_jacobian_time_variation(model, &mut data, &q, &v);
    forward_dynamics(model, &mut data, &q, &v, &tau);
    let mut j = DMatrix::zeros(6, model.nv);
    let e = joint_jacobian_dot(model, &data, last_joint(model), ReferenceFrame::Local, &mut j).unwrap_err();
    assert_eq!(e.call, "joint_jacobian_time_variation", "{e}");
}

#[test]
fn placements_after_crba_below_a_free_flyer_are_stale() {
    let model = &models()[2];
    let (q, _, _) = random_state(model, 4);
    let mut data = Data::new(model);
    forward_kinematics(model, &mut data, &q);
    let before = data.joint_placements().unwrap()[5];
    mass_matrix(model, &mut data, &q);
    // CRBA's working frame below the root is the root's body, not the world
    let e = data.joint_placements().unwrap_err();
    assert_eq!(e.call, "forward_kinematics", "{e}");
    assert!(frame_placement(model, &data, last_frame(model)).is_err());
    forward_kinematics(model, &mut data, &q);
    assert_eq!(data.joint_placements().unwrap()[5], before);
}

#[test]
fn accelerations_have_one_meaning() {
    let model = &models()[2];
    let (q, v, tau) = random_state(model, 5);
    let mut data = Data::new(model);
    let qdd = forward_dynamics(model, &mut data, &q, &v, &tau).clone();
    // ABA propagates accelerations with gravity folded in: those are readable as such only
    let with_g = data.joint_accelerations_with_gravity().unwrap().to_vec();
    assert!(data.joint_accelerations().is_err());
    let mut check = Data::new(model);
    forward_kinematics_acceleration(model, &mut check, &q, &v, &qdd);
    let a = check.joint_accelerations().unwrap().to_vec();
    inverse_dynamics(model, &mut check, &q, &v, &qdd);
    let a_gf = check.joint_accelerations_with_gravity().unwrap();
    for i in 1..model.njoints {
        assert!((with_g[i] - a_gf[i]).amax() < 1e-9, "joint {i}: ABA and RNEA accelerations with gravity");
        // a and a_gf differ by gravity moved into the joint frame
        let g_local = check.joint_placements().unwrap()[i].inv_act_motion(&(-model.gravity));
        assert!((a_gf[i] - a[i] - g_local).amax() < 1e-9, "joint {i}: a_gf = a − g");
    }
}

#[test]
fn stale_names_the_call() {
    let model = &models()[1];
    let data = Data::new(model);
    let e = data.mass_matrix().unwrap_err();
    assert_eq!(
        e.to_string(),
        "mass_matrix needs the mass matrix, which Data does not hold for the last inputs it was given: call mass_matrix first"
    );
}
