//! Constrained dynamics on random trees (every joint kind): the methods agree, satisfy the
//! KKT equations, γ is -Ġ q̇ (finite differences), impulses, rank-deficient rows, no
//! allocation in the solves.
#![allow(unsafe_code)] // implementing GlobalAlloc is unsafe by definition

mod common;

use common::{random_state, random_tree, random_tree_depth_first};
use karakuri::algorithms::*;
use karakuri::constraints::{ConstraintError, ConstraintSet, Method};
use karakuri::spatial::{exp3, Se3, Vec3, Vec6};
use karakuri::{Data, JointId, Model};
use nalgebra::{DMatrix, DVector};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts allocations made by the thread that switched counting on.
struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
thread_local!(static ME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) && ME.try_with(|m| m.get()).unwrap_or(false) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) && ME.try_with(|m| m.get()).unwrap_or(false) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(p, l, new_size) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

const METHODS: [Method; 4] = [Method::Direct, Method::RangeSpaceSparse, Method::NullSpace, Method::Kokkevis];

fn rel(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    (a - b).amax() / (1.0 + b.amax())
}

/// Bodies without children (deepest first), then the others.
fn leaves(model: &Model) -> Vec<JointId> {
    let mut v: Vec<usize> = (1..model.njoints).filter(|&i| model.children[i].is_empty()).collect();
    v.extend((1..model.njoints).filter(|&i| !model.children[i].is_empty()).rev());
    v.into_iter().map(JointId).collect()
}

fn random_vec3(rng: &mut SplitMix64, s: f64) -> Vec3 {
    Vec3::new(rng.range(-s, s), rng.range(-s, s), rng.range(-s, s))
}

fn random_placement(rng: &mut SplitMix64) -> Se3 {
    Se3::new(exp3(&random_vec3(rng, 2.0)), random_vec3(rng, 0.3))
}

/// Constraint sets of every kind on `model`.
fn constraint_sets(model: &Model, seed: u64) -> Vec<(String, ConstraintSet)> {
    let mut rng = SplitMix64::new(seed);
    let l = leaves(model);
    let mut out = vec![];
    // four 3-D point contacts
    let mut cs = ConstraintSet::new();
    for b in l.iter().take(4) {
        cs.add_point_contact_3d(*b, random_vec3(&mut rng, 0.2), None);
    }
    out.push(("4 point contacts".to_string(), cs));
    // a 6-D contact and a one-row contact with a slanted normal
    let mut cs = ConstraintSet::new();
    cs.add_frame_contact_6d(l[0], random_placement(&mut rng), Some("weld"));
    cs.add_contact(l[1], random_vec3(&mut rng, 0.2), random_vec3(&mut rng, 1.0), Some("touch"));
    out.push(("6d + normal contact".to_string(), cs));
    // a loop between two bodies with three random axes, plus a loop to the universe
    let mut cs = ConstraintSet::new();
    let axes: Vec<Vec6> = (0..3).map(|_| Vec6::from_fn(|_, _| rng.range(-1.0, 1.0))).collect();
    cs.add_loop_constraint(l[0], random_placement(&mut rng), l[1], random_placement(&mut rng), &axes, Some("loop"));
    let axes2 = [Vec6::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0), Vec6::new(0.0, 0.0, 0.0, 0.0, 1.0, 0.0)];
    cs.add_loop_constraint(JointId::UNIVERSE, random_placement(&mut rng), l[2], random_placement(&mut rng), &axes2, None);
    out.push(("loops".to_string(), cs));
    for (_, cs) in &mut out {
        cs.bind(model).unwrap();
    }
    out
}

fn models() -> Vec<Model> {
    let mut v = vec![];
    for seed in 0..6 {
        v.push(random_tree(seed, 12, seed % 2 == 0));
    }
    v.push(random_tree(100, 30, true));
    // depth-first numbering, as URDF models have
    for seed in 200..203 {
        v.push(random_tree_depth_first(seed, 16, seed % 2 == 0));
    }
    v
}

fn well_conditioned(g: &DMatrix<f64>) -> bool {
    let sv = g.clone().svd(false, false).singular_values;
    sv.min() > 1e-4 * sv.max()
}

