//! Closed kinematic loops simulated with Baumgarte stabilisation: a four-bar linkage (a loop
//! constraint) and a two-legged robot with both feet welded to the ground (6-D contacts).
//! Assembly of positions and velocities.

use karakuri::algorithms::*;
use karakuri::constraints::{ConstraintError, ConstraintSet, Method};
use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
use karakuri::spatial::{Inertia, Mat3, Motion, Se3, Vec3, Vec6};
use karakuri::{Data, Model};
use nalgebra::DVector;

/// A slender rod of `length` along x from the joint origin.
fn rod(mass: f64, length: f64) -> Inertia {
    let i = mass * length * length / 12.0;
    Inertia::new(mass, Vec3::new(length / 2.0, 0.0, 0.0), Mat3::from_diagonal(&Vec3::new(1e-4, i, i)))
}

const CRANK: f64 = 0.3;
const COUPLER: f64 = 1.0;
const ROCKER: f64 = 0.8;

/// Crank–rocker four-bar in the x–z plane (Grashof: 0.3 + 1.0 < 1.0 + 0.8), ground pivots at
/// the origin and at (`ground`, 0, 0); the rocker's tip is closed onto the second pivot by a
/// loop constraint on the x and z translations.
fn four_bar(ground: f64, all_axes: bool) -> (Model, ConstraintSet) {
    let mut b = ModelBuilder::new("four_bar");
    let ry = || JointType::Revolute { axis: Axis::Y };
    let j1 = b.add_joint(JointId::UNIVERSE, "crank", ry(), Se3::identity()).unwrap();
    b.add_body(j1, "crank_link", rod(1.0, CRANK)).unwrap();
    let j2 = b.add_joint(j1, "coupler", ry(), Se3::from_translation(Vec3::new(CRANK, 0.0, 0.0))).unwrap();
    b.add_body(j2, "coupler_link", rod(2.0, COUPLER)).unwrap();
    let j3 = b.add_joint(j2, "rocker", ry(), Se3::from_translation(Vec3::new(COUPLER, 0.0, 0.0))).unwrap();
    b.add_body(j3, "rocker_link", rod(1.5, ROCKER)).unwrap();
    let model = b.build().unwrap();
    let mut cs = ConstraintSet::new();
    let axes: Vec<Vec6> = if all_axes {
        // every axis but the rotation about y (the pin): y, rx, rz are identically satisfied
        [0, 1, 2, 3, 5].iter().map(|&k| Vec6::from_fn(|r, _| if r == k { 1.0 } else { 0.0 })).collect()
    } else {
        vec![Vec6::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0), Vec6::new(0.0, 0.0, 1.0, 0.0, 0.0, 0.0)]
    };
    cs.add_loop_constraint(
        JointId::UNIVERSE,
        Se3::from_translation(Vec3::new(ground, 0.0, 0.0)),
        j3,
        Se3::from_translation(Vec3::new(ROCKER, 0.0, 0.0)),
        &axes,
        Some("rocker_pivot"),
    );
    cs.bind(&model).unwrap();
    (model, cs)
}

/// Pelvis on a free flyer, two 6-DoF legs (hip yaw, roll, pitch, knee, ankle pitch, roll).
fn biped() -> (Model, Vec<JointId>) {
    let mut b = ModelBuilder::new("biped");
    let box_inertia = |m: f64, c: Vec3, d: f64| Inertia::new(m, c, Mat3::identity() * (m * d * d / 6.0));
    let root = b.add_joint(JointId::UNIVERSE, "root_joint", JointType::FreeFlyer, Se3::identity()).unwrap();
    b.add_body(root, "pelvis", box_inertia(10.0, Vec3::new(0.0, 0.0, 0.05), 0.3)).unwrap();
    let mut feet = vec![];
    for (side, y) in [("left", 0.1), ("right", -0.1)] {
        let mut parent = root;
        let chain = [
            ("hip_yaw", Axis::Z, Vec3::new(0.0, y, -0.05), box_inertia(0.2, Vec3::zeros(), 0.05)),
            ("hip_roll", Axis::X, Vec3::zeros(), box_inertia(0.2, Vec3::zeros(), 0.05)),
            ("hip_pitch", Axis::Y, Vec3::zeros(), box_inertia(3.0, Vec3::new(0.0, 0.0, -0.2), 0.1)),
            ("knee", Axis::Y, Vec3::new(0.0, 0.0, -0.4), box_inertia(2.0, Vec3::new(0.0, 0.0, -0.2), 0.08)),
            ("ankle_pitch", Axis::Y, Vec3::new(0.0, 0.0, -0.4), box_inertia(0.2, Vec3::zeros(), 0.05)),
            ("ankle_roll", Axis::X, Vec3::zeros(), box_inertia(0.6, Vec3::new(0.04, 0.0, -0.04), 0.1)),
        ];
        for (name, axis, p, inertia) in chain {
            let j = b
                .add_joint(parent, &format!("{side}_{name}"), JointType::Revolute { axis }, Se3::from_translation(p))
                .unwrap();
            b.add_body(j, &format!("{side}_{name}_link"), inertia).unwrap();
            parent = j;
        }
        feet.push(parent);
    }
    (b.build().unwrap(), feet)
}

