//! Central differences of the step itself, shared by the step-derivative tests: the state set
//! through a snapshot (its `q`, `v` replaced), one step, the result read back, in the tangent
//! space of the documented order (`karakuri_sim::derivatives`).

#![allow(dead_code)]

use karakuri::algorithms;
use karakuri::Model;
use karakuri_sim::{NativeEngine, Scene, Snapshot, World};
use nalgebra::{DMatrix, DVector};
use serde_json::json;

/// A world of `text` (as if read from `tests/FILE`) and what the check needs: the world model and its tangent order
/// (the documented one: one-dof joints in `one_dof_joints` order, then the other joints'
/// dofs in model order).
pub fn world(text: &str, file: &str) -> (World, Model, Vec<usize>) {
    let scene = Scene::from_str(text, &format!("{}/tests/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let engine = NativeEngine::new(&scene).unwrap();
    let sm = engine.sim_model();
    let model = sm.model.clone();
    let mut order: Vec<usize> = sm.one_dof.iter().map(|&j| model.idx_v[j]).collect();
    for j in 1..model.njoints {
        if model.nvs[j] != 1 {
            order.extend(model.idx_v[j]..model.idx_v[j] + model.nvs[j]);
        }
    }
    let w = World::new(scene).unwrap();
    assert_eq!(w.one_dof_joints(), &sm.one_dof_names[..]);
    (w, model, order)
}

pub fn qv(s: &Snapshot) -> (DVector<f64>, DVector<f64>) {
    let read = |k: &str| {
        let xs = s.state["state"][k].as_array().unwrap();
        DVector::from_iterator(xs.len(), xs.iter().map(|x| x.as_f64().unwrap()))
    };
    (read("q"), read("v"))
}

/// The step from `(q, v)` (the rest of `base`'s state), as `(q⁺, v⁺)`.
pub fn step_from(w: &mut World, base: &Snapshot, q: &DVector<f64>, v: &DVector<f64>) -> (DVector<f64>, DVector<f64>) {
    let mut s = base.clone();
    s.state["state"]["q"] = json!(q.as_slice());
    s.state["state"]["v"] = json!(v.as_slice());
    w.restore(&s).unwrap();
    w.step().unwrap();
    qv(&w.snapshot().unwrap())
}

/// `(δq⁺; δv⁺)` of `(q1, v1)` from `(q0, v0)`, in the tangent order.
pub fn delta(model: &Model, order: &[usize], (q0, v0): &(DVector<f64>, DVector<f64>), (q1, v1): &(DVector<f64>, DVector<f64>)) -> DVector<f64> {
    let n = model.nv;
    let dq = algorithms::difference(model, q0, q1);
    let dv = v1 - v0;
    DVector::from_iterator(2 * n, (0..2 * n).map(|i| if i < n { dq[order[i]] } else { dv[order[i - n]] }))
}

/// A and B by central differences at the world's state; `targets` the actuated joints' targets
/// now (Value targets, in `actuator` order), perturbed by `eps_u`.
pub fn central(w: &mut World, model: &Model, order: &[usize], targets: &[(String, f64)], eps: f64, eps_u: f64) -> (DMatrix<f64>, DMatrix<f64>) {
    let n = model.nv;
    let base = w.snapshot().unwrap();
    let (q, v) = qv(&base);
    let nominal = step_from(w, &base, &q, &v);
    let mut a = DMatrix::zeros(2 * n, 2 * n);
    for c in 0..2 * n {
        let mut col = DVector::zeros(2 * n);
        for sign in [1.0, -1.0] {
            let (mut dq, mut v1) = (DVector::zeros(n), v.clone());
            if c < n {
                dq[order[c]] = sign * eps;
            } else {
                v1[order[c - n]] += sign * eps;
            }
            let q1 = algorithms::integrate(model, &q, &dq);
            let out = step_from(w, &base, &q1, &v1);
            col += delta(model, order, &nominal, &out) * (sign / (2.0 * eps));
        }
        a.set_column(c, &col);
    }
    let mut b = DMatrix::zeros(2 * n, targets.len());
    for (c, (joint, x)) in targets.iter().enumerate() {
        let mut col = DVector::zeros(2 * n);
        for sign in [1.0, -1.0] {
            w.restore(&base).unwrap();
            w.set_joint_target(joint, x + sign * eps_u).unwrap();
            w.step().unwrap();
            let out = qv(&w.snapshot().unwrap());
            col += delta(model, order, &nominal, &out) * (sign / (2.0 * eps_u));
        }
        b.set_column(c, &col);
    }
    w.restore(&base).unwrap();
    (a, b)
}

/// The largest entry of `x − y` over the largest of `y` (A's: of `A − I`).
pub fn rel(x: &DMatrix<f64>, y: &DMatrix<f64>) -> f64 {
    let scale = y.amax().max(1e-300);
    (x - y).amax() / scale
}

/// gymnasium's ant as `scripts/step_derivatives_vs_mujoco.py` sets it up (its ankles inside their
/// ranges), with `engine` (a scene line, or empty for the defaults).
pub fn ant(engine: &str) -> (World, Model, Vec<usize>) {
    let xml = format!("{}/../../tests/data/mjcf/gymnasium/ant.xml", env!("CARGO_MANIFEST_DIR"));
    let text = format!("name: ant\n{engine}\nrobots: [{{name: r, mjcf: {xml}}}]\n");
    let (mut w, model, order) = world(&text, "ant.yaml");
    let names = w.one_dof_joints().to_vec();
    let mut q: Vec<f64> = names.iter().map(|n| w.joint_position(n).unwrap()).collect();
    for (n, x) in [("ankle_1", 0.87), ("ankle_2", -0.87), ("ankle_3", -0.87), ("ankle_4", 0.87)] {
        q[names.iter().position(|m| *m == format!("r/{n}")).unwrap()] = x;
    }
    w.set_joint_positions(&q).unwrap();
    (w, model, order)
}