#[test]
fn methods_agree_and_solve_the_kkt_system_on_random_trees() {
    let (mut worst_qdd, mut worst_l, mut worst_kkt, mut checked, mut skipped) = (0.0f64, 0.0f64, 0.0f64, 0, 0);
    for model in models() {
        let mut data = Data::new(&model);
        for (what, mut cs) in constraint_sets(&model, 11) {
            for s in 0..4 {
                let (q, v, tau) = random_state(&model, s);
                let g = cs.jacobian(&model, &mut data, &q).clone();
                if !well_conditioned(&g) {
                    skipped += 1;
                    continue;
                }
                checked += 1;
                cs.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::Direct).unwrap();
                let (qdd0, l0) = (cs.qdd.clone(), cs.lambda.clone());
                // the KKT equations themselves
                let m = mass_matrix(&model, &mut data, &q).clone();
                let nle = nonlinear_effects(&model, &mut data, &q, &v).clone();
                let r1 = &m * &qdd0 + &nle - &tau - g.transpose() * &l0;
                let gamma = cs.acceleration_bias(&model, &mut data, &q, &v).clone();
                let r2 = &g * &qdd0 - &gamma;
                worst_kkt = worst_kkt.max(r1.amax() / (1.0 + tau.amax())).max(r2.amax());
                assert!(r1.amax() < 1e-8 && r2.amax() < 1e-8, "{}: {what}: KKT residuals {:e} {:e}", model.name, r1.amax(), r2.amax());
                for method in METHODS {
                    cs.forward_dynamics(&model, &mut data, &q, &v, &tau, method).unwrap();
                    assert!(!cs.report.fallback && cs.report.rank == cs.rows());
                    let (eq, el) = (rel(&cs.qdd, &qdd0), rel(&cs.lambda, &l0));
                    worst_qdd = worst_qdd.max(eq);
                    worst_l = worst_l.max(el);
                    assert!(eq < 1e-9 && el < 1e-9, "{}: {what}: {method:?} vs Direct: qdd {eq:e}, lambda {el:e}", model.name);
                }
            }
        }
    }
    eprintln!("random trees: {checked} cases ({skipped} ill-conditioned skipped); max rel diff between methods: qdd {worst_qdd:.2e}, lambda {worst_l:.2e}; KKT residual {worst_kkt:.2e}");
    assert!(checked > 40);
}

#[test]
fn gamma_is_minus_gdot_qdot_by_finite_differences() {
    // c(t) = G(q(t)) q̇(t) along q(t) = q ⊕ t q̇, q̇(t) = q̇ + t a: ċ = G a + Ġ q̇ = G a - γ
    let mut worst = 0.0f64;
    for model in models() {
        let mut data = Data::new(&model);
        for (what, mut cs) in constraint_sets(&model, 5) {
            let (q, v, a) = random_state(&model, 2);
            let h = 1e-6;
            let mut c_at = |t: f64| {
                let qt = integrate(&model, &q, &(&v * t));
                let vt = &v + &a * t;
                cs.velocity_errors(&model, &mut data, &qt, &vt).clone()
            };
            let dc = (c_at(h) - c_at(-h)) / (2.0 * h);
            let g = cs.jacobian(&model, &mut data, &q).clone();
            let gamma = cs.acceleration_bias(&model, &mut data, &q, &v).clone();
            let err = (&dc - (&g * &a - &gamma)).amax() / (1.0 + dc.amax());
            worst = worst.max(err);
            assert!(err < 1e-6, "{}: {what}: finite-difference mismatch {err:e}", model.name);
            // and G is the derivative of the velocity error with respect to q̇
            let e1 = cs.velocity_errors(&model, &mut data, &q, &v).clone();
            assert!((&e1 - &g * &v).amax() < 1e-12);
        }
    }
    eprintln!("gamma vs finite differences: max rel err {worst:.2e}");
}

#[test]
fn impulses_agree_and_reach_the_target_velocities() {
    let mut worst = 0.0f64;
    for model in models() {
        let mut data = Data::new(&model);
        for (what, mut cs) in constraint_sets(&model, 3) {
            let (q, v, _) = random_state(&model, 9);
            let g = cs.jacobian(&model, &mut data, &q).clone();
            if !well_conditioned(&g) {
                continue;
            }
            let mut rng = SplitMix64::new(1);
            cs.impulse_target = rng.vector(cs.rows());
            cs.compute_impulses(&model, &mut data, &q, &v, Method::Direct).unwrap();
            let (v0, l0) = (cs.v_plus.clone(), cs.impulses.clone());
            assert!((&g * &v0 - &cs.impulse_target).amax() < 1e-9, "{what}: G v+ != target");
            let m = mass_matrix(&model, &mut data, &q).clone();
            assert!((&m * (&v0 - &v) - g.transpose() * &l0).amax() < 1e-9, "{what}: momentum jump != G^T Lambda");
            for method in METHODS {
                cs.compute_impulses(&model, &mut data, &q, &v, method).unwrap();
                let e = rel(&cs.v_plus, &v0).max(rel(&cs.impulses, &l0));
                worst = worst.max(e);
                assert!(e < 1e-9, "{}: {what}: impulse {method:?} vs Direct {e:e}", model.name);
            }
        }
    }
    eprintln!("impulses: max rel diff between methods {worst:.2e}");
}

