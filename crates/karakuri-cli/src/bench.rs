//! `karakuri bench`: nanoseconds per call of every algorithm, timed as Pinocchio's anchor
//! (`../shared/anchors/pinocchio-bench`) times itself, so the two tables line up: 1000 random
//! samples cycled, ~5 ms batches, thread CPU time (`CLOCK_THREAD_CPUTIME_ID`), median over
//! batches, plus min, p90 and the wall-clock median.

use anyhow::{bail, Result};
use karakuri::algorithms::*;
use karakuri::io::urdf::Root;
use karakuri::constraints::{ConstraintSet, Method};
use karakuri::spatial::Vec3;
use karakuri::{Data, Model};
use nalgebra::DVector;
use std::hint::black_box;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Timing of one algorithm.
#[derive(Clone, Debug)]
pub struct Stat {
    /// Median over batches of ns per call (thread CPU time).
    pub median_ns: f64,
    /// Fastest batch.
    pub min_ns: f64,
    /// 90th percentile batch.
    pub p90_ns: f64,
    /// Median by wall clock.
    pub wall_median_ns: f64,
    /// Calls timed.
    pub calls: u64,
    /// Batches timed.
    pub batches: usize,
}

/// This thread's CPU time in seconds.
#[allow(unsafe_code)] // clock_gettime is the only way to read the thread CPU clock
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_THREAD_CPUTIME_ID is supported on Linux
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Times `f(sample_index)` cycling over `nsamples`, as the Pinocchio anchor does.
pub fn time_algo(mut f: impl FnMut(usize), nsamples: usize, target_s: f64) -> Stat {
    let mut idx = 0;
    let mut run = |n: u64, f: &mut dyn FnMut(usize)| {
        for _ in 0..n {
            f(idx);
            idx += 1;
            if idx == nsamples {
                idx = 0;
            }
        }
    };
    // warm-up and calibration: grow until a run lasts 2 ms, then batches of ~5 ms
    let mut n = 1u64;
    loop {
        let c0 = thread_cpu_seconds();
        run(n, &mut f);
        if thread_cpu_seconds() - c0 >= 2e-3 || n >= 1 << 30 {
            break;
        }
        n *= 2;
    }
    let mut per_call = f64::INFINITY;
    for _ in 0..3 {
        let c0 = thread_cpu_seconds();
        run(n, &mut f);
        per_call = per_call.min((thread_cpu_seconds() - c0) / n as f64);
    }
    let batch = ((5e-3 / per_call.max(1e-12)) as u64).max(1);
    let (mut cpu_ns, mut wall_ns) = (vec![], vec![]);
    let (mut total, mut calls) = (0.0, 0);
    while (total < target_s || cpu_ns.len() < 21) && cpu_ns.len() < 100_000 {
        let t0 = Instant::now();
        let c0 = thread_cpu_seconds();
        run(batch, &mut f);
        let dc = thread_cpu_seconds() - c0;
        let dt = t0.elapsed().as_secs_f64();
        total += dc;
        calls += batch;
        cpu_ns.push(dc * 1e9 / batch as f64);
        wall_ns.push(dt * 1e9 / batch as f64);
    }
    cpu_ns.sort_by(f64::total_cmp);
    wall_ns.sort_by(f64::total_cmp);
    let pct = |x: &[f64], p: f64| x[((p * (x.len() - 1) as f64) + 0.5).floor() as usize];
    Stat {
        median_ns: median(&cpu_ns),
        min_ns: cpu_ns[0],
        p90_ns: pct(&cpu_ns, 0.9),
        wall_median_ns: median(&wall_ns),
        calls,
        batches: cpu_ns.len(),
    }
}

fn median(x: &[f64]) -> f64 {
    let n = x.len();
    if n % 2 == 1 {
        x[n / 2]
    } else {
        0.5 * (x[n / 2 - 1] + x[n / 2])
    }
}

/// Random states: q within limits (unbounded translations in [-1, 1], uniform quaternions),
/// v, a, τ uniform in [-1, 1].
pub struct Samples {
    /// Configurations.
    pub q: Vec<DVector<f64>>,
    /// Velocities.
    pub v: Vec<DVector<f64>>,
    /// Accelerations.
    pub a: Vec<DVector<f64>>,
    /// Torques.
    pub tau: Vec<DVector<f64>>,
}

