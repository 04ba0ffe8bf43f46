//! `karakuri.viewer.launch(world)` / `viewer.sync()`: the live viewer of `karakuri-viewer`
//! (the page and server `karakuri simulate --live` serves) watching a world the user's own
//! loop steps, as MuJoCo's passive viewer does (0063). The class here is private
//! (`_LiveViewer`); `python/karakuri/viewer.py` is its Python face.

use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use karakuri_viewer::live::{Action, LiveSession, ServerOptions};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::sim::PyWorld;

/// The live viewer of one world: a server on 127.0.0.1 (its page at :attr:`url`) streaming
/// the world at each :meth:`sync`, at most 60 frames a second.
#[pyclass(name = "_LiveViewer", module = "karakuri.viewer")]
pub struct PyLiveViewer {
    // a `Mutex` only to make the class `Sync` as PyO3 requires
    session: Mutex<Option<LiveSession>>,
    world: Py<PyWorld>,
}

impl PyLiveViewer {
    fn with<T>(&self, f: impl FnOnce(&mut LiveSession) -> T) -> PyResult<T> {
        let mut s = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let s = s.as_mut().ok_or_else(|| PyValueError::new_err("the viewer is closed"))?;
        Ok(f(s))
    }
}

#[pymethods]
impl PyLiveViewer {
    #[new]
    #[pyo3(signature = (world, port = 0, host = "127.0.0.1", allow_remote = false))]
    fn new(py: Python<'_>, world: Py<PyWorld>, port: u16, host: &str, allow_remote: bool) -> PyResult<Self> {
        let host: IpAddr = host
            .parse()
            .map_err(|_| PyValueError::new_err(format!("host: '{host}' is not an IP address")))?;
        let options = ServerOptions { host, port, allow_remote };
        let session = {
            let w = world.borrow(py);
            let guard = w.world();
            let name = guard.scene().name.clone();
            let mut s = LiveSession::start(&guard, &options, &name).map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
            // the user's loop sets the pace; the page's "real time" box turns pacing on
            s.realtime = false;
            s.publish(&guard, true);
            s
        };
        Ok(PyLiveViewer { session: Mutex::new(Some(session)), world })
    }

    /// Shows the world as it is now to the pages (at most 60 frames a second) and applies what
    /// they asked since the last call: actuator targets, the mouse spring (a push on the next
    /// step), reset (the world as it was at launch). Returns False while a page has paused the
    /// run (a loop that honours pause steps only on True; the page's step button makes one call
    /// return True).
    fn sync(&self, py: Python<'_>) -> PyResult<bool> {
        let mut w = self.world.borrow_mut(py);
        let world = w.world_mut();
        let action = self.with(|s| {
            let a = s.poll(world);
            s.push_spring(world);
            s.publish(world, a == Action::Step);
            if a == Action::Run {
                s.pace(world);
            }
            a
        })?;
        if action == Action::Wait {
            // paused: a short wait without the GIL, so a loop of sync() calls does not spin
            py.detach(|| std::thread::sleep(Duration::from_millis(5)));
        }
        Ok(action != Action::Wait)
    }

    /// The page's address, ``http://127.0.0.1:PORT/``.
    #[getter]
    fn url(&self) -> PyResult<String> {
        self.with(|s| s.server().url())
    }

    /// The port the server listens on.
    #[getter]
    fn port(&self) -> PyResult<u16> {
        self.with(|s| s.server().addr().port())
    }

    /// Pages attached now.
    #[getter]
    fn pages(&self) -> PyResult<usize> {
        self.with(|s| s.server().pages())
    }

    /// A page paused the run.
    #[getter]
    fn paused(&self) -> PyResult<bool> {
        self.with(|s| s.paused)
    }

    /// False once :meth:`close` was called.
    fn is_running(&self) -> bool {
        self.session.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    /// Stops the server (the pages show "disconnected"); the world is untouched.
    fn close(&self) {
        self.session.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}
