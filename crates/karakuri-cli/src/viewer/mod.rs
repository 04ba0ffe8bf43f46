//! Pages to look at: `karakuri simulate SCENE --html FILE` (a replay of the run with plots) and
//! `karakuri view MODEL.urdf --html FILE` (a URDF with a slider per joint; a Choreonoid `.body`
//! as its start frame).
//!
//! Each page is one self-contained HTML file that opens from disk with no server and no
//! network: three.js draws the bodies, uPlot the plots, both embedded from the copies in
//! `crates/karakuri-viewer/assets/vendor/` ([`page`]). The data is JSON with base64 arrays.
//! The page, the recorder and the live server (`simulate --live`) live in the `karakuri-viewer`
//! crate, shared with the Python package (0063):
//!
//! * [`Recorder`] takes a run's frames at display rate through the `World` API (body states,
//!   contacts, energy) and the scene's shape descriptions;
//! * [`looks`] turns scene shapes and URDF visuals into what the page draws;
//! * [`model`] reads a URDF for the model page;
//! * `crates/karakuri-viewer/assets/viewer/viewer.js` is the page's program (both kinds), `errors.js` records script
//!   errors into the page (`#karakuri-errors`), and `#karakuri-status` carries what the browser
//!   tests read (time, slider, plot cursor, pixels drawn, bodies on screen).

pub mod model;

use std::path::Path;

pub use karakuri_viewer::{looks, page, Recorder};

/// Writes a page; its size in bytes.
pub fn write_page(path: &Path, data: &serde_json::Value) -> anyhow::Result<usize> {
    let title = data["title"].as_str().unwrap_or("karakuri");
    let html = page::render(&format!("{title} · karakuri"), data);
    std::fs::write(path, &html).map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    Ok(html.len())
}

/// `karakuri view MODEL --html FILE [--package-dir DIR ...]`.
pub fn view(
    model: &Path,
    floating: bool,
    package_dirs: &[std::path::PathBuf],
    html: &Path,
) -> anyhow::Result<std::process::ExitCode> {
    let data = if model.extension().is_some_and(|e| e.eq_ignore_ascii_case("body")) {
        body_page(model)?
    } else {
        model::page_data(model, floating, package_dirs)?
    };
    let bytes = write_page(html, &data)?;
    print_written(html, bytes, &data);
    Ok(std::process::ExitCode::SUCCESS)
}

/// A Choreonoid `.body` file's page: its scene alone (on a floor, at its standard pose) as one
/// frame, its collision shapes drawn (VRML visuals are not read; no sliders).
fn body_page(path: &Path) -> anyhow::Result<serde_json::Value> {
    let world = karakuri_sim::World::from_file(path)?;
    let mut rec = Recorder::new();
    rec.observe(&world, true);
    Ok(rec.into_page_data(&format!("{}: the start (standard pose)", path.display())))
}

/// Tells where the page is, how big, and what it could not draw.
pub fn print_written(html: &Path, bytes: usize, data: &serde_json::Value) {
    println!(
        "page             {} ({:.2} MB); open it in a browser",
        html.display(),
        bytes as f64 / 1e6
    );
    let notes: Vec<&str> = data["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .collect();
    for n in notes.iter().take(3) {
        eprintln!("note: {n}");
    }
    if notes.len() > 3 {
        eprintln!(
            "note: ... and {} more, listed in the page (Run summary and notes)",
            notes.len() - 3
        );
    }
}
