//! The single-state CRBA, M⁻¹, RNEA and `compute_all_terms` alone, for callgrind and for bit
//! checks (records 0108, 0122; `single_crba`'s modes are folded in here):
//!
//!     cargo run --release -p karakuri --example single_terms -- ROBOT.urdf [--floating] MODE [N]
//!
//! MODE `crba`, `minv` (M⁻¹), `rnea` (inverse dynamics), `nle` or `all`: N calls (default 1000) cycling over
//! 256 random states (for `valgrind --tool=callgrind --toggle-collect=...`); `hash`: one line
//! with a hash of the bits of M, M⁻¹ and a solve by M's factors, τ, the nonlinear effects and
//! everything `compute_all_terms` leaves (M, C q̇ + g, placements, velocities, accelerations, Jacobian columns) over the 256
//! states, to compare two builds.

use karakuri::algorithms::{self as alg, SplitMix64};
use karakuri::io::urdf;
use nalgebra::DVector;
use std::hint::black_box;

const STATES: usize = 256;

/// FNV-1a over the bits of `xs`.
fn eat(h: &mut u64, xs: impl IntoIterator<Item = f64>) {
    for x in xs {
        for b in x.to_bits().to_le_bytes() {
            *h = (*h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let floating = args.iter().any(|a| a == "--floating");
    let rest: Vec<&String> = args[2..].iter().filter(|a| *a != "--floating").collect();
    let mode = rest.first().map_or("crba", |s| s.as_str());
    let n: usize = rest.get(1).map_or(1000, |s| s.parse().unwrap());
    let root = if floating { urdf::Root::FreeFlyer } else { urdf::Root::Fixed };
    let model = urdf::load(&args[1], root).unwrap();
    let mut rng = SplitMix64::new(7);
    let qs: Vec<DVector<f64>> = (0..STATES).map(|_| alg::random_configuration(&model, &mut rng)).collect();
    let vs: Vec<DVector<f64>> = (0..STATES).map(|_| DVector::from_fn(model.nv, |_, _| rng.range(-2.0, 2.0))).collect();
    let acc: Vec<DVector<f64>> = (0..STATES).map(|_| DVector::from_fn(model.nv, |_, _| rng.range(-5.0, 5.0))).collect();
    let mut data = karakuri::Data::new(&model);
    match mode {
        "crba" => {
            for k in 0..n {
                black_box(alg::mass_matrix(&model, &mut data, &qs[k % STATES]));
            }
        }
        "minv" => {
            for k in 0..n {
                black_box(alg::mass_matrix_inverse(&model, &mut data, &qs[k % STATES]));
            }
        }
        "rnea" => {
            for k in 0..n {
                let s = k % STATES;
                black_box(alg::inverse_dynamics(&model, &mut data, &qs[s], &vs[s], &acc[s]));
            }
        }
        "nle" => {
            for k in 0..n {
                let s = k % STATES;
                black_box(alg::nonlinear_effects(&model, &mut data, &qs[s], &vs[s]));
            }
        }
        "all" => {
            for k in 0..n {
                let s = k % STATES;
                alg::compute_all_terms(&model, &mut data, &qs[s], &vs[s]);
                black_box(&data);
            }
        }
        _ => {
            let mut h = [0xcbf29ce484222325u64; 6];
            for s in 0..STATES {
                let (q, v, a) = (&qs[s], &vs[s], &acc[s]);
                eat(&mut h[0], alg::mass_matrix(&model, &mut data, q).iter().copied());
                eat(&mut h[4], alg::mass_matrix_inverse(&model, &mut data, q).iter().copied());
                let mut b: Vec<f64> = (0..model.nv).map(|k| (k as f64 + 0.5).sin()).collect();
                data.mass_matrix_factorization().unwrap().solve(&mut b);
                eat(&mut h[5], b);
                eat(&mut h[1], alg::inverse_dynamics(&model, &mut data, q, v, a).iter().copied());
                eat(&mut h[2], alg::nonlinear_effects(&model, &mut data, q, v).iter().copied());
                alg::compute_all_terms(&model, &mut data, q, v);
                let d = &data;
                eat(&mut h[3], d.mass_matrix().unwrap().iter().copied());
                eat(&mut h[3], d.nonlinear_effects().unwrap().iter().copied());
                for x in d.joint_placements().unwrap() {
                    eat(&mut h[3], x.rotation.iter().chain(x.translation.iter()).copied());
                }
                for ms in [d.joint_velocities().unwrap(), d.joint_accelerations().unwrap(), d.joint_accelerations_with_gravity().unwrap()] {
                    eat(&mut h[3], ms.iter().flat_map(|m| m.linear.iter().chain(m.angular.iter())).copied());
                }
                eat(&mut h[3], d.jacobians().unwrap().iter().copied());
            }
            println!("M {:016x} Minv {:016x} solve {:016x} rnea {:016x} nle {:016x} all {:016x}", h[0], h[4], h[5], h[1], h[2], h[3]);
        }
    }
}
