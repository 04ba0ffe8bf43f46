//! Hybrid dynamics (both methods) against ABA, RNEA and a dense partitioned solve on random
//! trees and on the reference robots; the branch-induced LᵀDL helpers against dense algebra.

mod common;

use common::{random_state, random_tree};
use karakuri::algorithms::hybrid::{hybrid_dynamics, HybridMethod, HybridWorkspace};
use karakuri::algorithms::*;
use karakuri::linalg::ltdl;
use karakuri::{Data, Model};
use nalgebra::{DMatrix, DVector};
use std::cell::Cell;

// ---- a counting allocator, per thread (tests run in parallel) ------------------------------

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        std::alloc::System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        std::alloc::System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> usize {
    ALLOCATIONS.with(|c| c.get())
}

// ---- helpers --------------------------------------------------------------------------------

const METHODS: [HybridMethod; 2] = [HybridMethod::ArticulatedBody, HybridMethod::Crba];

fn models() -> Vec<Model> {
    let mut v = vec![];
    for seed in 0..8 {
        v.push(random_tree(seed, 12, seed % 2 == 0));
    }
    v.push(random_tree(100, 30, true));
    v.push(random_tree(101, 40, false));
    v
}

fn rel_err(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    (a - b).amax() / (1.0 + b.amax())
}

/// The dense reference: M qdd + nle = tau partitioned by dof, solved with a dense Cholesky.
fn dense_hybrid(model: &Model, q: &DVector<f64>, v: &DVector<f64>, known: &DVector<f64>, is_forward: &[bool]) -> (DVector<f64>, DVector<f64>) {
    let mut data = Data::new(model);
    let m = mass_matrix(model, &mut data, q).clone();
    let nle = nonlinear_effects(model, &mut data, q, v).clone();
    let fwd: Vec<usize> = (0..model.nv).filter(|&k| is_forward[model.dof_joint[k]]).collect();
    let inv: Vec<usize> = (0..model.nv).filter(|&k| !is_forward[model.dof_joint[k]]).collect();
    let mut qdd = known.clone();
    for &k in &fwd {
        qdd[k] = 0.0;
    }
    if !fwd.is_empty() {
        // H11 qdd1 = tau1 - nle1 - H12 qdd2
        let h11 = DMatrix::from_fn(fwd.len(), fwd.len(), |r, c| m[(fwd[r], fwd[c])]);
        let rhs = DVector::from_fn(fwd.len(), |r, _| {
            known[fwd[r]] - nle[fwd[r]] - inv.iter().map(|&c| m[(fwd[r], c)] * known[c]).sum::<f64>()
        });
        let x = h11.cholesky().expect("H11 positive definite").solve(&rhs);
        for (r, &k) in fwd.iter().enumerate() {
            qdd[k] = x[r];
        }
    }
    let mut tau = &m * &qdd + &nle;
    for &k in &fwd {
        tau[k] = known[k];
    }
    (qdd, tau)
}

fn random_mask(model: &Model, seed: u64) -> Vec<bool> {
    let mut rng = SplitMix64::new(seed);
    let mut mask: Vec<bool> = (0..model.njoints).map(|_| rng.uniform() < 0.5).collect();
    mask[0] = false;
    mask
}

// ---- random trees ---------------------------------------------------------------------------

#[test]
fn all_forward_is_forward_dynamics() {
    for model in models() {
        let mut data = Data::new(&model);
        let mut ws = HybridWorkspace::new(&model);
        let mask = vec![true; model.njoints];
        for s in 0..3 {
            let (q, v, tau) = random_state(&model, s);
            let aba = forward_dynamics(&model, &mut data, &q, &v, &tau).clone();
            for method in METHODS {
                let (qdd, t) = hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &tau, &mask, method);
                let e = rel_err(qdd, &aba);
                assert!(e < 1e-9, "{} {method:?}: qdd - ABA = {e:e}", model.name);
                assert_eq!(t, &tau);
            }
        }
    }
}

#[test]
fn all_inverse_is_inverse_dynamics() {
    for model in models() {
        let mut data = Data::new(&model);
        let mut ws = HybridWorkspace::new(&model);
        let mask = vec![false; model.njoints];
        for s in 0..3 {
            let (q, v, a) = random_state(&model, s);
            let rnea = inverse_dynamics(&model, &mut data, &q, &v, &a).clone();
            for method in METHODS {
                let (qdd, tau) = hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &a, &mask, method);
                let e = rel_err(tau, &rnea);
                assert!(e < 1e-12, "{} {method:?}: tau - RNEA = {e:e}", model.name);
                assert_eq!(qdd, &a);
            }
        }
    }
}

