//! Headless Chromium for the page tests (`viewer_browser.rs`, `live_browser.rs`): where it is,
//! and what a test does without it.

use std::path::PathBuf;

/// The browser (`CHROMIUM`, else the first of the usual names on `PATH`), or `None` with a
/// note on stderr that `test` is skipped. Under `CI=true` a missing browser fails the test:
/// `.ci/run` installs it.
pub fn chromium(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("CHROMIUM").map(PathBuf::from).or_else(|| {
        let path = std::env::var_os("PATH")?;
        ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
            .iter()
            .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true and no Chromium for {test}: install the `chromium` package (.ci/run does) or set CHROMIUM");
        }
        eprintln!("note: {test} skipped: no chromium on PATH (apt-get install chromium, or set CHROMIUM)");
    }
    found
}
