//! How a [`karakuri_sim::Batch`] scales from one thread to two: N perturbed worlds of a scene
//! stepped on a pool of 1 and of 2 threads, both as one `run_steps(S)` call and as calls of
//! `K` steps (as a learning loop steps between actions), rounds interleaved.
//!
//! `cargo run --release -p karakuri-sim --example batch_scaling -- SCENE [N,N,..] [STEPS] [K] [ROUNDS]`
//!
//! Prints, per N and calling pattern, the best world steps/s of the rounds on 1 and 2 threads,
//! their ratio, the process CPU µs per world step on each (more on 2 threads: work the batch
//! adds, such as waking threads) and the spread of the worlds' own step costs (the slowest
//! world over the mean: what a batch of few worlds waits for), with the 1-minute load average.

use std::time::Instant;

use karakuri_sim::{Batch, Scene};

/// CPU seconds of every thread of the process alive now (`/proc/self/task/*/schedstat`, ns).
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        * 1e-9
}

/// CPU seconds of this thread (`/proc/thread-self/schedstat`).
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns * 1e-9)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or("?".into(), |s| s.split_whitespace().next().unwrap_or("?").to_string())
}

/// (world steps/s, CPU µs per world step) of `steps` steps of `n` worlds in calls of `per_call`.
fn run(scene: &Scene, n: usize, steps: u64, per_call: u64, threads: usize) -> (f64, f64) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
    let mut batch = Batch::perturbed(scene, n, 1).expect("the scene loads");
    // the pool's threads are alive from here to the end of the run: their CPU time counts
    pool.install(|| ());
    let (wall, cpu) = (Instant::now(), cpu_seconds());
    pool.install(|| {
        let mut done = 0;
        while done < steps {
            let k = per_call.min(steps - done);
            batch.run_steps(k).expect("the worlds step");
            done += k;
        }
    });
    let (wall, cpu) = (wall.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    drop(pool);
    let total = (n as u64 * steps) as f64;
    (total / wall, cpu * 1e6 / total)
}

/// The slowest world's step cost over the mean, each world stepped alone for `steps` steps on
/// this thread (its CPU time, which another process's load does not inflate).
fn spread(scene: &Scene, n: usize, steps: u64) -> f64 {
    let batch = Batch::perturbed(scene, n, 1).expect("the scene loads");
    let costs: Vec<f64> = batch
        .into_worlds()
        .into_iter()
        .map(|mut w| {
            let t = thread_cpu_seconds();
            for _ in 0..steps {
                w.step().expect("the world steps");
            }
            thread_cpu_seconds() - t
        })
        .collect();
    let mean = costs.iter().sum::<f64>() / n as f64;
    costs.iter().copied().fold(0.0, f64::max) / mean
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: batch_scaling SCENE [N,N,..] [STEPS] [K] [ROUNDS]");
        std::process::exit(2);
    };
    let scene = Scene::from_file(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let ns: Vec<usize> = args.get(2).map_or("2,8,32", |s| s).split(',').map(|x| x.parse().expect("N")).collect();
    let steps: u64 = args.get(3).map_or(1000, |s| s.parse().expect("STEPS"));
    let k: u64 = args.get(4).map_or(1, |s| s.parse().expect("K"));
    let rounds: usize = args.get(5).map_or(3, |s| s.parse().expect("ROUNDS"));
    println!("{}: {steps} steps a world; load average {} at the start", scene.name, load());
    println!("| N | calls | steps/s, 1 thread | 2 threads | ratio | CPU µs/world step, 1 / 2 threads | slowest world / mean |");
    println!("| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    for &n in &ns {
        let spread = spread(&scene, n, steps);
        for (label, per_call) in [("one", steps), ("of K", k)] {
            let mut best = [(0.0, 0.0); 2];
            for _ in 0..rounds {
                for (i, threads) in [1, 2].into_iter().enumerate() {
                    let r = run(&scene, n, steps, per_call, threads);
                    if r.0 > best[i].0 {
                        best[i] = r;
                    }
                }
            }
            let calls = if label == "one" { "1".to_string() } else { format!("of {per_call} steps") };
            println!(
                "| {n} | {calls} | {:.0} | {:.0} | {:.2} | {:.2} / {:.2} | {spread:.2} |",
                best[0].0,
                best[1].0,
                best[1].0 / best[0].0,
                best[0].1,
                best[1].1
            );
        }
    }
    println!("load average {} at the end", load());
}