#[test]
fn random_masks_match_dense_partitioned_solve() {
    let mut worst = [0.0f64; 3];
    for model in models() {
        let mut data = Data::new(&model);
        let mut ws = HybridWorkspace::new(&model);
        for s in 0..6 {
            let (q, v, known) = random_state(&model, 10 + s);
            let mut mask = random_mask(&model, 1000 * s + model.njoints as u64);
            if s == 0 {
                // only the root forward: the fast path of floating robots
                mask.iter_mut().for_each(|f| *f = false);
                mask[1] = true;
            }
            let (qdd_ref, tau_ref) = dense_hybrid(&model, &q, &v, &known, &mask);
            let mut results = vec![];
            for (m, method) in METHODS.into_iter().enumerate() {
                let (qdd, tau) = hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &mask, method);
                let (eq, et) = (rel_err(qdd, &qdd_ref), rel_err(tau, &tau_ref));
                worst[m] = worst[m].max(eq).max(et);
                assert!(eq < 1e-9 && et < 1e-9, "{} {method:?} mask {mask:?}: qdd {eq:e}, tau {et:e}", model.name);
                results.push((qdd.clone(), tau.clone()));
            }
            let e = rel_err(&results[0].0, &results[1].0).max(rel_err(&results[0].1, &results[1].1));
            worst[2] = worst[2].max(e);
            assert!(e < 1e-9, "{}: ABA route vs CRBA route {e:e}", model.name);
        }
    }
    println!("max rel error vs dense: articulated-body {:.2e}, crba {:.2e}; between methods {:.2e}", worst[0], worst[1], worst[2]);
}

#[test]
fn hybrid_dynamics_does_not_allocate() {
    let model = random_tree(7, 20, true);
    let mut data = Data::new(&model);
    let mut ws = HybridWorkspace::new(&model);
    let (q, v, known) = random_state(&model, 1);
    let mask = random_mask(&model, 3);
    let before = allocations();
    std::hint::black_box(vec![0u8; 16]);
    assert!(allocations() > before, "the counting allocator counts");
    for method in METHODS {
        hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &mask, method);
        let before = allocations();
        hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &mask, method);
        assert_eq!(allocations(), before, "{method:?} allocated");
    }
}

/// A floating tree (free-flyer `root_joint` and `n` joints below it) beside a second free-flyer
/// tree and a revolute chain, all children of the universe.
fn forest(seed: u64, n: usize) -> Model {
    use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
    use karakuri::spatial::{exp3, Inertia, Mat3, Se3, Vec3};
    let mut rng = SplitMix64::new(seed);
    let mut b = ModelBuilder::new(&format!("forest_{seed}"));
    let inertia = |rng: &mut SplitMix64| {
        let d = Vec3::new(rng.range(0.01, 0.1), rng.range(0.01, 0.1), rng.range(0.01, 0.1));
        let com = Vec3::new(rng.range(-0.2, 0.2), rng.range(-0.2, 0.2), rng.range(-0.2, 0.2));
        Inertia::new(rng.range(0.2, 3.0), com, Mat3::from_diagonal(&Vec3::new(d.y + d.z, d.x + d.z, d.x + d.y)))
    };
    let placement = |rng: &mut SplitMix64| {
        let w = Vec3::new(rng.range(-1.5, 1.5), rng.range(-1.5, 1.5), rng.range(-1.5, 1.5));
        Se3::new(exp3(&w), Vec3::new(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5)))
    };
    let pre = b.add_joint(JointId::UNIVERSE, "pre", JointType::Revolute { axis: Axis::Y }, placement(&mut rng)).unwrap();
    b.add_body(pre, "pre_body", inertia(&mut rng)).unwrap();
    let root = b.add_joint(JointId::UNIVERSE, "root_joint", JointType::FreeFlyer, Se3::identity()).unwrap();
    b.add_body(root, "base", inertia(&mut rng)).unwrap();
    let other = b.add_joint(JointId::UNIVERSE, "other_root", JointType::FreeFlyer, placement(&mut rng)).unwrap();
    b.add_body(other, "other_base", inertia(&mut rng)).unwrap();
    let mut ids = vec![root, other, pre];
    for k in 0..n {
        let parent = ids[(rng.next_u64() % ids.len() as u64) as usize];
        let kind = match k % 5 {
            0 => JointType::Revolute { axis: Axis::X },
            1 => JointType::Revolute { axis: Axis::Z },
            2 => JointType::Prismatic { axis: Axis::Y },
            3 => JointType::Revolute { axis: Axis::Unaligned(Vec3::new(0.6, 0.0, -0.8)) },
            _ => JointType::Spherical,
        };
        let j = b.add_joint(parent, &format!("j{k}"), kind, placement(&mut rng)).unwrap();
        b.add_body(j, &format!("b{k}"), inertia(&mut rng)).unwrap();
        ids.push(j);
    }
    b.build().unwrap()
}