/// `dexp⁻¹`: the rate of the tangent offset Θ (q = q0 ⊕ Θ) that moves with velocity `v`,
/// `Θ̇ = v + ½ [Θ, v] + 1/12 [Θ, [Θ, v]]` on the free-flyer (SE(3)) blocks, `v` elsewhere.
fn tangent_rate(model: &Model, theta: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
    let mut k = v.clone();
    for j in 1..model.njoints {
        if model.joint_types[j] == JointType::FreeFlyer {
            let iv = model.idx_v[j];
            let th = Motion::from_slice(&theta.as_slice()[iv..iv + 6]);
            let vj = Motion::from_slice(&v.as_slice()[iv..iv + 6]);
            let c1 = th.cross(&vj);
            let r = vj + c1 * 0.5 + th.cross(&c1) * (1.0 / 12.0);
            k.rows_mut(iv, 6).copy_from(&r.to_vec6());
        }
    }
    k
}

/// q̈ = f(q, q̇).
type Accel<'a> = dyn FnMut(&DVector<f64>, &DVector<f64>) -> DVector<f64> + 'a;

/// One Runge–Kutta–Munthe-Kaas (RK4) step on (q, q̇): configuration stages are offsets Θ in
/// the tangent space at q, with the `dexp⁻¹` correction on free flyers (fourth order on SE(3)).
fn rk4_step(
    model: &Model,
    q: &mut DVector<f64>,
    v: &mut DVector<f64>,
    dt: f64,
    f: &mut Accel<'_>,
) {
    let a1 = f(q, v);
    let k1 = v.clone();
    let th2 = &k1 * (dt / 2.0);
    let v2 = &*v + &a1 * (dt / 2.0);
    let a2 = f(&integrate(model, q, &th2), &v2);
    let k2 = tangent_rate(model, &th2, &v2);
    let th3 = &k2 * (dt / 2.0);
    let v3 = &*v + &a2 * (dt / 2.0);
    let a3 = f(&integrate(model, q, &th3), &v3);
    let k3 = tangent_rate(model, &th3, &v3);
    let th4 = &k3 * dt;
    let v4 = &*v + &a3 * dt;
    let a4 = f(&integrate(model, q, &th4), &v4);
    let k4 = tangent_rate(model, &th4, &v4);
    *q = integrate(model, q, &((&k1 + &k2 * 2.0 + &k3 * 2.0 + &k4) * (dt / 6.0)));
    *v += (&a1 + &a2 * 2.0 + &a3 * 2.0 + &a4) * (dt / 6.0);
    normalize(model, q);
}

fn energy(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
    kinetic_energy(model, data, q, v) + potential_energy(model, data, q)
}