impl Samples {
    /// `n` samples from `seed`.
    pub fn new(model: &Model, n: usize, seed: u64) -> Samples {
        let mut rng = SplitMix64::new(seed);
        let mut s = Samples { q: vec![], v: vec![], a: vec![], tau: vec![] };
        for _ in 0..n {
            s.q.push(random_configuration(model, &mut rng));
            s.v.push(rng.vector(model.nv));
            s.a.push(rng.vector(model.nv));
            s.tau.push(rng.vector(model.nv));
        }
        s
    }
}

/// The algorithm keys, in Pinocchio's column names where they exist.
pub const ALGORITHMS: &[&str] = &[
    "fk_q", "fk_qv", "fk_qva", "rnea", "nle", "gravity", "crba", "aba", "minverse", "jacobians", "rnea_derivatives",
    "aba_derivatives", "hybrid", "hybrid_crba", "cd_contacts3d", "cd_contacts3d_direct", "cd_contacts3d_nullspace", "cd_contacts3d_kokkevis",
];

/// Times the algorithms named in `only` (all by default) on `model`. `hybrid` makes the root
/// joint forward (the free flyer of a floating robot) and every other joint inverse;
/// `cd_contacts3d*` put a 3-D point contact at the origin of each joint of `contacts` (constrained
/// forward dynamics by range-space sparse, the default, and by each other method); they are
/// skipped when `contacts` is empty.
pub fn bench_model(model: &Model, target_s: f64, only: Option<&[String]>, contacts: &[String]) -> Result<Vec<(String, Stat)>> {
    if let Some(keys) = only {
        for k in keys {
            if !ALGORITHMS.contains(&k.as_str()) {
                bail!("unknown algorithm '{k}' (known: {})", ALGORITHMS.join(","));
            }
        }
    }
    let s = Samples::new(model, 1000, 0);
    let n = s.q.len();
    let mut data = Data::new(model);
    let mut out = vec![];
    let mut hybrid_ws = HybridWorkspace::new(model);
    let mut derivatives_ws = DerivativesWorkspace::new(model);
    // the forward joint of `hybrid`: the root's first joint (none in a model without joints)
    let root = model.children[0].first().copied();
    let mut is_forward = vec![false; model.njoints];
    if let Some(r) = root {
        is_forward[r] = true;
    }
    let mut cs = ConstraintSet::new();
    for name in contacts {
        let j = model.joint_id(name).ok_or_else(|| anyhow::anyhow!("contact joint '{name}' is not in the model"))?;
        cs.add_point_contact_3d(j, Vec3::zeros(), Some(name));
    }
    cs.bind(model)?;
    for &key in ALGORITHMS {
        if only.is_some_and(|o| !o.iter().any(|k| k == key)) {
            continue;
        }
        if (key.starts_with("cd_") && contacts.is_empty()) || (key.starts_with("hybrid") && root.is_none()) {
            continue;
        }
        let cd = |method: Method, cs: &mut ConstraintSet, d: &mut Data, i: usize| {
            black_box(cs.forward_dynamics(model, d, &s.q[i], &s.v[i], &s.tau[i], method).ok());
        };
        let d = &mut data;
        let stat = match key {
            "fk_q" => time_algo(|i| forward_kinematics(model, d, &s.q[i]), n, target_s),
            "fk_qv" => time_algo(|i| forward_kinematics_velocity(model, d, &s.q[i], &s.v[i]), n, target_s),
            "fk_qva" => time_algo(|i| forward_kinematics_acceleration(model, d, &s.q[i], &s.v[i], &s.a[i]), n, target_s),
            "rnea" => time_algo(|i| { black_box(inverse_dynamics(model, d, &s.q[i], &s.v[i], &s.a[i])); }, n, target_s),
            "nle" => time_algo(|i| { black_box(nonlinear_effects(model, d, &s.q[i], &s.v[i])); }, n, target_s),
            "gravity" => time_algo(|i| { black_box(gravity_torques(model, d, &s.q[i])); }, n, target_s),
            "crba" => time_algo(|i| { black_box(mass_matrix(model, d, &s.q[i])); }, n, target_s),
            "aba" => time_algo(|i| { black_box(forward_dynamics(model, d, &s.q[i], &s.v[i], &s.tau[i])); }, n, target_s),
            "minverse" => time_algo(|i| { black_box(mass_matrix_inverse(model, d, &s.q[i])); }, n, target_s),
            "jacobians" => time_algo(|i| { black_box(joint_jacobians(model, d, &s.q[i])); }, n, target_s),
            "rnea_derivatives" => {
                let ws = &mut derivatives_ws;
                time_algo(|i| { rnea_derivatives(model, d, ws, &s.q[i], &s.v[i], &s.a[i]); black_box(&ws.dtau_dq); }, n, target_s)
            }
            "aba_derivatives" => {
                let ws = &mut derivatives_ws;
                time_algo(|i| { aba_derivatives(model, d, ws, &s.q[i], &s.v[i], &s.tau[i]); black_box(&ws.dqdd_dq); }, n, target_s)
            }
            "hybrid" | "hybrid_crba" => {
                let method = if key == "hybrid" { HybridMethod::ArticulatedBody } else { HybridMethod::Crba };
                // known = τ on the forward root, the sample's a elsewhere
                let known: Vec<DVector<f64>> = (0..n)
                    .map(|i| {
                        let mut k = s.a[i].clone();
                        let r = root.expect("hybrid is skipped without a joint");
                        for dof in model.idx_v[r]..model.idx_v[r] + model.nvs[r] {
                            k[dof] = s.tau[i][dof];
                        }
                        k
                    })
                    .collect();
                let ws = &mut hybrid_ws;
                let fw = &is_forward;
                time_algo(|i| { black_box(hybrid_dynamics(model, d, ws, &s.q[i], &s.v[i], &known[i], fw, method)); }, n, target_s)
            }
            "cd_contacts3d" => time_algo(|i| cd(Method::RangeSpaceSparse, &mut cs, d, i), n, target_s),
            "cd_contacts3d_direct" => time_algo(|i| cd(Method::Direct, &mut cs, d, i), n, target_s),
            "cd_contacts3d_nullspace" => time_algo(|i| cd(Method::NullSpace, &mut cs, d, i), n, target_s),
            "cd_contacts3d_kokkevis" => time_algo(|i| cd(Method::Kokkevis, &mut cs, d, i), n, target_s),
            _ => unreachable!(),
        };
        black_box(&data);
        out.push((key.to_string(), stat));
    }
    Ok(out)
}