/// The floating-base fast path (one forward free-flyer child of the universe, everything else
/// inverse; `karakuri bench`'s `hybrid`) against the dense solve and the CRBA route: random
/// floating trees, forests with other trees beside the floating one, the floating reference
/// robots. Also: two forward free-flyers, or a forward free-flyer that is not a root, take the
/// general route and agree too.
#[test]
fn floating_base_fast_path_matches_dense_solve() {
    use karakuri::io::urdf;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let mut cases: Vec<Model> = (0..6).map(|s| random_tree(200 + s, 15 + 5 * s as usize, true)).collect();
    cases.extend((0..4).map(|s| forest(300 + s, 20)));
    for name in ["talos_reduced", "anymal", "solo12"] {
        cases.push(urdf::load(dir.join(format!("{name}.urdf")), urdf::Root::FreeFlyer).unwrap());
    }
    let mut worst = 0.0f64;
    for model in &cases {
        let mut data = Data::new(model);
        let mut ws = HybridWorkspace::new(model);
        let free: Vec<usize> =
            (1..model.njoints).filter(|&j| model.joint_types[j] == karakuri::model::JointType::FreeFlyer).collect();
        let mut masks = vec![];
        for &j in &free {
            let mut mask = vec![false; model.njoints];
            mask[j] = true;
            masks.push(mask);
        }
        if free.len() > 1 {
            let mut mask = vec![false; model.njoints];
            free.iter().for_each(|&j| mask[j] = true);
            masks.push(mask);
        }
        for mask in &masks {
            for s in 0..4 {
                let (q, v, known) = random_state(model, 50 + s);
                let (qdd_ref, tau_ref) = dense_hybrid(model, &q, &v, &known, mask);
                for method in METHODS {
                    let (qdd, tau) = hybrid_dynamics(model, &mut data, &mut ws, &q, &v, &known, mask, method);
                    let (eq, et) = (rel_err(qdd, &qdd_ref), rel_err(tau, &tau_ref));
                    worst = worst.max(eq).max(et);
                    assert!(eq < 1e-9 && et < 1e-9, "{} {method:?} mask {mask:?}: qdd {eq:e}, tau {et:e}", model.name);
                }
                // placements and velocities are left in data as by the general route
                let mut check = Data::new(model);
                forward_kinematics_velocity(model, &mut check, &q, &v);
                let (x, x_ref) = (data.joint_placements().unwrap(), check.joint_placements().unwrap());
                let (vel, vel_ref) = (data.joint_velocities().unwrap(), check.joint_velocities().unwrap());
                for j in 1..model.njoints {
                    assert!(x[j].max_abs_diff(&x_ref[j]) < 1e-12, "{}: placement {j}", model.name);
                    assert!((vel[j] - vel_ref[j]).amax() < 1e-12, "{}: velocity {j}", model.name);
                }
            }
        }
    }
    println!("floating-base masks: max rel error vs dense {worst:.2e}");
}

#[test]
fn floating_base_fast_path_does_not_allocate() {
    let model = random_tree(9, 25, true);
    let mut data = Data::new(&model);
    let mut ws = HybridWorkspace::new(&model);
    let (q, v, known) = random_state(&model, 2);
    let mut mask = vec![false; model.njoints];
    mask[1] = true;
    hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &mask, HybridMethod::ArticulatedBody);
    let before = allocations();
    hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &mask, HybridMethod::ArticulatedBody);
    assert_eq!(allocations(), before, "the floating-base path allocated");
}

// ---- branch-induced LᵀDL helpers ------------------------------------------------------------

