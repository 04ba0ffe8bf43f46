//! The pages of `karakuri simulate --html` and `karakuri view --html` in a real browser:
//! headless Chromium loads each page from disk (software WebGL through SwiftShader) and the
//! test reads what the page wrote into its DOM (`#karakuri-status`, `data-errors`):
//!
//! * no script errors (window errors, failed loads, rejections, console.error);
//! * the 3-D view is not blank: pixels read back from the WebGL canvas after the render differ
//!   from the background and hold many colours;
//! * bodies are drawn elsewhere at `#t=0` than at `#t=END` (their projected screen positions
//!   from the drawn scene graph, and the pixels);
//! * the time slider and every plot's cursor (uPlot's own cursor state) show the same time.
//!
//! Pages: a validation scene (02_bounce), the bundled demo, a URDF model (UR5).
//! Without Chromium the test prints a note and passes, unless `CI=true` (then it fails):
//! `apt-get install chromium` (`.ci/run` installs it), or set `CHROMIUM` to the browser.

mod browser;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn karakuri(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_karakuri"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "karakuri {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The page's status attributes after loading `page#fragment`.
struct Status {
    attrs: BTreeMap<String, String>,
    errors: String,
    /// Each plot's drawn cursor line as read from the DOM, not from the page's report: (its
    /// x offset in the plotting area, that area's width), pixels.
    drawn_cursors: Vec<(f64, f64)>,
}

impl Status {
    fn get(&self, key: &str) -> &str {
        self.attrs.get(key).map_or("", String::as_str)
    }
    fn num(&self, key: &str) -> f64 {
        self.get(key).parse().unwrap_or(f64::NAN)
    }
    fn list(&self, key: &str) -> Vec<f64> {
        let v: serde_json::Value = serde_json::from_str(self.get(key)).unwrap_or_default();
        v.as_array()
            .into_iter()
            .flatten()
            .flat_map(|x| match x {
                serde_json::Value::Array(a) => a.iter().map(|y| y.as_f64().unwrap_or(f64::NAN)).collect(),
                y => vec![y.as_f64().unwrap_or(f64::NAN)],
            })
            .collect()
    }
}

fn load(browser: &Path, page: &Path, fragment: &str, profile: &Path) -> Status {
    let url = format!("file://{}{fragment}", page.canonicalize().unwrap().display());
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--window-size=1280,900",
            "--virtual-time-budget=4000",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &url,
        ])
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let tag_at = dom.find("id=\"karakuri-status\"").unwrap_or_else(|| {
        panic!(
            "{url}: no #karakuri-status in the DOM; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let start = dom[..tag_at].rfind('<').unwrap();
    let tag = &dom[start..start + dom[start..].find('>').unwrap()];
    let mut attrs = BTreeMap::new();
    let mut rest = tag;
    while let Some(i) = rest.find(" data-") {
        rest = &rest[i + 6..];
        let eq = rest.find("=\"").unwrap();
        let end = rest[eq + 2..].find('"').unwrap();
        let value = rest[eq + 2..eq + 2 + end].replace("&quot;", "\"").replace("&amp;", "&");
        attrs.insert(rest[..eq].to_string(), value);
        rest = &rest[eq + 2 + end..];
    }
    let html_errors = dom
        .find("data-errors=\"")
        .map(|i| dom[i + 13..].split('"').next().unwrap().to_string())
        .unwrap_or_default();
    let errors = match dom.find("<pre id=\"karakuri-errors\"") {
        Some(i) => {
            let body = &dom[i..];
            body[body.find('>').unwrap() + 1..body.find("</pre>").unwrap()].to_string()
        }
        None => String::new(),
    };
    assert_eq!(html_errors, "0", "{url}: script errors:\n{errors}");
    Status { attrs, errors, drawn_cursors: drawn_cursors(&dom) }
}

/// Every plot's cursor line and plotting area as the DOM has them: the `width` of uPlot's
/// `u-over` and the `translate(Xpx, …)` of the `u-cursor-x` inside it.
fn drawn_cursors(dom: &str) -> Vec<(f64, f64)> {
    let px = |s: &str, key: &str| -> f64 {
        let v = &s[s.find(key).map_or(s.len(), |i| i + key.len())..];
        v[..v.find("px").unwrap_or(0)].trim().parse().unwrap_or(f64::NAN)
    };
    let overs = dom.split("class=\"u-over\"").skip(1);
    overs.map(|over| (px(&over[over.find("u-cursor-x").unwrap_or(over.len())..], "translate("), px(over, "width:"))).collect()
}

/// Ready, no errors, and the view is not blank.
fn check_drawn(s: &Status, what: &str) {
    assert_eq!(
        s.get("ready"),
        "1",
        "{what}: the page did not finish ({:?}, errors: {})",
        s.attrs,
        s.errors
    );
    assert!(
        s.num("width") >= 400.0 && s.num("height") >= 300.0,
        "{what}: canvas {:?}",
        s.attrs
    );
    assert!(s.num("drawn") > 0.05, "{what}: view nearly blank: {:?}", s.attrs);
    assert!(s.num("colours") >= 20.0, "{what}: too few colours drawn: {:?}", s.attrs);
}

/// The slider and every plot's cursor are at `t`.
fn check_time(s: &Status, t: f64, what: &str) {
    let slider = s.num("slider");
    assert!((slider - t).abs() < 1e-6, "{what}: slider at {slider}, page time {t}");
    let cursors = s.list("cursors");
    assert!(cursors.len() >= 2, "{what}: plots {:?}", s.attrs);
    for c in cursors {
        // a pixel of a ~1000 px wide plot spans at most END/1000 s
        assert!(
            (c - slider).abs() <= 2e-3 * s.num("tend").max(1.0),
            "{what}: plot cursor at {c}, slider at {slider}"
        );
    }
    // the lines as drawn: the x scale runs over the recorded times, 0 to END
    assert!(s.drawn_cursors.len() >= 2, "{what}: no cursor lines in the DOM");
    for &(x, width) in &s.drawn_cursors {
        let expected = t / s.num("tend") * width;
        assert!((x - expected).abs() <= 2.0, "{what}: a cursor line drawn at {x} px of {width}, t = {t} is at {expected:.1} px");
    }
}

fn check_replay(browser: &Path, page: &Path, profile: &Path) {
    let what = page.display().to_string();
    let start = load(browser, page, "#t=0", profile);
    check_drawn(&start, &what);
    check_time(&start, 0.0, &what);
    let end_t = start.num("tend");
    assert!(end_t > 0.0, "{what}: {:?}", start.attrs);
    let end = load(browser, page, &format!("#t={end_t}"), profile);
    check_drawn(&end, &what);
    check_time(&end, end_t, &what);
    let (a, b) = (start.list("bodies"), end.list("bodies"));
    assert_eq!(a.len(), b.len());
    assert!(!a.is_empty(), "{what}: no moving bodies");
    let moved = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    assert!(moved > 0.02, "{what}: bodies on screen at t=0 {a:?} and at t=END {b:?}");
    assert_ne!(
        start.get("hash"),
        end.get("hash"),
        "{what}: the same pixels at t=0 and t=END"
    );
    let mid = load(browser, page, &format!("#t={}", end_t / 2.0), profile);
    check_time(&mid, end_t / 2.0, &what);
}

#[test]
fn pages_load_draw_and_agree_in_chromium() {
    let Some(browser) = browser::chromium("the viewer's browser test") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("karakuri-viewer-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("profile");

    let bounce = dir.join("bounce.html");
    let scene = repo().join("tests/scenes/02_bounce.json");
    karakuri(&["simulate", scene.to_str().unwrap(), "--html", bounce.to_str().unwrap()]);
    check_replay(&browser, &bounce, &profile);

    let demo = dir.join("demo.html");
    karakuri(&["simulate", "--html", demo.to_str().unwrap()]);
    check_replay(&browser, &demo, &profile);

    let ur5 = dir.join("ur5.html");
    let urdf = repo().join("tests/data/ur5.urdf");
    karakuri(&["view", urdf.to_str().unwrap(), "--html", ur5.to_str().unwrap()]);
    let s = load(&browser, &ur5, "", &profile);
    check_drawn(&s, "ur5 model page");
    assert_eq!(s.num("joints"), 6.0, "ur5: a slider per joint: {:?}", s.attrs);
    // framed at a readable scale (the model's box spans two thirds of the view one way, and
    // fits in it) with world +z up on screen (issue 31: "a small stick figure lying flat")
    let extent = s.list("extent");
    println!("ur5 model page: box spans {extent:?} of the view, +z up by {}", s.get("up"));
    assert!(extent.len() == 2 && extent.iter().cloned().fold(0.0, f64::max) >= 0.65, "ur5 framed at {extent:?} of the view");
    assert!(extent.iter().all(|&e| e <= 1.0), "ur5 leaves the view: {extent:?}");
    assert!(s.num("up") > 0.05, "world +z is not up on screen: {:?}", s.attrs);

    let _ = std::fs::remove_dir_all(&dir);
}