/// `karakuri bench`.
pub fn run(path: &Path, floating: bool, target_s: f64, only: Option<&[String]>, contacts: &[String], json: bool) -> Result<ExitCode> {
    let model = crate::load_urdf(path, if floating { Root::FreeFlyer } else { Root::Fixed })?;
    let stats = bench_model(&model, target_s, only, contacts)?;
    if json {
        let algorithms: serde_json::Map<String, serde_json::Value> = stats
            .iter()
            .map(|(k, s)| {
                (k.clone(), serde_json::json!({"median_ns": s.median_ns, "min_ns": s.min_ns, "p90_ns": s.p90_ns,
                    "wall_median_ns": s.wall_median_ns, "calls": s.calls, "batches": s.batches}))
            })
            .collect();
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        println!("{}", serde_json::json!({"model": name, "nq": model.nq, "nv": model.nv, "algorithms": algorithms}));
    } else {
        println!("{} (nq = {}, nv = {}): ns per call, thread CPU time, median over ~5 ms batches", model.name, model.nq, model.nv);
        println!("{:<24} {:>10} {:>10} {:>10} {:>10}", "algorithm", "median", "min", "p90", "wall");
        for (k, s) in &stats {
            println!("{:<24} {:>10.1} {:>10.1} {:>10.1} {:>10.1}", k, s.median_ns, s.min_ns, s.p90_ns, s.wall_median_ns);
        }
        let get = |key: &str| stats.iter().find(|(k, _)| k == key).map(|(_, s)| s.median_ns);
        if let (Some(h), Some(r)) = (get("hybrid"), get("rnea")) {
            println!("hybrid / rnea = {:.2}", h / r);
        }
    }
    Ok(ExitCode::SUCCESS)
}