/// Dense unit lower L and diagonal D from compact factors.
fn dense_factors(f: &ltdl::Factorization) -> (DMatrix<f64>, DMatrix<f64>) {
    let n = f.n();
    let mut l = DMatrix::identity(n, n);
    for k in 0..n {
        let (anc, lk) = f.row(k);
        for (&i, &x) in anc.iter().zip(lk) {
            l[(k, i)] = x;
        }
    }
    (l, DMatrix::from_fn(n, n, |r, c| if r == c { f.d(r) } else { 0.0 }))
}

#[test]
fn ltdl_factor_products_and_many_rhs() {
    for model in models() {
        let n = model.nv;
        let mut data = Data::new(&model);
        let (q, _, _) = random_state(&model, 21);
        let m = mass_matrix(&model, &mut data, &q).clone();
        let f = factorize_mass_matrix(&mut data).unwrap();
        // dense L (unit lower) and D from the factors
        let (l, d) = dense_factors(f);
        assert!((l.transpose() * &d * &l - &m).amax() < 1e-10 * (1.0 + m.amax()));
        let mut rng = SplitMix64::new(5);
        let x = rng.vector(n);
        let check = |f: &dyn Fn(&mut [f64]), dense: DVector<f64>, what: &str| {
            let mut y = x.clone();
            f(y.as_mut_slice());
            let e = rel_err(&y, &dense);
            assert!(e < 1e-11, "{}: {what} {e:e}", model.name);
        };
        check(&|y| f.mul_l(y), &l * &x, "L x");
        check(&|y| f.mul_lt(y), l.transpose() * &x, "Lᵀ x");
        check(&|y| f.mul_d(y), &d * &x, "D x");
        check(&|y| f.mul_sqrt_d(y), d.map(f64::sqrt) * &x, "D^½ x");
        check(
            &|y| f.mul_inv_sqrt_d(y),
            DVector::from_fn(n, |k, _| x[k] / f.d(k).sqrt()),
            "D^-½ x",
        );
        check(&|y| f.mul(y), &m * &x, "M x");
        // many right-hand sides: M X = B and the Delassus factor of a random G (3 x nv)
        let chol = m.clone().cholesky().unwrap();
        let b = DMatrix::from_fn(n, 4, |_, _| rng.range(-1.0, 1.0));
        let mut xs = b.clone();
        f.solve_columns(&mut xs);
        assert!((&xs - chol.solve(&b)).amax() < 1e-9 * (1.0 + xs.amax()));
        let g = DMatrix::from_fn(3, n, |_, _| rng.range(-1.0, 1.0));
        let mut y = g.transpose();
        f.half_solve_columns(&mut y);
        let delassus = y.transpose() * &y;
        let dense = &g * chol.solve(&g.transpose());
        assert!((&delassus - &dense).amax() < 1e-9 * (1.0 + dense.amax()), "{}: Delassus", model.name);
    }
}

/// The pattern-generic kernels on the block of the forward dofs: no fill-in off the
/// contracted tree, and the solve equals the dense one.
#[test]
fn ltdl_with_parents_on_a_sub_block() {
    for model in models() {
        let mut data = Data::new(&model);
        let (q, _, _) = random_state(&model, 22);
        let m = mass_matrix(&model, &mut data, &q).clone();
        let mask = random_mask(&model, 77);
        let dofs: Vec<usize> = (0..model.nv).filter(|&k| mask[model.dof_joint[k]]).collect();
        let n1 = dofs.len();
        // contracted parents: the nearest selected dof up the chain
        let parent: Vec<usize> = dofs
            .iter()
            .map(|&k| {
                let mut j = model.dof_parent[k];
                while j != usize::MAX && !mask[model.dof_joint[j]] {
                    j = model.dof_parent[j];
                }
                if j == usize::MAX { usize::MAX } else { dofs.iter().position(|&d| d == j).unwrap() }
            })
            .collect();
        let h = DMatrix::from_fn(n1, n1, |r, c| m[(dofs[r], dofs[c])]);
        let mut f = ltdl::Factorization::new(&model);
        f.set_parents(&parent);
        f.factorize(&h);
        let (l, d) = dense_factors(&f);
        assert!((l.transpose() * &d * &l - &h).amax() < 1e-10 * (1.0 + h.amax()));
        for r in 0..n1 {
            for c in 0..r {
                let mut j = parent[r];
                while j != usize::MAX && j != c {
                    j = parent[j];
                }
                if j != c {
                    assert_eq!(h[(r, c)], 0.0, "H11 nonzero off the contracted pattern");
                    assert_eq!(l[(r, c)], 0.0, "fill-in at ({r}, {c})");
                }
            }
        }
        let mut rng = SplitMix64::new(9);
        let b = rng.vector(n1);
        let mut x = b.clone();
        f.solve(x.as_mut_slice());
        if n1 > 0 {
            let dense = h.cholesky().unwrap().solve(&b);
            assert!(rel_err(&x, &dense) < 1e-10);
        }
    }
}

