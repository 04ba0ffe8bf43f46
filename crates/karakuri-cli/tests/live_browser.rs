//! `karakuri simulate SCENE --live` watched and steered by headless Chromium (0063): the test
//! drives the browser over the DevTools protocol (a WebSocket, tungstenite's client), opens the
//! printed page, and reads what the page writes into `#karakuri-status` (`data-live`,
//! `data-time`, `data-paused`, `data-joints`, `data-poses`, `data-screen`):
//!
//! * the page connects and the shown time advances;
//! * its pause button stops the world (time and steps stay), its step button takes one step;
//! * a slider moves its joint to the slider's value (the arm of `tests/scenes/live_arm.yaml`);
//! * ctrl+drag on the box (pointer events on the canvas) moves the box;
//! * a second page attaches; closing the first leaves the run and the second page going.
//!
//! Without Chromium the test prints a note and passes, unless `CI=true` (then it fails):
//! `apt-get install chromium` (`.ci/run` installs it), or set `CHROMIUM` to the browser.
//! A non-loopback address is refused without a browser.

mod browser;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A child process killed when dropped.
struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `karakuri simulate live_arm.yaml --live --port 0`, and the page's address it printed.
fn start_sim() -> (Killed, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_karakuri"))
        .args(["simulate", repo().join("tests/scenes/live_arm.yaml").to_str().unwrap(), "--live", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).unwrap_or_else(|| panic!("no address in {line:?}"));
    (Killed(child), url.to_string())
}

/// Chromium over the DevTools protocol.
struct Browser {
    ws: WebSocket<TcpStream>,
    next: u64,
    _child: Killed,
    _profile: PathBuf,
}

impl Browser {
    fn launch(exe: &Path) -> Browser {
        let profile = std::env::temp_dir().join(format!("karakuri-live-browser-{}", std::process::id()));
        let mut child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-dev-shm-usage",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--window-size=1280,900",
                "--remote-debugging-port=0",
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("run chromium");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let url = loop {
            line.clear();
            assert!(err.read_line(&mut line).unwrap() > 0, "chromium ended without a DevTools address");
            if let Some(i) = line.find("ws://") {
                break line[i..].trim().to_string();
            }
        };
        // keep draining its stderr
        std::thread::spawn(move || for _ in err.lines() {});
        let host = url.trim_start_matches("ws://").split('/').next().unwrap().to_string();
        let stream = TcpStream::connect(&host).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let (ws, _) = tungstenite::client(url.as_str(), stream).unwrap();
        Browser { ws, next: 0, _child: Killed(child), _profile: profile }
    }

    /// One DevTools call (on a page's session when given); its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let Message::Text(t) = self.ws.read().unwrap() else { continue };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["id"] == self.next {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Opens `url` in a new page: its target and session.
    fn open(&mut self, url: &str) -> (String, String) {
        let target = self.call(None, "Target.createTarget", json!({"url": url}))["targetId"].as_str().unwrap().to_string();
        let session = self.call(None, "Target.attachToTarget", json!({"targetId": target, "flatten": true}))["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        (target, session)
    }

    fn eval(&mut self, session: &str, expr: &str) -> Value {
        let r = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// `#karakuri-status`'s data attributes and the page's recorded errors.
    fn status(&mut self, session: &str) -> Value {
        self.eval(
            session,
            "(() => { const s = document.getElementById('karakuri-status'); \
             return s ? Object.assign({}, s.dataset, {errors: (document.getElementById('karakuri-errors') || {}).textContent || ''}) : {}; })()",
        )
    }

    /// Polls the status until `ok` holds (30 s at most); the status then.
    fn wait(&mut self, session: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
        let t0 = Instant::now();
        loop {
            let s = self.status(session);
            if ok(&s) {
                return s;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "waited 30 s for {what}; status {s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn num(s: &Value, key: &str) -> f64 {
    s[key].as_str().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN)
}
fn list(s: &Value, key: &str) -> Vec<f64> {
    let v: Value = serde_json::from_str(s[key].as_str().unwrap_or("[]")).unwrap_or_default();
    let mut out = Vec::new();
    for x in v.as_array().into_iter().flatten() {
        match x {
            Value::Array(a) => out.extend(a.iter().map(|y| y.as_f64().unwrap_or(f64::NAN))),
            y => out.push(y.as_f64().unwrap_or(f64::NAN)),
        }
    }
    out
}

#[test]
fn the_live_page_shows_and_steers_the_running_simulation() {
    let Some(exe) = browser::chromium("the live viewer's browser test") else {
        return;
    };
    let (mut sim, url) = start_sim();
    let mut b = Browser::launch(&exe);
    let (first, page) = b.open(&url);
    let live = |s: &Value| s["live"] == "1" && s["connected"] == "1" && num(s, "time") > 0.0;
    let s = b.wait(&page, "the page to connect", live);
    assert_eq!(s["errors"], "", "script errors: {s}");
    // the shown time advances
    let t0 = num(&s, "time");
    let s = b.wait(&page, "the time to advance", |s| num(s, "time") > t0 + 0.1);
    assert_eq!(s["paused"], "0");

    // pause stops the world; one step takes exactly one
    b.eval(&page, "document.getElementById('kk-play').click()");
    let s = b.wait(&page, "pause", |s| s["paused"] == "1");
    let (t_paused, steps) = (num(&s, "time"), num(&s, "steps"));
    std::thread::sleep(Duration::from_millis(700));
    let s = b.status(&page);
    assert_eq!((num(&s, "time"), num(&s, "steps")), (t_paused, steps), "paused: {s}");
    b.eval(&page, "document.getElementById('kk-step').click()");
    let s = b.wait(&page, "one step", |s| num(s, "steps") > steps);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(num(&b.status(&page), "steps"), steps + 1.0, "{s}");
    b.eval(&page, "document.getElementById('kk-play').click()");
    b.wait(&page, "play", |s| s["paused"] == "0");

    // the shoulder's slider to 1 rad: the arm follows
    let q0 = list(&b.status(&page), "joints")[0];
    assert!(q0.abs() < 0.05, "the arm starts hanging: {q0}");
    b.eval(
        &page,
        "(() => { const i = document.querySelector('input[data-joint=\"0\"]'); i.value = '1'; \
         i.dispatchEvent(new Event('input')); })()",
    );
    let s = b.wait(&page, "the arm to reach the slider's 1 rad", |s| (list(s, "joints")[0] - 1.0).abs() < 0.05);
    assert_eq!(s["errors"], "");

    // ctrl+drag the box 150 px to the right on screen: it slides
    let s = b.status(&page);
    let (screen, p0) = (list(&s, "screen"), list(&s, "poses"));
    let (x, y) = (screen[0], screen[1]);
    b.eval(
        &page,
        &format!(
            "(() => {{ const c = document.querySelector('.kk-view canvas'); \
             const ev = (type, x, y) => c.dispatchEvent(new PointerEvent(type, {{clientX: x, clientY: y, ctrlKey: true, \
             button: 0, buttons: 1, pointerId: 7, isPrimary: true, bubbles: true, cancelable: true}})); \
             ev('pointerdown', {x}, {y}); ev('pointermove', {x} + 75, {y}); ev('pointermove', {x} + 150, {y}); }})()"
        ),
    );
    let moved = |s: &Value| {
        let p = list(s, "poses");
        ((p[0] - p0[0]).powi(2) + (p[1] - p0[1]).powi(2)).sqrt() > 0.15
    };
    let s = b.wait(&page, "the dragged box to move 0.15 m", moved);
    b.eval(
        &page,
        &format!(
            "document.querySelector('.kk-view canvas').dispatchEvent(new PointerEvent('pointerup', \
             {{clientX: {x} + 150, clientY: {y}, pointerId: 7, bubbles: true}}))"
        ),
    );
    assert!((list(&s, "poses")[2] - p0[2]).abs() < 0.05, "the box stays on the floor: {s}");

    // a second page attaches; closing the first leaves the run going
    let (_, second) = b.open(&url);
    let s = b.wait(&second, "the second page", live);
    assert_eq!(s["errors"], "");
    b.call(None, "Target.closeTarget", json!({"targetId": first}));
    let t1 = num(&b.status(&second), "time");
    let s = b.wait(&second, "the run to go on after the first page closed", |s| num(s, "time") > t1 + 0.2);
    b.wait(&second, "one page attached", |s| s["pages"] == "1");
    assert!(sim.0.try_wait().unwrap().is_none(), "the simulation still runs: {s}");
}

#[test]
fn a_live_server_elsewhere_than_loopback_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_karakuri"))
        .args(["simulate", repo().join("tests/scenes/live_arm.yaml").to_str().unwrap(), "--live", "--host", "0.0.0.0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("loopback") && err.contains("--live-allow-remote"), "{err}");
}
