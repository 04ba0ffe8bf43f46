//! ns per state of karakuri's batched dynamics against its single call, for
//! scripts/bench-batch-vs-pinocchio.py (one JSON line per algorithm on stdout):
//!
//!     cargo run --release -p karakuri --example batch_bench -- tests/data/ur5.urdf [--floating] [--time 0.2]
//!
//! Each figure is the fastest of 15 rounds of a timed loop of about `--time`/15 s (thread CPU
//! time on one thread, wall time on two: on a shared machine the fastest round is the one
//! least disturbed), per state: the single
//! call cycling over 1024 random states; the batched call on N = 1, 8, 64, 1024 states on one
//! thread; N = 1024 on two threads and, beside it, on one thread in wall time (the ratio's base).
//! Algorithms: rnea, aba, crba, minv (M⁻¹), fk, gravity, jacobians, rnea_derivatives,
//! aba_derivatives (`--only a,b` picks some).

#![allow(unsafe_code)] // clock_gettime

use karakuri::algorithms::{self as alg, SplitMix64};
use karakuri::batch::{self, BatchWorkspace};
use karakuri::io::urdf;
use nalgebra::DVector;
use std::hint::black_box;
use std::time::Instant;

const STATES: usize = 1024;
const ROUNDS: usize = 15;
/// Every batched function timed, in the order of the tables (`--only rnea,crba` picks some).
const ALGOS: [&str; 7] = ["rnea", "aba", "crba", "minv", "fk", "gravity", "jacobians"];

/// ns of CPU time this thread has run (`CLOCK_THREAD_CPUTIME_ID`, as `karakuri bench`), so that
/// time spent waiting for a core on a shared machine does not count.
fn thread_cpu_ns() -> Option<f64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and reads nothing else.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64)
}

/// Fastest ns per unit of `units` units done by one `f()`, over the rounds: thread CPU time
/// when `cpu` (work on the calling thread only), else wall time.
fn time(budget: f64, units: usize, cpu: bool, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-9);
    let reps = ((budget / ROUNDS as f64 / once) as usize).max(1);
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let (t, c) = (Instant::now(), thread_cpu_ns().filter(|_| cpu));
        for _ in 0..reps {
            f();
        }
        let ns = match (c, thread_cpu_ns().filter(|_| cpu)) {
            (Some(a), Some(b)) => b - a,
            _ => t.elapsed().as_secs_f64() * 1e9,
        };
        best = best.min(ns / (reps * units) as f64);
    }
    best
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let floating = args.iter().any(|a| a == "--floating");
    let budget: f64 = args.iter().position(|a| a == "--time").map_or(0.2, |k| args[k + 1].parse().unwrap());
    let root = if floating { urdf::Root::FreeFlyer } else { urdf::Root::Fixed };
    let model = urdf::load(path, root).unwrap();
    let (nq, nv) = (model.nq, model.nv);
    let mut rng = SplitMix64::new(3);
    let mut q = vec![];
    for _ in 0..STATES {
        q.extend(alg::random_configuration(&model, &mut rng).iter());
    }
    let v: Vec<f64> = (0..STATES * nv).map(|_| rng.range(-1.0, 1.0)).collect();
    let a: Vec<f64> = (0..STATES * nv).map(|_| rng.range(-1.0, 1.0)).collect();
    let singles: Vec<[DVector<f64>; 3]> = (0..STATES)
        .map(|s| {
            let r = |x: &[f64], n: usize| DVector::from_column_slice(&x[s * n..(s + 1) * n]);
            [r(&q, nq), r(&v, nv), r(&a, nv)]
        })
        .collect();
    let mut data = karakuri::Data::new(&model);
    let nj = model.njoints;
    let mut out = vec![0.0; STATES * (nv * nv).max(nj * 16).max(6 * nv)];
    let mut ws1 = BatchWorkspace::new(&model, 1);
    let mut ws2 = BatchWorkspace::new(&model, 2);
    let only: Option<&String> = args.iter().position(|a| a == "--only").map(|k| &args[k + 1]);
    for algo in ALGOS.iter().filter(|a| only.is_none_or(|o| o.split(',').any(|x| x == **a))) {
        let single = time(budget, STATES, true, || {
            for [q, v, a] in &singles {
                match *algo {
                    "rnea" => drop(black_box(alg::inverse_dynamics(&model, &mut data, q, v, a))),
                    "aba" => drop(black_box(alg::forward_dynamics(&model, &mut data, q, v, a))),
                    "crba" => drop(black_box(alg::mass_matrix(&model, &mut data, q))),
                    "minv" => drop(black_box(alg::mass_matrix_inverse(&model, &mut data, q))),
                    "fk" => {
                        alg::forward_kinematics(&model, &mut data, q);
                        black_box(&data);
                    }
                    "gravity" => drop(black_box(alg::gravity_torques(&model, &mut data, q))),
                    _ => drop(black_box(alg::joint_jacobians(&model, &mut data, q))),
                };
            }
        });
        let mut run = |ws: &mut BatchWorkspace, n: usize| {
            let (q, v, a) = (&q[..n * nq], &v[..n * nv], &a[..n * nv]);
            let per = match *algo {
                "crba" | "minv" => nv * nv,
                "fk" => nj * 16,
                "jacobians" => 6 * nv,
                _ => nv,
            };
            let o = &mut out[..n * per];
            match *algo {
                "rnea" => batch::rnea(&model, ws, q, v, a, o).unwrap(),
                "aba" => batch::aba(&model, ws, q, v, a, o).unwrap(),
                "crba" => batch::crba(&model, ws, q, o).unwrap(),
                "minv" => batch::mass_matrix_inverse(&model, ws, q, o).unwrap(),
                "fk" => batch::forward_kinematics(&model, ws, q, o).unwrap(),
                "gravity" => batch::gravity_torques(&model, ws, q, o).unwrap(),
                _ => batch::joint_jacobians(&model, ws, q, o).unwrap(),
            }
            black_box(&o);
        };
        let per_n: Vec<String> = [1, 8, 64, 1024]
            .iter()
            .map(|&n| format!("\"{n}\": {:.1}", time(budget, n, true, || run(&mut ws1, n))))
            .collect();
        let two = time(budget, STATES, false, || run(&mut ws2, STATES));
        // the same call on one thread in wall time, beside it: the two-thread ratio's base
        let one_wall = time(budget, STATES, false, || run(&mut ws1, STATES));
        println!(
            "{{\"robot\": \"{}\", \"nv\": {nv}, \"algo\": \"{algo}\", \"single\": {single:.1}, \"batch_1thread\": {{{}}}, \"batch_1thread_wall_1024\": {one_wall:.1}, \"batch_2threads_1024\": {two:.1}}}",
            model.name,
            per_n.join(", ")
        );
    }
    derivatives(&model, budget, &q, &v, &a, &singles, &mut ws1, &mut ws2, only);
}

