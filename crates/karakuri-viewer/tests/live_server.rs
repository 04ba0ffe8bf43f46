//! The live viewer's server and protocol without a browser (0063): a `LiveSession` on the
//! `tests/scenes/live_arm.yaml` world, stepped here, read and steered by WebSocket clients
//! (tungstenite's client) and plain HTTP requests, as the page does.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use karakuri_sim::World;
use karakuri_viewer::live::{Action, LiveSession, ServerOptions};
use serde_json::Value;
use tungstenite::{Message, WebSocket};

fn world() -> World {
    World::from_file(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenes/live_arm.yaml")).unwrap()
}

fn http_get(port: u16, path: &str, host: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn client(port: u16) -> WebSocket<TcpStream> {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (ws, _) = tungstenite::client(format!("ws://127.0.0.1:{port}/ws"), s).unwrap();
    ws
}

fn send(ws: &mut WebSocket<TcpStream>, json: &str) {
    ws.send(Message::text(json)).unwrap();
}

/// A client reading frames on its own thread; the newest frame on request.
struct Reader {
    frames: mpsc::Receiver<Value>,
    newest: Option<Value>,
}
impl Reader {
    fn start(mut ws: WebSocket<TcpStream>) -> Reader {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok(m) = ws.read() {
                if let Message::Text(t) = m {
                    if tx.send(serde_json::from_str(t.as_str()).unwrap()).is_err() {
                        return;
                    }
                }
            }
        });
        Reader { frames: rx, newest: None }
    }
    fn newest(&mut self) -> &Value {
        while let Ok(f) = self.frames.try_recv() {
            self.newest = Some(f);
        }
        self.newest.as_ref().expect("a frame")
    }
    fn count(&mut self) -> usize {
        let mut n = 0;
        while let Ok(f) = self.frames.try_recv() {
            self.newest = Some(f);
            n += 1;
        }
        n
    }
}

/// Steps as the CLI's loop does, `steps` times (those the page lets run), publishing each step.
fn run(session: &mut LiveSession, world: &mut World, steps: usize) -> usize {
    let mut taken = 0;
    for _ in 0..steps {
        match session.poll(world) {
            Action::Wait => std::thread::sleep(Duration::from_millis(1)),
            _ => {
                session.push_spring(world);
                world.step().unwrap();
                taken += 1;
            }
        }
        session.publish(world, true);
    }
    taken
}

/// Waits (up to 5 s) until the server has queued what a client sent.
fn settle() {
    std::thread::sleep(Duration::from_millis(100));
}

