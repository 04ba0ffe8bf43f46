//! `cargo bench -p karakuri-cli`: the `karakuri bench` harness over the bundled reference
//! robots (a light harness: no criterion build on 2 cores). `KARAKURI_BENCH_TIME` sets the CPU
//! seconds per algorithm (default 0.2).

use karakuri::io::urdf::{self, Root};
use karakuri_cli::bench::bench_model;

fn main() {
    let target: f64 = std::env::var("KARAKURI_BENCH_TIME").ok().and_then(|s| s.parse().ok()).unwrap_or(0.2);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");
    let robots = [("ur5", false), ("panda", false), ("kinova_continuous", false), ("solo12", true), ("anymal", true), ("talos_reduced", true)];
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    for (robot, floating) in robots {
        if !filter.is_empty() && !filter.iter().any(|f| robot.contains(f.as_str())) {
            continue;
        }
        let model = urdf::load(format!("{dir}/{robot}.urdf"), if floating { Root::FreeFlyer } else { Root::Fixed }).unwrap();
        let stats = bench_model(&model, target, None).unwrap();
        let row: Vec<String> = stats.iter().map(|(k, s)| format!("{k} {:.0}", s.median_ns)).collect();
        println!("{robot:<18} {}", row.join("  "));
    }
}
