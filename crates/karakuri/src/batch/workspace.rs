//! The bottom of the batch layer: [`BatchError`], the per-thread [`Slot`] of buffers and the
//! [`BatchWorkspace`] that holds one slot per thread.

use super::pool::Pool;
use super::rnea_derivatives_lanes::DerivLanes;
use super::{crba_lanes, kin_lanes, lanes};
use crate::algorithms::DerivativesWorkspace;
use crate::model::Model;
use std::sync::Mutex;

/// Why a batched call refused its arguments (nothing is computed then).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// An argument's length is not `n` times its per-state size (`n` read off `q`).
    #[error("argument '{arg}' has {got} numbers, expected {expected} ({states} states of {per_state} = {what})")]
    Shape {
        /// The argument.
        arg: &'static str,
        /// Its length.
        got: usize,
        /// The length it needs.
        expected: usize,
        /// The number of states.
        states: usize,
        /// Numbers per state.
        per_state: usize,
        /// What a state's entry is (`"nq"`, `"nv x nv"`, ...).
        what: &'static str,
    },
    /// `q`'s length is not a multiple of `nq`.
    #[error("argument 'q' has {got} numbers, not a multiple of nq = {nq}")]
    Ragged {
        /// Its length.
        got: usize,
        /// The model's nq.
        nq: usize,
    },
    /// The workspace was made for another model.
    #[error("the BatchWorkspace was made for a model of (nq, nv, njoints) = {made:?}, not {given:?}")]
    OtherModel {
        /// The sizes it was made for.
        made: (usize, usize, usize),
        /// The sizes of the model given.
        given: (usize, usize, usize),
    },
}

/// The buffers of one thread of a batched call.
pub(crate) struct Slot {
    pub(crate) derivatives: DerivativesWorkspace,
    pub(crate) lanes: lanes::LaneWorkspace,
    pub(crate) derivs: DerivLanes,
    pub(crate) kin: kin_lanes::KinWorkspace,
    pub(crate) crba: crba_lanes::CrbaWorkspace,
}

impl Slot {
    fn new(model: &Model) -> Self {
        Slot {
            derivatives: DerivativesWorkspace::new(model),
            lanes: lanes::LaneWorkspace::new(model),
            derivs: DerivLanes::new(model),
            kin: kin_lanes::KinWorkspace::new(model),
            crba: crba_lanes::CrbaWorkspace::new(model),
        }
    }
}

/// Every buffer of the batched functions for one [`Model`] and a number of threads, allocated
/// once by [`BatchWorkspace::new`] and reused by every call whatever its number of states, and
/// the `threads − 1` worker threads that help the calling thread: spawned with the workspace,
/// asleep between calls (after spinning 200 µs for a next one), joined when it is dropped.
pub struct BatchWorkspace {
    /// One slot per thread, the caller's first; each locked by its own thread only. A
    /// workspace shrunk by [`BatchWorkspace::set_threads`] keeps its slots and workers.
    slots: Vec<Mutex<Slot>>,
    pool: Pool,
    /// The threads a call uses at most (slots and workers beyond are kept idle).
    threads: usize,
    sizes: (usize, usize, usize),
}

/// A workspace moves between threads (the Python binding keeps them in a shared cache).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<BatchWorkspace>();
};

impl BatchWorkspace {
    /// Buffers for `threads` threads (0 is taken as 1), and `threads − 1` worker threads.
    pub fn new(model: &Model, threads: usize) -> Self {
        let t = threads.max(1);
        let slots = (0..t).map(|_| Mutex::new(Slot::new(model))).collect();
        BatchWorkspace { slots, pool: Pool::new(t - 1), threads: t, sizes: sizes(model) }
    }

    /// The number of threads a call uses at most.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sets the number of threads a call uses at most (0 is taken as 1). Growing allocates the
    /// slots and spawns the workers it has never had; shrinking keeps them (asleep), so
    /// alternating thread counts costs nothing after the largest.
    pub fn set_threads(&mut self, model: &Model, threads: usize) -> Result<(), BatchError> {
        self.check(model)?;
        self.threads = threads.max(1);
        while self.slots.len() < self.threads {
            self.slots.push(Mutex::new(Slot::new(model)));
        }
        if self.pool.len() < self.threads - 1 {
            self.pool.resize(self.threads - 1);
        }
        Ok(())
    }

    pub(crate) fn check(&self, model: &Model) -> Result<(), BatchError> {
        if self.sizes == sizes(model) {
            Ok(())
        } else {
            Err(BatchError::OtherModel { made: self.sizes, given: sizes(model) })
        }
    }

    pub(crate) fn slots(&mut self, model: &Model) -> Result<Slots<'_>, BatchError> {
        self.check(model)?;
        Ok(Slots { slots: &mut self.slots[..self.threads], pool: &mut self.pool })
    }
}

pub(crate) fn sizes(model: &Model) -> (usize, usize, usize) {
    (model.nq, model.nv, model.njoints)
}

/// The slots and workers of a workspace checked against the model of the call.
pub(crate) struct Slots<'a> {
    pub(crate) slots: &'a mut [Mutex<Slot>],
    pub(crate) pool: &'a mut Pool,
}
