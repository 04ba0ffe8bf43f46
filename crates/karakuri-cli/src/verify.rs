//! `karakuri verify MODEL.urdf REFERENCE.json`: recompute every quantity of a Pinocchio
//! reference file (format `karakuri-pinocchio-reference/1`, see `../shared/reference/README.md`)
//! and print the largest errors per quantity.

use anyhow::{anyhow, bail, Context, Result};
use karakuri::algorithms::*;
use karakuri::io::urdf::Root;
use karakuri::constraints::{ConstraintSet, Method};
use karakuri::spatial::{Se3, Vec3};
use karakuri::{Data, JointId, Model};
use nalgebra::{DMatrix, DVector};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// Tolerance for quantities evaluated by a recursion (relative, absolute below 1).
const TOL_EVALUATED: f64 = 1e-9;
/// Tolerance for quantities that solve a linear system (ill-conditioned mass matrices).
const TOL_SOLVED: f64 = 1e-7;

/// The keys of a sample, in the order they are reported; inputs are not compared.
const KEYS: &[&str] = &[
    "oMi", "v_local", "a_local", "rnea", "nle", "gravity_torque", "M", "aba", "com", "kinetic_energy",
    "potential_energy", "J_last_joint_lwa", "hybrid", "constrained", "impulse", "derivatives",
];
const INPUTS: &[&str] = &["q", "q_plain", "v", "a", "tau"];

fn tolerance(key: &str) -> f64 {
    match key {
        "aba" | "hybrid" | "constrained" | "impulse" | "derivatives" => TOL_SOLVED,
        _ => TOL_EVALUATED,
    }
}

/// Largest errors of one quantity over all samples.
#[derive(Default)]
struct Row {
    count: usize,
    max_abs: f64,
    max_scaled: f64,
    unsupported: Option<String>,
}

impl Row {
    /// Records computed-vs-reference pairs: abs error and error scaled by max(1, |ref|).
    fn add(&mut self, ours: f64, reference: f64) {
        let abs = (ours - reference).abs();
        let scaled = if abs.is_nan() { f64::INFINITY } else { abs / reference.abs().max(1.0) };
        self.count += 1;
        self.max_abs = self.max_abs.max(if abs.is_nan() { f64::INFINITY } else { abs });
        self.max_scaled = self.max_scaled.max(scaled);
    }
}

/// Maps the reference's joint and dof order to the model's.
pub struct Mapping {
    /// Our joint of each reference joint (reference id k+1 = index k).
    joints: Vec<JointId>,
    /// Our dof of each reference dof.
    dofs: Vec<usize>,
    /// (our q start, reference q_plain start, size) per joint.
    q_plain: Vec<(usize, usize, usize)>,
}

impl Mapping {
    fn new(model: &Model, reference: &Value) -> Result<Mapping> {
        let joints_json = reference["model"]["joints"].as_array().ok_or_else(|| anyhow!("reference has no model.joints"))?;
        let nv_ref = reference["model"]["nv"].as_u64().ok_or_else(|| anyhow!("reference has no model.nv"))? as usize;
        if nv_ref != model.nv {
            bail!("the reference has nv = {nv_ref}, the model {}: wrong URDF or root joint?", model.nv);
        }
        if joints_json.len() + 1 != model.njoints {
            bail!("the reference has {} joints, the model {}", joints_json.len(), model.njoints - 1);
        }
        let mut m = Mapping { joints: vec![], dofs: vec![usize::MAX; nv_ref], q_plain: vec![] };
        for j in joints_json {
            let name = j["name"].as_str().unwrap_or("?");
            let ours = model.joint_id(name).ok_or_else(|| anyhow!("joint '{name}' of the reference is not in the model"))?;
            let (iv, nv) = (field(j, "idx_v")?, field(j, "nv")?);
            if nv != model.nvs[ours.0] {
                bail!("joint '{name}': {nv} dofs in the reference, {} in the model", model.nvs[ours.0]);
            }
            for k in 0..nv {
                m.dofs[iv + k] = model.idx_v[ours.0] + k;
            }
            let (iqp, nqp) = (field(j, "idx_q_plain")?, field(j, "nq_plain")?);
            if nqp != model.nqs[ours.0] {
                bail!("joint '{name}': {nqp} plain configuration variables in the reference, {} in the model", model.nqs[ours.0]);
            }
            m.q_plain.push((model.idx_q[ours.0], iqp, nqp));
            m.joints.push(ours);
        }
        Ok(m)
    }

