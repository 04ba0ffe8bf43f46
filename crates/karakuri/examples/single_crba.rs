//! The single-state CRBA and M⁻¹ alone, for callgrind and for bit checks (record 0108):
//!
//!     cargo run --release -p karakuri --example single_crba -- ROBOT.urdf [--floating] MODE [N]
//!
//! MODE `crba` or `minv`: N calls (default 1000) cycling over 256 random states (for
//! `valgrind --tool=callgrind --toggle-collect=...`); `hash`: one line with a hash of the
//! bits of M and of M⁻¹ (and of the factors) over 256 random states, to compare two builds.

use karakuri::algorithms::{self as alg, SplitMix64};
use karakuri::io::urdf;
use nalgebra::DVector;
use std::hint::black_box;

const STATES: usize = 256;

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
        _ => {
            // FNV-1a over the bits
            let mut h: [u64; 3] = [0xcbf29ce484222325; 3];
            let eat = |h: &mut u64, x: f64| {
                for b in x.to_bits().to_le_bytes() {
                    *h = (*h ^ b as u64).wrapping_mul(0x100000001b3);
                }
            };
            for q in &qs {
                for &x in alg::mass_matrix(&model, &mut data, q).iter() {
                    eat(&mut h[0], x);
                }
                for &x in alg::mass_matrix_inverse(&model, &mut data, q).iter() {
                    eat(&mut h[1], x);
                }
                let mut b: Vec<f64> = (0..model.nv).map(|k| (k as f64 + 0.5).sin()).collect();
                data.mass_matrix_factorization().unwrap().solve(&mut b);
                for x in b {
                    eat(&mut h[2], x);
                }
            }
            println!("M {:016x} Minv {:016x} solve {:016x}", h[0], h[1], h[2]);
        }
    }
}