#[test]
fn the_page_is_served_on_loopback_and_frames_follow_the_world() {
    let mut world = world();
    let mut session = LiveSession::start(&world, &ServerOptions::default(), "live_arm").unwrap();
    let addr = session.server().addr();
    assert_eq!(addr.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    let port = addr.port();
    assert_ne!(port, 0, "port 0 means any free port");
    let page = http_get(port, "/", &format!("127.0.0.1:{port}"));
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{}", &page[..200.min(page.len())]);
    assert!(page.contains("\"kind\":\"live\"") && page.contains("id=\"karakuri-status\""));
    assert!(page.contains("\"sliders\":[{\"joint\":0,") && page.contains("\"name\":\"shoulder\""));
    assert!(http_get(port, "/nothing", &format!("localhost:{port}")).starts_with("HTTP/1.1 404"));
    // a page of another site that resolves its name to 127.0.0.1 (DNS rebinding) is refused
    assert!(http_get(port, "/", &format!("evil.example:{port}")).starts_with("HTTP/1.1 403"));

    let mut page = Reader::start(client(port));
    settle();
    assert_eq!(session.server().pages(), 1);
    run(&mut session, &mut world, 50);
    settle();
    let f = page.newest().clone();
    assert_eq!(f["t"].as_f64().unwrap(), world.time(), "the newest frame is the world's time");
    assert_eq!(f["steps"], 50);
    // 2 moving bodies, 7 numbers each: position then quaternion xyzw, the box at x = 0.6
    let p: Vec<f64> = f["p"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(p.len(), 14);
    let b = world.body_index("box").unwrap();
    let k = (0..b).filter(|&i| !world.bodies()[i].is_static).count();
    assert!((p[7 * k] - world.states()[b].pose.translation.x).abs() < 1e-6);
    assert!((p[7 * k] - 0.6).abs() < 1e-3, "{p:?}");
    assert_eq!(f["q"].as_array().unwrap().len(), 1, "one joint position");
    assert_eq!(f["nc"].as_u64().unwrap() as usize, world.contacts().len());
}

#[test]
fn commands_pause_step_reset_set_targets_and_drag() {
    let mut world = world();
    let mut session = LiveSession::start(&world, &ServerOptions::default(), "live_arm").unwrap();
    let port = session.server().addr().port();
    let mut ws = client(port);
    // pause: no step is taken
    send(&mut ws, r#"{"cmd":"pause"}"#);
    settle();
    assert_eq!(run(&mut session, &mut world, 20), 0);
    assert_eq!(world.steps(), 0);
    // one step while paused
    send(&mut ws, r#"{"cmd":"step"}"#);
    settle();
    assert_eq!(run(&mut session, &mut world, 20), 1);
    assert!(session.paused);
    send(&mut ws, r#"{"cmd":"play"}"#);
    settle();
    // a slider: the servo's target, the arm follows (kp 60: gravity sags it by < 0.04 rad)
    send(&mut ws, r#"{"cmd":"target","joint":0,"value":1.0}"#);
    settle();
    run(&mut session, &mut world, 1000);
    let q = world.joint_position("shoulder").unwrap();
    assert!((q - 1.0).abs() < 0.05, "shoulder at {q} rad, target 1");
    // the mouse spring: the box's centre pulled 0.5 m along +y at its height
    let b = world.body_index("box").unwrap();
    let p0 = world.states()[b].pose.translation;
    send(
        &mut ws,
        &format!(
            r#"{{"cmd":"drag","body":{b},"local":[0,0,0],"target":[{},{},{}]}}"#,
            p0.x,
            p0.y + 0.5,
            p0.z
        ),
    );
    settle();
    run(&mut session, &mut world, 1000);
    let p1 = world.states()[b].pose.translation;
    assert!(p1.y - p0.y > 0.3 && (p1.x - p0.x).abs() < 0.05, "{p0:?} -> {p1:?}");
    send(&mut ws, r#"{"cmd":"release"}"#);
    // reset: back to the start
    send(&mut ws, r#"{"cmd":"reset"}"#);
    settle();
    session.poll(&mut world);
    assert_eq!(world.steps(), 0);
    assert!((world.states()[b].pose.translation - World::from_file(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenes/live_arm.yaml")).unwrap().states()[b].pose.translation).norm() < 1e-12);
    // bad messages change nothing and break nothing
    send(&mut ws, "{not json");
    send(&mut ws, r#"{"cmd":"drag","body":0,"local":[0,0,0],"target":[0,0,9]}"#); // the floor: static
    send(&mut ws, r#"{"cmd":"target","joint":7,"value":1}"#);
    settle();
    assert_eq!(run(&mut session, &mut world, 10), 10);
}

#[test]
fn slow_closed_and_second_pages_never_hold_the_simulation() {
    let mut world = world();
    let mut session = LiveSession::start(&world, &ServerOptions::default(), "live_arm").unwrap();
    let port = session.server().addr().port();
    // a page that never reads its socket
    let _stalled = client(port);
    let mut first = Reader::start(client(port));
    settle();
    assert_eq!(session.server().pages(), 2);
    // 20 000 steps published one by one (as fast as they come): never blocked by the stalled page
    let t0 = Instant::now();
    assert_eq!(run(&mut session, &mut world, 20_000), 20_000);
    let elapsed = t0.elapsed();
    settle();
    let got = first.count();
    assert!(got > 0 && got < 20_000, "frames are dropped, not queued: {got} sent for 20 000 steps");
    assert_eq!(first.newest()["steps"], 20_000, "the newest frame arrives");
    // the reading page closes: the run goes on, a second page attaches and gets frames
    drop(first);
    let mut second = Reader::start(client(port));
    settle();
    run(&mut session, &mut world, 10);
    settle();
    assert_eq!(second.newest()["steps"], 20_010);
    eprintln!("20 000 steps published with a stalled page in {elapsed:?}");
}

#[test]
fn other_addresses_than_loopback_are_refused_unless_allowed() {
    let world = world();
    let anywhere = ServerOptions { host: IpAddr::V4(Ipv4Addr::UNSPECIFIED), ..Default::default() };
    let err = LiveSession::start(&world, &anywhere, "x").err().expect("refused").to_string();
    assert!(err.contains("loopback") && err.contains("0.0.0.0"), "{err}");
    let allowed = ServerOptions { allow_remote: true, ..anywhere };
    let session = LiveSession::start(&world, &allowed, "x").unwrap();
    assert!(session.server().addr().ip().is_unspecified());
    // a port in use is an error naming it
    let port = session.server().addr().port();
    let taken = ServerOptions { port, allow_remote: true, ..anywhere };
    let err = LiveSession::start(&world, &taken, "x").err().expect("in use").to_string();
    assert!(err.contains(&port.to_string()), "{err}");
}
