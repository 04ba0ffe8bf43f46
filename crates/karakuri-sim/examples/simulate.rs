//! `simulate [SCENE] [--duration S] [--dt S] [--out traj.csv] [--steps steps.csv]`: what
//! `karakuri simulate` does, for use before the CLI is wired (e.g. by the validation checker:
//! `check.py --karakuri target/release/examples/simulate`, which calls it with `simulate` as
//! its first argument).
use std::path::PathBuf;

use karakuri_sim::cli::{simulate, SimulateArgs};

fn main() {
    let mut args = SimulateArgs::default();
    let mut it = std::env::args().skip(1).peekable();
    if it.peek().map(String::as_str) == Some("simulate") {
        it.next();
    }
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| die(&format!("{name} needs a value")));
        match a.as_str() {
            "--duration" => args.duration = Some(value("--duration").parse().unwrap_or_else(|_| die("bad --duration"))),
            "--dt" => args.dt = Some(value("--dt").parse().unwrap_or_else(|_| die("bad --dt"))),
            "--out" => args.out = Some(PathBuf::from(value("--out"))),
            "--steps" => args.steps = Some(PathBuf::from(value("--steps"))),
            s if s.starts_with("--") => die(&format!("unknown option {s}")),
            s => args.scene = Some(PathBuf::from(s)),
        }
    }
    match simulate(&args, &mut |_| {}) {
        Ok(summary) => println!("{summary}"),
        Err(e) => die(&e.to_string()),
    }
}

fn die(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}
