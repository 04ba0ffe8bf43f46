//! `karakuri simulate SCENE --live`: the run loop of a watched run ([`run_live`]); the server,
//! the page and the controls are `karakuri_viewer::live` (0063).

use std::io::Write as _;
use std::time::Duration;

use anyhow::Result;
use karakuri_viewer::live::{Action, LiveSession, ServerOptions};

use super::{start_world, SimulateArgs};

/// Runs the scene of `args` watched by the live viewer on `options`: prints the page's address,
/// then steps as the page says (paused, one step, real time or as fast as possible) until
/// Ctrl-C, or until `--duration` when it is given. A step that fails (its state restored)
/// pauses the run and shows the error on the page.
pub fn run_live(args: &SimulateArgs, options: &ServerOptions) -> Result<std::process::ExitCode> {
    let (mut world, name, _, n) = start_world(args)?;
    let end = args.duration.map(|_| n);
    let mut session = LiveSession::start(&world, options, &name)?;
    println!("live viewer      {} (Ctrl-C to stop)", session.server().url());
    std::io::stdout().flush()?;
    session.publish(&world, true);
    loop {
        let action = session.poll(&mut world);
        if action == Action::Wait {
            session.publish(&world, false);
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        session.push_spring(&mut world);
        if let Err(e) = world.step() {
            eprintln!("error: t = {} s: {e}; paused", world.time());
            session.fail(&e.to_string());
        }
        session.publish(&world, action == Action::Step);
        if end.is_some_and(|n| world.steps() >= n) {
            session.publish(&world, true);
            println!("live run ended  t = {} s ({} steps)", world.time(), world.steps());
            return Ok(std::process::ExitCode::SUCCESS);
        }
        session.pace(&world);
    }
}
