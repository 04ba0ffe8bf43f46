//! The live viewer: a running `World` watched and steered from a browser (0063).
//!
//! [`LiveServer`] listens on a loopback address (127.0.0.1; another address only when the
//! caller says so explicitly: the server has no authentication) and serves, on one port:
//!
//! * `GET /`: the viewer page ([`crate::page`]) with the world's bodies and shapes, kind `live`;
//! * `GET /ws` with a WebSocket upgrade (tungstenite, synchronous, one thread per page): text
//!   messages, server to page one JSON frame at a time (time, moving bodies' poses, contacts,
//!   energy, joint positions, sensor readings; [`LiveSession::publish`]), page to server one
//!   JSON [`Command`] each (pause, play, step, reset, real time, drag, release, target).
//!
//! The simulation thread never waits for a page: [`LiveServer::publish`] swaps the newest frame
//! into a slot under a lock held for a pointer swap, and each page's thread sends the newest
//! frame when its socket can take it, dropping those in between (frames are dropped, never
//! steps). A page that closes or stalls costs its own thread only; any number can attach.
//!
//! [`LiveSession`] is the part both front ends share: the server plus the state of the page's
//! controls (paused, real time, the mouse spring, the sliders' targets), applied to the world
//! through its public API (`World::apply_wrench` for one step: the spring is a push the world
//! records like the scene's perturbations; `World::set_one_dof_target` for a slider).

mod command;
mod server;
mod session;

pub use command::Command;
pub use server::{LiveServer, ServerOptions};
pub use session::{Action, LiveSession, SPRING_HZ};
