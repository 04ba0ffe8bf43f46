//! `World::step_derivatives` on gymnasium's ant standing on its four feet (issue 32, decision
//! record 0090): the MJCF as the benchmark loads it (`scripts/step_derivatives_vs_mujoco.py`,
//! its ankles set inside their ranges), settled onto the floor. Its feet (capsule ends, MJCF
//! margin 1 cm: gap contacts) are landed by the gap's target `−gap/dt` to a gap of rounding
//! and then rest there, sticking, on the kink between that target and the touching one (0);
//! twelve rows of rank eleven (the legs can squeeze the floor). The derivatives take the
//! touching side (`native/derivatives/contact.rs`, `LANDED`); before, the rounding's sign
//! chose, and on the gap side the stuck set has no linearised solution (642 of 900 steps
//! refused).
//!
//! Checks: the derivatives are given on every step of the stance at the engine's defaults;
//! against central differences of the step (`central_differences.rs`, solves to
//! `engine.tolerance` 1e-13 so the step is its set's exact solution) at sampled steps, the
//! velocity and target columns at the state itself (those perturbations leave `q`, hence the
//! kink, alone; each foot's slip stays zero and its set unchanged), the position columns on
//! the touching side (the state with the feet pressed 1 µm into the floor: ±1e-7 of any
//! coordinate moves a foot by less than that, so no foot crosses the kink), where the
//! derivative taken at the kink is the one-sided one.

use karakuri::algorithms;
use karakuri::Model;
use karakuri_sim::{StepDerivatives, World};
use nalgebra::{DMatrix, DVector};
use serde_json::json;

mod central_differences;
use central_differences::{ant, central, qv, rel};

/// The four feet on the floor, each on the kink (a gap or depth of rounding).
fn assert_standing_on_the_kink(w: &World, what: &str) {
    let c = w.contacts();
    assert_eq!(c.len(), 4, "{what}: contacts {c:?}");
    for k in c {
        assert!(k.depth.abs() < 1e-12, "{what}: a foot {} m deep, not landed", k.depth);
        assert!(k.force.z > 0.0, "{what}: a foot carries no load: {k:?}");
    }
}

#[test]
fn the_ant_standing_is_differentiable_on_every_step() {
    // the engine's defaults, as users get them; 3 s (dt 0.01) to land and settle, then 9 s of stance
    let (mut w, _, _) = ant("");
    let (nv, nu) = w.step_derivative_sizes();
    assert_eq!((nv, nu), (14, 8));
    let mut d = StepDerivatives::new(nv, nu);
    for _ in 0..300 {
        w.step().unwrap();
    }
    let steps = 900;
    let mut refused = Vec::new();
    for k in 0..steps {
        w.step().unwrap();
        if k % 100 == 0 {
            assert_standing_on_the_kink(&w, &format!("step {k}"));
        }
        if let Err(e) = w.step_derivatives(&mut d) {
            refused.push((k, e.to_string()));
        }
        assert!(d.a.iter().chain(d.b.iter()).all(|x| x.is_finite()));
    }
    eprintln!("ant standing: derivatives on {} of {steps} steps", steps - refused.len());
    assert!(refused.is_empty(), "refused on {} of {steps} steps, first {:?}", refused.len(), refused.first());
}

/// The state of `w` with its torso moved `dz` along its own z axis (down: the feet pressed in).
fn torso_moved(w: &mut World, model: &Model, order: &[usize], dz: f64) {
    let s = w.snapshot().unwrap();
    let (q, _) = qv(&s);
    let mut dq = DVector::zeros(model.nv);
    // the torso's free joint, after the 8 hinges in the tangent order: position z
    dq[order[10]] = dz;
    let mut moved = s.clone();
    moved.state["state"]["q"] = json!(algorithms::integrate(model, &q, &dq).as_slice());
    w.restore(&moved).unwrap();
}

#[test]
fn the_ant_standing_matches_central_differences_on_the_touching_side() {
    let (mut w, model, order) = ant("engine: {tolerance: 1e-13, max_iterations: 20000}");
    let (nv, nu) = w.step_derivative_sizes();
    let targets: Vec<(String, f64)> = w.one_dof_joints().iter().map(|j| (j.clone(), 0.0)).collect();
    let id = DMatrix::<f64>::identity(2 * nv, 2 * nv);
    let mut d = StepDerivatives::new(nv, nu);
    let mut done = 0;
    for sample in [300, 450, 600] {
        while done < sample {
            w.step().unwrap();
            done += 1;
        }
        let what = format!("ant after {sample} steps");
        assert_standing_on_the_kink(&w, &what);
        w.step_derivatives(&mut d).unwrap();
        let base = w.snapshot().unwrap();
        // the velocity and target columns at the state
        let (a, b) = central(&mut w, &model, &order, &targets, 1e-7, 1e-6);
        let scale = (&a - &id).amax();
        let ev = (d.a.columns(nv, nv) - a.columns(nv, nv)).amax() / scale;
        let eb = rel(&d.b, &b);
        // the position columns there straddle the kink: the central differences average its
        // two sides (the gap side lands a lifted foot, the touching side keeps a pressed one)
        let eq_kink = (d.a.columns(0, nv) - a.columns(0, nv)).amax() / scale;
        // ...and on the touching side
        torso_moved(&mut w, &model, &order, -1e-6);
        let (a, _) = central(&mut w, &model, &order, &targets, 1e-7, 1e-6);
        let eq = (d.a.columns(0, nv) - a.columns(0, nv)).amax() / (&a - &id).amax();
        w.restore(&base).unwrap();
        eprintln!("{what}: max |A − I| {scale:.3e}; velocity columns {ev:.2e}, B {eb:.2e} (max |B| {:.2e}); position columns on the touching side {eq:.2e}, across the kink {eq_kink:.2e}", b.amax());
        assert!(ev < 1e-6, "{what}: velocity columns off by {ev:e}");
        assert!(eb < 1e-5, "{what}: B off by {eb:e}");
        assert!(eq < 1e-5, "{what}: position columns off by {eq:e} on the touching side");
        assert!(eq_kink > 0.1, "{what}: the position columns met the differences across the kink ({eq_kink:e}): the feet are not on it");
    }
}
