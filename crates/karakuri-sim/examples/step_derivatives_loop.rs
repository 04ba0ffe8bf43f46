//! Times `World::step_derivatives` in a Rust loop, for profiling (decision record 0082):
//! `cargo run --release -p karakuri-sim --example step_derivatives_loop -- SCENE [SETTLE] [CALLS]`
//! steps the scene SETTLE times (default 20), then prints the median µs per call over rounds
//! of CALLS calls (default 2000).

use karakuri_sim::{StepDerivatives, World};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("a scene file");
    let settle: usize = args.next().map_or(20, |s| s.parse().expect("SETTLE: a count"));
    let calls: usize = args.next().map_or(2000, |s| s.parse().expect("CALLS: a count"));
    let mut w = World::from_file(&path).expect("the scene loads");
    for _ in 0..settle {
        w.step().expect("a step");
    }
    let (nv, nu) = w.step_derivative_sizes();
    let mut d = StepDerivatives::new(nv, nu);
    w.step_derivatives(&mut d).expect("the step's derivatives");
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = std::time::Instant::now();
        for _ in 0..calls {
            w.step_derivatives(&mut d).expect("the step's derivatives");
        }
        times.push(t.elapsed().as_secs_f64() / calls as f64 * 1e6);
    }
    times.sort_by(f64::total_cmp);
    println!("{path}: nv {nv} nu {nu}: {:.2} µs / call (median of 7 rounds of {calls})", times[3]);
}