/// The same figures for the batched derivative calls (record 0076), one JSON line each.
#[allow(clippy::too_many_arguments)]
fn derivatives(
    model: &karakuri::Model,
    budget: f64,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    singles: &[[DVector<f64>; 3]],
    ws1: &mut BatchWorkspace,
    ws2: &mut BatchWorkspace,
    only: Option<&String>,
) {
    let (nq, nv) = (model.nq, model.nv);
    let mut data = karakuri::Data::new(model);
    let mut dws = alg::DerivativesWorkspace::new(model);
    let mut out: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0; STATES * nv * nv]);
    for algo in ["rnea_derivatives", "aba_derivatives"].into_iter().filter(|a| only.is_none_or(|o| o.split(',').any(|x| x == *a))) {
        let single = time(budget, STATES, true, || {
            for [q, v, a] in singles {
                match algo {
                    "rnea_derivatives" => alg::rnea_derivatives(model, &mut data, &mut dws, q, v, a),
                    _ => alg::aba_derivatives(model, &mut data, &mut dws, q, v, a),
                }
                black_box(&dws);
            }
        });
        let mut run = |ws: &mut BatchWorkspace, n: usize| {
            let (q, v, a) = (&q[..n * nq], &v[..n * nv], &a[..n * nv]);
            let [x, y, z] = &mut out;
            let (x, y, z) = (&mut x[..n * nv * nv], &mut y[..n * nv * nv], &mut z[..n * nv * nv]);
            match algo {
                "rnea_derivatives" => batch::rnea_derivatives(model, ws, q, v, a, x, y, z).unwrap(),
                _ => batch::aba_derivatives(model, ws, q, v, a, x, y, z).unwrap(),
            }
            black_box((x, y, z));
        };
        let per_n: Vec<String> = [1, 8, 64, 1024]
            .iter()
            .map(|&n| format!("\"{n}\": {:.1}", time(budget, n, true, || run(ws1, n))))
            .collect();
        let two = time(budget, STATES, false, || run(ws2, STATES));
        println!(
            "{{\"robot\": \"{}\", \"nv\": {nv}, \"algo\": \"{algo}\", \"single\": {single:.1}, \"batch_1thread\": {{{}}}, \"batch_2threads_1024\": {two:.1}}}",
            model.name,
            per_n.join(", ")
        );
    }
}
