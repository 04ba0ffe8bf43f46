//! karakuri's pages to look at, shared by the `karakuri` command and the Python package (0063).
//!
//! * [`page`]: one self-contained HTML page: the viewer's script and style, three.js and uPlot
//!   embedded from the copies in `assets/vendor/`, and the data of a replay, a model or a live
//!   session as JSON with base64 arrays;
//! * [`Recorder`] takes a run's frames at display rate through the `World` API (body states,
//!   contacts, energy) and the scene's shape descriptions: the replay page of
//!   `karakuri simulate --html`;
//! * [`looks`] turns scene shapes and URDF visuals into what the page draws;
//! * [`live`]: `karakuri simulate --live` and `karakuri.viewer.launch(world)`: a local server
//!   (127.0.0.1 by default) that serves the same page and streams a running `World`'s poses,
//!   contacts and plot values over a WebSocket, and takes the page's commands back (pause, step,
//!   reset, real time, a mouse spring, actuator targets).
//!
//! `assets/viewer/viewer.js` is the page's program (replay, model and live; `live.js` is its
//! live part), `errors.js` records script errors into the page (`#karakuri-errors`), and
//! `#karakuri-status` carries what the browser tests read.
#![warn(missing_docs)]

pub mod live;
pub mod looks;
pub mod page;
mod record;

pub use record::Recorder;