#[test]
fn redundant_rows_give_the_answer_and_say_so_conflicting_rows_give_an_error() {
    let model = random_tree(2, 12, true);
    let mut data = Data::new(&model);
    let l = leaves(&model);
    let (q, v, tau) = random_state(&model, 1);
    // reference: one 3-D contact
    let mut single = ConstraintSet::new();
    single.add_point_contact_3d(l[0], Vec3::new(0.1, 0.0, 0.0), None);
    single.bind(&model).unwrap();
    let qdd_ref = single.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::Direct).unwrap().clone();
    let f_ref = single.forces[0];
    // the same contact twice: rank 3 of 6, consistent
    let mut twice = ConstraintSet::new();
    twice.add_point_contact_3d(l[0], Vec3::new(0.1, 0.0, 0.0), Some("a"));
    twice.add_point_contact_3d(l[0], Vec3::new(0.1, 0.0, 0.0), Some("b"));
    twice.bind(&model).unwrap();
    for method in METHODS {
        let qdd = twice.forward_dynamics(&model, &mut data, &q, &v, &tau, method).unwrap().clone();
        assert!(qdd.iter().all(|x| x.is_finite()) && twice.lambda.iter().all(|x| x.is_finite()));
        assert_eq!((twice.report.rows, twice.report.rank), (6, 3), "{method:?}");
        assert!(rel(&qdd, &qdd_ref) < 1e-9, "{method:?}: redundant answer differs {:e}", rel(&qdd, &qdd_ref));
        // minimal-norm split: the total force is the single contact's, shared equally
        let total = twice.forces[0] + twice.forces[1];
        assert!((total.linear - f_ref.linear).amax() < 1e-8 * (1.0 + f_ref.linear.amax()));
        assert!((twice.forces[0].linear - twice.forces[1].linear).amax() < 1e-8 * (1.0 + f_ref.linear.amax()));
    }
    // conflicting impact targets on the same rows: least squares and an error, never NaN
    twice.impulse_target = DVector::from_vec(vec![1.0, 0.0, 0.0, -1.0, 0.0, 0.0]);
    for method in METHODS {
        let r = twice.compute_impulses(&model, &mut data, &q, &v, method);
        match r {
            Err(ConstraintError::Conflicting { rows: 6, rank: 3, residual }) => assert!((residual - 1.0).abs() < 1e-9),
            other => panic!("{method:?}: expected a conflict, got {other:?}"),
        }
        assert!(twice.v_plus.iter().all(|x| x.is_finite()) && twice.impulses.iter().all(|x| x.is_finite()));
        // least squares: the contact point's x velocity lands half-way, at 0
        let g = twice.jacobian(&model, &mut data, &q).clone();
        assert!((&g * &twice.v_plus)[0].abs() < 1e-9);
    }
    // unknown bodies and zero normals are errors at bind
    let mut bad = ConstraintSet::new();
    bad.add_point_contact_3d(JointId(999), Vec3::zeros(), Some("ghost"));
    assert!(matches!(bad.bind(&model), Err(ConstraintError::UnknownJoint { joint: 999, .. })));
    let mut bad = ConstraintSet::new();
    bad.add_contact(l[0], Vec3::zeros(), Vec3::zeros(), None);
    assert!(matches!(bad.bind(&model), Err(ConstraintError::BadAxis { .. })));
}

#[test]
fn body_wrench_sums_the_contact_forces() {
    let model = random_tree(4, 12, true);
    let mut data = Data::new(&model);
    let l = leaves(&model);
    let (q, _, tau) = random_state(&model, 3);
    // two 3-D contacts on one body are always one row redundant (their distance is fixed);
    // at rest the redundant row is consistent, moving it conflicts (-|v1 - v2|² ≠ 0)
    let v = DVector::zeros(model.nv);
    let mut cs = ConstraintSet::new();
    let a = cs.add_point_contact_3d(l[0], Vec3::new(0.1, 0.0, 0.0), Some("heel"));
    let b = cs.add_point_contact_3d(l[0], Vec3::new(-0.1, 0.05, 0.0), Some("toe"));
    cs.bind(&model).unwrap();
    assert_eq!(cs.find("toe"), Some(b));
    let moving = random_state(&model, 3).1;
    assert!(matches!(
        cs.forward_dynamics(&model, &mut data, &q, &moving, &tau, Method::Direct),
        Err(ConstraintError::Conflicting { rows: 6, rank: 5, .. })
    ));
    cs.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::RangeSpaceSparse).unwrap();
    assert_eq!((cs.report.rank, cs.report.fallback), (5, true));
    let w = cs.body_wrench(l[0]);
    let sum = cs.forces[a] + cs.forces[b];
    assert!((w.linear - sum.linear).amax() < 1e-12 && (w.angular - sum.angular).amax() < 1e-12);
    // a 3-D contact's λ is its world force
    assert!((cs.forces[a].linear - Vec3::from_column_slice(cs.lambda_of(a))).amax() < 1e-12);
    // Gᵀ λ equals the joint torques of the world wrenches (Jᵀ f with the world Jacobian)
    let g = cs.jacobian(&model, &mut data, &q).clone();
    let gt_l = g.transpose() * &cs.lambda;
    let j = joint_jacobians(&model, &mut data, &q).clone();
    let mut jt_f = DVector::zeros(model.nv);
    let mut jb = DMatrix::zeros(6, model.nv);
    joint_jacobian(&model, &data, l[0], ReferenceFrame::World, &mut jb).unwrap();
    let _ = j;
    jt_f += jb.transpose() * w.to_vec6();
    assert!((gt_l - jt_f).amax() < 1e-9);
}