#[test]
fn assemble_q_closes_the_four_bar_from_a_wrong_guess_and_reports_failure_honestly() {
    let (model, mut cs) = four_bar(1.0, false);
    let mut data = Data::new(&model);
    let guess = DVector::from_vec(vec![1.2, -0.3, -1.0]);
    let e0 = cs.position_errors(&model, &mut data, &guess).amax();
    assert!(e0 > 0.1, "the guess should be open: {e0}");
    let q = cs.assemble_q(&model, &mut data, &guess, None, 1e-12, 50).unwrap();
    let e = cs.position_errors(&model, &mut data, &q).amax();
    eprintln!("four-bar assembly: |phi| {e0:.3} -> {e:.1e}, q = {:?}", q.as_slice());
    assert!(e <= 1e-12);
    // weighted: a heavier weight on the crank moves it less
    let w = DVector::from_vec(vec![100.0, 1.0, 1.0]);
    let qw = cs.assemble_q(&model, &mut data, &guess, Some(&w), 1e-12, 50).unwrap();
    assert!(cs.position_errors(&model, &mut data, &qw).amax() <= 1e-12);
    assert!((qw[0] - guess[0]).abs() < (q[0] - guess[0]).abs(), "crank moved {} vs {}", qw[0] - guess[0], q[0] - guess[0]);
    // redundant axes (five; the planar linkage leaves three identically zero) also close
    let (model6, mut cs6) = four_bar(1.0, true);
    let q6 = cs6.assemble_q(&model6, &mut data, &guess, None, 1e-12, 50).unwrap();
    assert!(cs6.position_errors(&model6, &mut data, &q6).amax() <= 1e-12);
    // a ground link longer than the other three together cannot close
    let (model_far, mut far) = four_bar(3.0, false);
    match far.assemble_q(&model_far, &mut data, &guess, None, 1e-10, 30) {
        Err(ConstraintError::AssemblyFailed { iterations, residual }) => {
            assert!(iterations == 30 && residual > 0.5, "{iterations} {residual}")
        }
        other => panic!("expected failure, got {other:?}"),
    }
    // velocities: G v = 0
    let v = cs.assemble_v(&model, &mut data, &q, &DVector::from_vec(vec![2.0, 0.5, -1.0]), None).unwrap();
    let gv = cs.velocity_errors(&model, &mut data, &q, &v).amax();
    assert!(gv <= 1e-12, "G v = {gv:e}");
    let v6 = cs6.assemble_v(&model6, &mut data, &q6, &DVector::from_vec(vec![2.0, 0.5, -1.0]), None).unwrap();
    assert!(cs6.velocity_errors(&model6, &mut data, &q6, &v6).amax() <= 1e-12);
}

#[test]
fn four_bar_simulated_for_10_s_keeps_its_loop_and_energy() {
    let (model, mut cs) = four_bar(1.0, false);
    cs.set_baumgarte_all(Some(0.05));
    let mut data = Data::new(&model);
    let mut q = cs.assemble_q(&model, &mut data, &DVector::from_vec(vec![1.2, -0.3, -1.0]), None, 1e-13, 50).unwrap();
    let mut v = cs.assemble_v(&model, &mut data, &q, &DVector::from_vec(vec![3.0, 0.0, 0.0]), None).unwrap();
    let e0 = energy(&model, &mut data, &q, &v);
    let tau = DVector::zeros(model.nv);
    let (dt, steps) = (1e-3, 10_000);
    let (mut max_phi, mut max_gv, mut max_de, mut max_t) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut crank_turns = 0.0f64;
    for _ in 0..steps {
        let q_prev = q[0];
        rk4_step(&model, &mut q, &mut v, dt, &mut |q, v| {
            cs.forward_dynamics(&model, &mut data, q, v, &tau, Method::RangeSpaceSparse).unwrap().clone()
        });
        crank_turns += (q[0] - q_prev).abs() / std::f64::consts::TAU;
        max_phi = max_phi.max(cs.position_errors(&model, &mut data, &q).amax());
        max_gv = max_gv.max(cs.velocity_errors(&model, &mut data, &q, &v).amax());
        max_de = max_de.max((energy(&model, &mut data, &q, &v) - e0).abs());
        max_t = max_t.max(kinetic_energy(&model, &mut data, &q, &v));
    }
    let rel_de = max_de / e0.abs().max(max_t);
    eprintln!(
        "four-bar 10 s: max |phi| {max_phi:.2e}, max |G v| {max_gv:.2e}, energy drift {rel_de:.2e} (E0 {e0:.3} J, max T {max_t:.3} J), crank travel {crank_turns:.1} turns"
    );
    assert!(max_phi < 1e-6 && max_gv < 1e-6, "loop drift {max_phi:e} {max_gv:e}");
    assert!(rel_de < 1e-3, "energy drift {rel_de:e}");
    assert!(crank_turns > 1.0, "the linkage should move");
}