    fn q(&self, model: &Model, sample: &Value) -> Result<DVector<f64>> {
        let q_plain = vector(&sample["q_plain"]).context("sample.q_plain")?;
        let mut q = DVector::zeros(model.nq);
        for &(ours, theirs, n) in &self.q_plain {
            q.rows_mut(ours, n).copy_from(&DVector::from_row_slice(&q_plain[theirs..theirs + n]));
        }
        Ok(q)
    }

    /// A reference-ordered dof vector in our order.
    fn to_ours(&self, v: &[f64]) -> DVector<f64> {
        let mut out = DVector::zeros(v.len());
        for (k, &x) in v.iter().enumerate() {
            out[self.dofs[k]] = x;
        }
        out
    }
}

fn field(j: &Value, key: &str) -> Result<usize> {
    j[key].as_u64().map(|x| x as usize).ok_or_else(|| anyhow!("reference joint has no '{key}'"))
}

fn vector(v: &Value) -> Result<Vec<f64>> {
    v.as_array()
        .ok_or_else(|| anyhow!("expected an array"))?
        .iter()
        .map(|x| x.as_f64().ok_or_else(|| anyhow!("expected a number")))
        .collect()
}

fn matrix(v: &Value) -> Result<Vec<Vec<f64>>> {
    v.as_array().ok_or_else(|| anyhow!("expected an array of rows"))?.iter().map(vector).collect()
}

pub fn run(model_path: &Path, reference_path: &Path, only: Option<&[String]>) -> Result<ExitCode> {
    let text = std::fs::read_to_string(reference_path)
        .with_context(|| format!("reading {}", reference_path.display()))?;
    let reference: Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", reference_path.display()))?;
    let root = match reference["source"]["root_joint"].as_str() {
        Some("free_flyer") => Root::FreeFlyer,
        _ => Root::Fixed,
    };
    let model = crate::load_urdf(model_path, root)?;
    let rows = verify(&model, &reference, only)?;
    println!("{} vs {} ({} samples)", model_path.display(), reference_path.display(),
        reference["samples"].as_array().map_or(0, |s| s.len()));
    println!("{:<18} {:>7} {:>12} {:>12} {:>9}  result", "quantity", "values", "max abs", "max rel", "tol");
    let mut failed = 0;
    for (key, row) in &rows {
        let tol = tolerance(key);
        match &row.unsupported {
            Some(why) => {
                let requested = only.is_some();
                println!("{:<18} {:>7} {:>12} {:>12} {:>9.0e}  {}", key, "-", "-", "-", tol,
                    if requested { format!("FAIL ({why})") } else { format!("skipped ({why})") });
                if requested {
                    failed += 1;
                }
            }
            None => {
                let ok = row.max_scaled <= tol && row.count > 0;
                println!("{:<18} {:>7} {:>12.3e} {:>12.3e} {:>9.0e}  {}", key, row.count, row.max_abs, row.max_scaled, tol,
                    if ok { "ok" } else { "FAIL" });
                if !ok {
                    failed += 1;
                }
            }
        }
    }
    if failed > 0 {
        println!("{failed} quantities outside tolerance");
        Ok(ExitCode::FAILURE)
    } else {
        println!("all quantities within tolerance");
        Ok(ExitCode::SUCCESS)
    }
}

