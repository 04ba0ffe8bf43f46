//! `karakuri simulate --worlds N --seed S` through the library (issue 14, item 5).

use karakuri_cli::simulate::{simulate, simulate_batch, BatchArgs, SimulateArgs};

#[test]
fn world_0_of_a_batch_ends_where_the_single_run_ends_and_the_others_spread() {
    let args = SimulateArgs {
        duration: Some(0.2),
        ..Default::default()
    };
    let single = simulate(&args, &mut |_| {}).unwrap();
    let mut last = 0.0;
    let batch = simulate_batch(&args, &BatchArgs { worlds: 3, seed: 5 }, &mut |f| last = f).unwrap();
    assert_eq!((batch.worlds, batch.steps, last), (3, 200, 1.0), "{batch}");
    // world 0 is the scene itself, stepped on a pool thread: bit-identical to the single run
    assert_eq!(batch.energy.0.to_bits(), single.energy.0.to_bits());
    assert_eq!(batch.energy.1.to_bits(), single.energy.1.to_bits(), "{batch}\n{single}");
    // the perturbed worlds end elsewhere, but close (±1 mm, ±1 mrad at the start)
    let (lo, hi) = batch.energy_range;
    assert!(lo < hi, "the worlds did not differ: {batch}");
    assert!(hi - lo < 0.05 * single.energy.1.abs().max(1.0), "the perturbation is not small: {batch}");
    assert!(batch.steps_per_second > 0.0 && batch.cpu_time > 0.0, "{batch}");
}

#[test]
fn a_batch_refuses_the_one_world_outputs_and_zero_worlds() {
    let one = BatchArgs { worlds: 2, seed: 0 };
    for (args, flag) in [
        (SimulateArgs { out: Some("t.csv".into()), ..Default::default() }, "--out"),
        (SimulateArgs { steps: Some("s.csv".into()), ..Default::default() }, "--steps"),
    ] {
        let e = simulate_batch(&args, &one, &mut |_| {}).unwrap_err().to_string();
        assert!(e.starts_with(flag) && e.contains("--worlds"), "{e}");
    }
    let e = simulate_batch(&SimulateArgs::default(), &BatchArgs { worlds: 0, seed: 0 }, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("at least 1"), "{e}");
    let e = karakuri_cli::simulate::run_batch(&SimulateArgs::default(), &one, Some("r.html".as_ref())).unwrap_err();
    assert!(e.to_string().starts_with("--html"), "{e}");
}