#[test]
fn biped_with_welded_feet_simulated_for_10_s_keeps_its_contacts_and_energy() {
    let (model, feet) = biped();
    let mut data = Data::new(&model);
    let mut cs = ConstraintSet::new();
    for (k, f) in feet.iter().enumerate() {
        cs.add_frame_contact_6d(*f, Se3::from_translation(Vec3::new(0.0, 0.0, -0.05)), Some(["left_sole", "right_sole"][k]));
    }
    cs.bind(&model).unwrap();
    cs.set_baumgarte_all(Some(0.05));
    // knees bent, feet flat, welded where they are
    let mut q = neutral(&model);
    q[2] = 0.9;
    for side in ["left", "right"] {
        q[model.idx_q[model.joint_id(&format!("{side}_hip_pitch")).unwrap().0]] = -0.4;
        q[model.idx_q[model.joint_id(&format!("{side}_knee")).unwrap().0]] = 0.8;
        q[model.idx_q[model.joint_id(&format!("{side}_ankle_pitch")).unwrap().0]] = -0.4;
    }
    cs.set_anchors_to_current(&model, &mut data, &q);
    assert!(cs.position_errors(&model, &mut data, &q).amax() < 1e-14);
    // joint springs about the initial pose (conservative, no damping) hold the robot up
    let q_ref = q.clone();
    let k_spring = 300.0;
    let leg_dofs: Vec<(usize, usize)> = (2..model.njoints).map(|j| (model.idx_q[j], model.idx_v[j])).collect();
    let spring_energy = |q: &DVector<f64>| leg_dofs.iter().map(|&(iq, _)| 0.5 * k_spring * (q[iq] - q_ref[iq]).powi(2)).sum::<f64>();
    let mut rng = SplitMix64::new(7);
    let mut v = cs.assemble_v(&model, &mut data, &q, &(rng.vector(model.nv) * 0.5), None).unwrap();
    assert!(cs.velocity_errors(&model, &mut data, &q, &v).amax() <= 1e-12);
    let total = |data: &mut Data, q: &DVector<f64>, v: &DVector<f64>| energy(&model, data, q, v) + spring_energy(q);
    let e0 = total(&mut data, &q, &v);
    let mut tau = DVector::zeros(model.nv);
    let (dt, steps) = (1e-3, 10_000);
    let (mut max_phi, mut max_gv, mut max_de, mut max_t, mut max_dev) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let start = std::time::Instant::now();
    for _ in 0..steps {
        rk4_step(&model, &mut q, &mut v, dt, &mut |q, v| {
            for &(iq, iv) in &leg_dofs {
                tau[iv] = -k_spring * (q[iq] - q_ref[iq]);
            }
            cs.forward_dynamics(&model, &mut data, q, v, &tau, Method::RangeSpaceSparse).unwrap().clone()
        });
        max_phi = max_phi.max(cs.position_errors(&model, &mut data, &q).amax());
        max_gv = max_gv.max(cs.velocity_errors(&model, &mut data, &q, &v).amax());
        max_de = max_de.max((total(&mut data, &q, &v) - e0).abs());
        max_t = max_t.max(kinetic_energy(&model, &mut data, &q, &v));
        max_dev = max_dev.max(leg_dofs.iter().map(|&(iq, _)| (q[iq] - q_ref[iq]).abs()).fold(0.0, f64::max));
    }
    let rel_de = max_de / e0.abs().max(max_t);
    eprintln!(
        "biped 10 s ({:.2} s wall): max |phi| {max_phi:.2e}, max |G v| {max_gv:.2e}, energy drift {rel_de:.2e} of E0 {e0:.3} J ({:.2e} of max T {max_t:.3} J), max joint excursion {max_dev:.3} rad",
        start.elapsed().as_secs_f64(),
        max_de / max_t
    );
    assert!(max_phi < 1e-6 && max_gv < 1e-6, "contact drift {max_phi:e} {max_gv:e}");
    assert!(rel_de < 1e-3, "energy drift {rel_de:e}");
    assert!(max_dev > 0.01, "the robot should move");
}