#[test]
fn the_solves_do_not_allocate() {
    let model = random_tree(0, 12, true);
    let mut data = Data::new(&model);
    let (q, v, tau) = random_state(&model, 0);
    let mut cs = constraint_sets(&model, 1).remove(0).1; // 4 point contacts
    for method in METHODS {
        cs.forward_dynamics(&model, &mut data, &q, &v, &tau, method).unwrap();
        cs.compute_impulses(&model, &mut data, &q, &v, method).unwrap();
    }
    ME.with(|m| m.set(true));
    COUNTING.store(true, Ordering::SeqCst);
    for method in METHODS {
        let _ = cs.forward_dynamics(&model, &mut data, &q, &v, &tau, method);
        let _ = cs.compute_impulses(&model, &mut data, &q, &v, method);
    }
    let _ = cs.acceleration_bias(&model, &mut data, &q, &v);
    COUNTING.store(false, Ordering::SeqCst);
    ME.with(|m| m.set(false));
    assert_eq!(ALLOCS.load(Ordering::SeqCst), 0, "constrained solves allocated");
}

/// The range-space method on a free-flyer root carrying one-dof joints takes M's factors from
/// the articulated inertias, without M (record 0086), and computes M only when it falls back:
/// one contact gives the direct method's answer, the same contact twice (rank 3 of 6) too.
#[test]
fn articulated_factors_and_their_fallback_give_the_direct_answer() {
    use karakuri::model::{Axis, JointType};
    use karakuri::spatial::{Inertia, Mat3};
    use karakuri::ModelBuilder;
    let mut b = ModelBuilder::new("floating chain");
    let root = b.add_joint(JointId(0), "root", JointType::FreeFlyer, Se3::identity()).unwrap();
    b.add_body(root, "base", Inertia::new(3.0, Vec3::new(0.01, 0.02, -0.03), Mat3::from_diagonal(&Vec3::new(0.1, 0.2, 0.25)))).unwrap();
    let kinds = [
        JointType::Revolute { axis: Axis::X },
        JointType::Revolute { axis: Axis::Unaligned(Vec3::new(0.6, 0.0, -0.8)) },
        JointType::Prismatic { axis: Axis::Y },
        JointType::Revolute { axis: Axis::Z },
    ];
    let mut parent = root;
    for (k, kind) in kinds.into_iter().enumerate() {
        let placement = Se3::new(exp3(&Vec3::new(0.3, -0.2, 0.1 * k as f64)), Vec3::new(0.1, 0.2, -0.1));
        let j = b.add_joint(parent, &format!("j{k}"), kind, placement).unwrap();
        let inertia = Inertia::new(1.0 + 0.1 * k as f64, Vec3::new(0.05, -0.02, 0.1), Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04)));
        b.add_body(j, &format!("b{k}"), inertia).unwrap();
        parent = j;
    }
    let model = b.build().unwrap();
    let mut data = Data::new(&model);
    let (q, v, tau) = random_state(&model, 4);
    let mut single = ConstraintSet::new();
    single.add_point_contact_3d(parent, Vec3::new(0.1, 0.0, 0.0), None);
    single.bind(&model).unwrap();
    let direct = single.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::Direct).unwrap().clone();
    let range = single.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::RangeSpaceSparse).unwrap().clone();
    assert!(!single.report.fallback && rel(&range, &direct) < 1e-9, "{:e}", rel(&range, &direct));
    let mut twice = ConstraintSet::new();
    twice.add_point_contact_3d(parent, Vec3::new(0.1, 0.0, 0.0), Some("a"));
    twice.add_point_contact_3d(parent, Vec3::new(0.1, 0.0, 0.0), Some("b"));
    twice.bind(&model).unwrap();
    let redundant = twice.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::RangeSpaceSparse).unwrap().clone();
    assert_eq!((twice.report.rank, twice.report.fallback), (3, true));
    assert!(rel(&redundant, &direct) < 1e-9, "{:e}", rel(&redundant, &direct));
}
