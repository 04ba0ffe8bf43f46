//! `cargo bench -p karakuri-cli`: the `karakuri bench` harness over the bundled reference
//! robots (a light harness: no criterion build on 2 cores). `KARAKURI_BENCH_TIME` sets the CPU
//! seconds per algorithm (default 0.2).

use karakuri::io::urdf::{self, Root};
use karakuri_cli::bench::bench_model;

fn main() {
    let target: f64 = std::env::var("KARAKURI_BENCH_TIME").ok().and_then(|s| s.parse().ok()).unwrap_or(0.2);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");
    // (robot, floating, the contact joints of ../shared/anchors/pinocchio-bench/models.tsv)
    let robots: [(&str, bool, &[&str]); 6] = [
        ("ur5", false, &["wrist_3_joint"]),
        ("panda", false, &["panda_joint7"]),
        ("kinova_continuous", false, &[]),
        ("solo12", true, &["FL_KFE", "FR_KFE", "HL_KFE", "HR_KFE"]),
        ("anymal", true, &["LF_KFE", "LH_KFE", "RF_KFE", "RH_KFE"]),
        ("talos_reduced", true, &["leg_left_6_joint", "leg_right_6_joint", "arm_left_7_joint", "arm_right_7_joint"]),
    ];
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    for (robot, floating, contacts) in robots {
        if !filter.is_empty() && !filter.iter().any(|f| robot.contains(f.as_str())) {
            continue;
        }
        let model = urdf::load(format!("{dir}/{robot}.urdf"), if floating { Root::FreeFlyer } else { Root::Fixed }).unwrap();
        let contacts: Vec<String> = contacts.iter().map(|s| s.to_string()).collect();
        let stats = bench_model(&model, target, None, &contacts).unwrap();
        let row: Vec<String> = stats.iter().map(|(k, s)| format!("{k} {:.0}", s.median_ns)).collect();
        println!("{robot:<18} {}", row.join("  "));
    }
}