/// Compares every requested quantity over all samples.
fn verify(model: &Model, reference: &Value, only: Option<&[String]>) -> Result<BTreeMap<String, Row>> {
    let map = Mapping::new(model, reference)?;
    let samples = reference["samples"].as_array().ok_or_else(|| anyhow!("reference has no samples"))?;
    let first = samples.first().ok_or_else(|| anyhow!("reference has no samples"))?;
    let keys: Vec<String> = match only {
        Some(keys) => {
            for k in keys {
                if !KEYS.contains(&k.as_str()) && !INPUTS.contains(&k.as_str()) {
                    bail!("unknown key '{k}' in --only (known: {})", KEYS.join(","));
                }
            }
            keys.to_vec()
        }
        None => KEYS.iter().filter(|k| first.get(**k).is_some()).map(|k| k.to_string()).collect(),
    };
    let mut rows: BTreeMap<String, Row> = keys.iter().filter(|k| !INPUTS.contains(&k.as_str())).map(|k| (k.clone(), Row::default())).collect();
    let mut data = Data::new(model);
    let last_joint = reference["model"]["last_joint"].as_str().ok_or_else(|| anyhow!("reference has no model.last_joint"))?;
    let last = model.joint_id(last_joint).ok_or_else(|| anyhow!("last joint '{last_joint}' is not in the model"))?;
    for (s, sample) in samples.iter().enumerate() {
        let q = map.q(model, sample)?;
        let v = map.to_ours(&vector(&sample["v"])?);
        let a = map.to_ours(&vector(&sample["a"])?);
        let tau = map.to_ours(&vector(&sample["tau"])?);
        for (key, row) in rows.iter_mut() {
            if row.unsupported.is_some() {
                continue;
            }
            let expected = &sample[key.as_str()];
            if expected.is_null() {
                bail!("sample {s} has no '{key}'");
            }
            compare(model, &mut data, &map, key, expected, &q, &v, &a, &tau, last, row)
                .with_context(|| format!("sample {s}, quantity {key}"))?;
        }
    }
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn compare(
    model: &Model,
    data: &mut Data,
    map: &Mapping,
    key: &str,
    expected: &Value,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    tau: &DVector<f64>,
    last: JointId,
    row: &mut Row,
) -> Result<()> {
    let dof_vector = |row: &mut Row, ours: &DVector<f64>| -> Result<()> {
        for (k, r) in vector(expected)?.iter().enumerate() {
            row.add(ours[map.dofs[k]], *r);
        }
        Ok(())
    };
    match key {
        "rnea" => dof_vector(row, &inverse_dynamics(model, data, q, v, a).clone())?,
        "nle" => dof_vector(row, &nonlinear_effects(model, data, q, v).clone())?,
        "gravity_torque" => dof_vector(row, &gravity_torques(model, data, q).clone())?,
        "aba" => dof_vector(row, &forward_dynamics(model, data, q, v, tau).clone())?,
        "M" => {
            let m = mass_matrix(model, data, q);
            for (i, r) in matrix(expected)?.iter().enumerate() {
                for (j, x) in r.iter().enumerate() {
                    row.add(m[(map.dofs[i], map.dofs[j])], *x);
                }
            }
        }
        "oMi" => {
            forward_kinematics(model, data, q);
            let o_m_i = data.joint_placements()?;
            for (k, x) in expected.as_array().ok_or_else(|| anyhow!("oMi is not a list"))?.iter().enumerate() {
                let ours = &o_m_i[map.joints[k].0];
                for (i, r) in matrix(&x["R"])?.iter().enumerate() {
                    for (j, e) in r.iter().enumerate() {
                        row.add(ours.rotation[(i, j)], *e);
                    }
                }
                for (i, e) in vector(&x["p"])?.iter().enumerate() {
                    row.add(ours.translation[i], *e);
                }
            }
        }
        "v_local" | "a_local" => {
            forward_kinematics_acceleration(model, data, q, v, a);
            let ours_all = if key == "v_local" { data.joint_velocities()? } else { data.joint_accelerations()? };
            for (k, x) in expected.as_array().ok_or_else(|| anyhow!("{key} is not a list"))?.iter().enumerate() {
                let j = map.joints[k].0;
                let ours = ours_all[j].to_vec6();
                for (i, e) in vector(x)?.iter().enumerate() {
                    row.add(ours[i], *e);
                }
            }
        }
        "com" => {
            let c = center_of_mass(model, data, q);
            for (i, e) in vector(expected)?.iter().enumerate() {
                row.add(c[i], *e);
            }
        }
        "kinetic_energy" => row.add(kinetic_energy(model, data, q, v), expected.as_f64().unwrap_or(f64::NAN)),
        "potential_energy" => row.add(potential_energy(model, data, q), expected.as_f64().unwrap_or(f64::NAN)),
        "J_last_joint_lwa" => {
            joint_jacobians(model, data, q);
            let mut j = DMatrix::zeros(6, model.nv);
            joint_jacobian(model, data, last, ReferenceFrame::LocalWorldAligned, &mut j)?;
            for (i, r) in matrix(expected)?.iter().enumerate() {
                for (c, x) in r.iter().enumerate() {
                    row.add(j[(i, map.dofs[c])], *x);
                }
            }
        }
        "derivatives" => compare_derivatives(model, data, map, expected, q, v, a, tau, row)?,
        "hybrid" => compare_hybrid(model, data, map, expected, q, v, row)?,
        "constrained" | "impulse" => compare_constrained(model, data, map, key, expected, q, v, tau, row)?,
        _ => row.unsupported = Some("not implemented yet".into()),
    }
    Ok(())
}

/// `derivatives`: ∂τ/∂(q, v) of RNEA, ∂q̈/∂(q, v, τ) of ABA against the reference's matrices.
#[allow(clippy::too_many_arguments)]
fn compare_derivatives(
    model: &Model,
    data: &mut Data,
    map: &Mapping,
    expected: &Value,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    tau: &DVector<f64>,
    row: &mut Row,
) -> Result<()> {
    let mut ws = DerivativesWorkspace::new(model);
    let dof_matrix = |row: &mut Row, name: &str, ours: &DMatrix<f64>| -> Result<()> {
        for (i, r) in matrix(&expected[name]).with_context(|| format!("derivatives.{name}"))?.iter().enumerate() {
            for (j, x) in r.iter().enumerate() {
                row.add(ours[(map.dofs[i], map.dofs[j])], *x);
            }
        }
        Ok(())
    };
    rnea_derivatives(model, data, &mut ws, q, v, a);
    dof_matrix(row, "dtau_dq", &ws.dtau_dq)?;
    dof_matrix(row, "dtau_dv", &ws.dtau_dv)?;
    aba_derivatives(model, data, &mut ws, q, v, tau);
    dof_matrix(row, "dqdd_dq", &ws.dqdd_dq)?;
    dof_matrix(row, "dqdd_dv", &ws.dqdd_dv)?;
    dof_matrix(row, "dqdd_dtau", data.mass_matrix_inverse()?)?;
    Ok(())
}

/// `hybrid`: q̈ and τ of hybrid dynamics (both methods) with the reference's forward joints.
fn compare_hybrid(model: &Model, data: &mut Data, map: &Mapping, expected: &Value, q: &DVector<f64>, v: &DVector<f64>, row: &mut Row) -> Result<()> {
    let forward = expected["forward_joints"].as_array().ok_or_else(|| anyhow!("hybrid.forward_joints missing"))?;
    let mut is_forward = vec![false; model.njoints];
    for name in forward {
        let name = name.as_str().unwrap_or("?");
        let j = model.joint_id(name).ok_or_else(|| anyhow!("forward joint '{name}' is not in the model"))?;
        is_forward[j.0] = true;
    }
    let known = map.to_ours(&vector(&expected["known"])?);
    let mut ws = HybridWorkspace::new(model);
    for method in [HybridMethod::ArticulatedBody, HybridMethod::Crba] {
        let (qdd, tau) = hybrid_dynamics(model, data, &mut ws, q, v, &known, &is_forward, method);
        let (qdd, tau) = (qdd.clone(), tau.clone());
        for (k, r) in vector(&expected["qdd"])?.iter().enumerate() {
            row.add(qdd[map.dofs[k]], *r);
        }
        for (k, r) in vector(&expected["tau"])?.iter().enumerate() {
            row.add(tau[map.dofs[k]], *r);
        }
    }
    Ok(())
}

/// `constrained` / `impulse`: q̈ and λ (or v⁺ and Λ) of every contact set, by every method.
#[allow(clippy::too_many_arguments)]
fn compare_constrained(
    model: &Model,
    data: &mut Data,
    map: &Mapping,
    key: &str,
    expected: &Value,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    row: &mut Row,
) -> Result<()> {
    for set in expected.as_array().ok_or_else(|| anyhow!("{key} is not a list of contact sets"))? {
        let mut cs = contact_set(model, &set["contacts"])?;
        let methods: &[Method] = if key == "constrained" {
            &[Method::Direct, Method::RangeSpaceSparse, Method::NullSpace, Method::Kokkevis]
        } else {
            &[Method::Direct, Method::RangeSpaceSparse, Method::NullSpace]
        };
        for &method in methods {
            let (x, x_key, l, l_key) = if key == "constrained" {
                cs.forward_dynamics(model, data, q, v, tau, method)?;
                (&cs.qdd, "qdd", &cs.lambda, "lambda")
            } else {
                cs.compute_impulses(model, data, q, v, method)?;
                (&cs.v_plus, "v_plus", &cs.impulses, "Lambda")
            };
            for (k, r) in vector(&set[x_key])?.iter().enumerate() {
                row.add(x[map.dofs[k]], *r);
            }
            for (k, r) in vector(&set[l_key])?.iter().enumerate() {
                row.add(l[k], *r);
            }
        }
    }
    Ok(())
}

/// A bound constraint set from the reference's `[{joint, kind: "3d" | "6d"}]`: point contacts at
/// joint origins (world axes) and welded joint frames (local axes).
fn contact_set(model: &Model, contacts: &Value) -> Result<ConstraintSet> {
    let mut cs = ConstraintSet::new();
    for c in contacts.as_array().ok_or_else(|| anyhow!("contacts is not a list"))? {
        let name = c["joint"].as_str().unwrap_or("?");
        let j = model.joint_id(name).ok_or_else(|| anyhow!("contact joint '{name}' is not in the model"))?;
        match c["kind"].as_str() {
            Some("3d") => cs.add_point_contact_3d(j, Vec3::zeros(), Some(name)),
            Some("6d") => cs.add_frame_contact_6d(j, Se3::identity(), Some(name)),
            other => bail!("unknown contact kind {other:?}"),
        };
    }
    cs.bind(model)?;
    Ok(cs)
}
