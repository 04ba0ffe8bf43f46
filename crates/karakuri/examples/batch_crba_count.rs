//! A fixed amount of batched CRBA or M⁻¹ work for instruction counts (callgrind) and profiles:
//!
//!     valgrind --tool=callgrind --toggle-collect='karakuri::batch::crba_lanes::crba_chunk::avx2' target/release/examples/batch_crba_count tests/data/panda.urdf crba [--floating] [--states 1024] [--reps 4] [--hash]
//!
//! The states are the random ones of examples/batch_bench (seed 3). `--hash` prints an FNV-1a
//! hash of the bits of the last result, to compare two builds.

use karakuri::algorithms::{self as alg, SplitMix64};
use karakuri::batch::{self, BatchWorkspace};
use karakuri::io::urdf;
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (path, algo) = (&args[1], args[2].as_str());
    let arg = |name: &str, d: usize| args.iter().position(|a| a == name).map_or(d, |k| args[k + 1].parse().unwrap());
    let (states, reps) = (arg("--states", 1024), arg("--reps", 4));
    let root = if args.iter().any(|a| a == "--floating") { urdf::Root::FreeFlyer } else { urdf::Root::Fixed };
    let model = urdf::load(path, root).unwrap();
    let mut rng = SplitMix64::new(3);
    let mut q = vec![];
    for _ in 0..states {
        q.extend(alg::random_configuration(&model, &mut rng).iter());
    }
    let mut out = vec![0.0; states * model.nv * model.nv];
    let mut ws = BatchWorkspace::new(&model, 1);
    for _ in 0..reps {
        match algo {
            "crba" => batch::crba(&model, &mut ws, &q, &mut out).unwrap(),
            _ => batch::mass_matrix_inverse(&model, &mut ws, &q, &mut out).unwrap(),
        }
        black_box(&out);
    }
    if args.iter().any(|a| a == "--hash") {
        let h = out.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, x| (h ^ x.to_bits()).wrapping_mul(0x100_0000_01b3));
        println!("{h:016x}");
    }
}