// ---- reference robots (Pinocchio 4.1 exports) -----------------------------------------------

/// Every `tests/data/*.json` sample's `hybrid` entry: joints mapped by name, both methods.
#[test]
fn reference_robots_match_pinocchio() {
    use karakuri::io::urdf;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no reference files in {}", dir.display());
    let as_vec = |x: &serde_json::Value| -> Vec<f64> { x.as_array().unwrap().iter().map(|y| y.as_f64().unwrap()).collect() };
    for path in paths {
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let root = match json["source"]["root_joint"].as_str().unwrap() {
            "free_flyer" => urdf::Root::FreeFlyer,
            _ => urdf::Root::Fixed,
        };
        let model = urdf::load(path.with_extension("urdf"), root).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        // (our joint, idx_q_plain, idx_v in the reference)
        let joints: Vec<(usize, usize, usize)> = json["model"]["joints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                let jname = j["name"].as_str().unwrap();
                let id = model.joint_id(jname).unwrap_or_else(|| panic!("{name}: no joint {jname}")).0;
                assert_eq!(model.nqs[id], j["nq_plain"].as_u64().unwrap() as usize, "{name} {jname}: nq");
                assert_eq!(model.nvs[id], j["nv"].as_u64().unwrap() as usize, "{name} {jname}: nv");
                (id, j["idx_q_plain"].as_u64().unwrap() as usize, j["idx_v"].as_u64().unwrap() as usize)
            })
            .collect();
        assert_eq!(joints.len() + 1, model.njoints, "{name}: joint count");
        let mut data = Data::new(&model);
        let mut ws = HybridWorkspace::new(&model);
        let mut worst = [0.0f64; 2];
        for sample in json["samples"].as_array().unwrap() {
            let q_plain = as_vec(&sample["q_plain"]);
            let h = &sample["hybrid"];
            let (known_ref, qdd_ref, tau_ref) = (as_vec(&h["known"]), as_vec(&h["qdd"]), as_vec(&h["tau"]));
            let v_ref = as_vec(&sample["v"]);
            let mut q = DVector::zeros(model.nq);
            let (mut v, mut known, mut qdd_exp, mut tau_exp) =
                (DVector::zeros(model.nv), DVector::zeros(model.nv), DVector::zeros(model.nv), DVector::zeros(model.nv));
            for &(id, iq_ref, iv_ref) in &joints {
                let (iq, iv) = (model.idx_q[id], model.idx_v[id]);
                for k in 0..model.nqs[id] {
                    q[iq + k] = q_plain[iq_ref + k];
                }
                for k in 0..model.nvs[id] {
                    v[iv + k] = v_ref[iv_ref + k];
                    known[iv + k] = known_ref[iv_ref + k];
                    qdd_exp[iv + k] = qdd_ref[iv_ref + k];
                    tau_exp[iv + k] = tau_ref[iv_ref + k];
                }
            }
            let mut is_forward = vec![false; model.njoints];
            for jn in h["forward_joints"].as_array().unwrap() {
                is_forward[model.joint_id(jn.as_str().unwrap()).unwrap().0] = true;
            }
            for (m, method) in METHODS.into_iter().enumerate() {
                let (qdd, tau) = hybrid_dynamics(&model, &mut data, &mut ws, &q, &v, &known, &is_forward, method);
                let (eq, et) = (rel_err(qdd, &qdd_exp), rel_err(tau, &tau_exp));
                worst[m] = worst[m].max(eq).max(et);
                assert!(eq < 1e-7 && et < 1e-7, "{name} {method:?}: qdd {eq:e}, tau {et:e}");
            }
        }
        println!("{name}: max rel error vs Pinocchio: articulated-body {:.2e}, crba {:.2e}", worst[0], worst[1]);
    }
}
