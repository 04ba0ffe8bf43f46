use karakuri_sim::{Engine, NativeEngine, Scene};
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let scene = Scene::from_file(&path).unwrap();
    let mut e = NativeEngine::new(&scene).unwrap();
    e.time_stages(true).unwrap();
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1000);
    let mut its = 0;
    let mut maxit = 0;
    let mut t = karakuri_sim::StageTimes::default();
    for k in 0..n {
        e.step().unwrap();
        let s = e.last_solve();
        its += s.iterations;
        maxit = maxit.max(s.iterations);
        t.add(&e.report().stage_times);
        if k % (n / 10).max(1) == 0 {
            println!(
                "step {k} contacts {} its {} res {:.2e} direct {}",
                e.contacts().len(),
                s.iterations,
                s.residual,
                s.direct
            );
        }
    }
    println!("mean its {} max {}", its as f64 / n as f64, maxit);
    println!("{:?}", t);
}
