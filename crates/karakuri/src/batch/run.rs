//! The driver of every batched call: argument lengths checked, the states cut into small
//! chunks of consecutive states (a multiple of the lane count) that the calling thread and the
//! workspace's kept worker threads (`pool.rs`) claim one after another from a shared queue, each
//! chunk handed to the call's kernel with the claiming thread's slot of buffers and its rows of
//! every argument. A worker that wakes late claims fewer chunks instead of holding up the call
//! (record 0075; before, one fixed half per thread: 1.50x on two threads for ur5 RNEA). A scoped
//! thread spawned per call cost 20–50 µs (0068); rayon's pool, asleep between calls and its
//! caller asleep on a latch for the last chunk, a few µs per call, a tenth of 1024 states of
//! forward kinematics (0100).

use super::lanes::LANES;
use super::workspace::{BatchError, Slot, Slots};
use crate::model::Model;
use std::sync::{Mutex, PoisonError};

/// Fewer states than this per thread and handing a chunk to another thread (a few µs) costs more
/// than it saves.
const MIN_STATES_PER_THREAD: usize = 32;
/// The states of one claim: at least this many (a claim locks a mutex, tens of ns) ...
const MIN_CHUNK: usize = 16;
/// ... at most this many (the last claims decide how evenly the threads finish).
const MAX_CHUNK: usize = 64;
/// The last states, which only the calling thread claims: a caller that runs out of work
/// waits (spinning) for the workers' last chunks; with the tail its own it is usually still
/// working when they finish (record 0085).
const CALLERS_TAIL: usize = MIN_CHUNK;

/// An input: name, numbers, numbers per state, what a state's entry is.
pub(crate) type In<'a> = (&'static str, &'a [f64], usize, &'static str);
/// An output, likewise.
pub(crate) type Out<'a> = (&'static str, &'a mut [f64], usize, &'static str);

/// The rows not yet claimed: every argument's rest, the states left.
struct Queue<'a, 'b, const I: usize, const O: usize> {
    ins: [&'a [f64]; I],
    outs: [&'b mut [f64]; O],
    left: usize,
}

/// A claim: its number of states and its rows of every argument.
type Claim<'a, 'b, const I: usize, const O: usize> = (usize, [&'a [f64]; I], [&'b mut [f64]; O]);

impl<'a, 'b, const I: usize, const O: usize> Queue<'a, 'b, I, O> {
    /// The next chunk of states, `None` when no more than `keep` are left: about a
    /// `2 threads`-th of what is left, within [`MIN_CHUNK`, `MAX_CHUNK`] (the chunks shrink
    /// towards the end, so that the threads finish together).
    fn claim(&mut self, threads: usize, keep: usize, per_in: &[usize; I], per_out: &[usize; O]) -> Option<Claim<'a, 'b, I, O>> {
        if self.left <= keep {
            return None;
        }
        let chunk = (self.left / (2 * threads)).clamp(MIN_CHUNK, MAX_CHUNK).next_multiple_of(LANES);
        let k = chunk.min(self.left);
        self.left -= k;
        let mut head_in: [&[f64]; I] = [&[]; I];
        for i in 0..I {
            (head_in[i], self.ins[i]) = self.ins[i].split_at(k * per_in[i]);
        }
        let mut head_out: [&mut [f64]; O] = std::array::from_fn(|_| Default::default());
        for o in 0..O {
            (head_out[o], self.outs[o]) = std::mem::take(&mut self.outs[o]).split_at_mut(k * per_out[o]);
        }
        Some((k, head_in, head_out))
    }
}

/// Checks every argument's length against `n` states, then runs `kernel(model, slot, k, ins,
/// outs)` on chunks of `k` states: on the calling thread alone (one chunk of all), or on
/// chunks of 16–64 states claimed in order by the calling thread and the workspace's workers
/// (the last [`CALLERS_TAIL`] states by the caller alone; the caller works from the start and
/// never waits for a worker to wake). Each state's result depends on its own rows only (the lanes of a
/// group are independent; a short last group repeats its last state), so neither the chunks
/// nor the thread that claims them change a bit.
pub(crate) fn run<'a, 'b, const I: usize, const O: usize, K>(
    model: &Model,
    slots: Slots<'_>,
    n: usize,
    ins: [In<'a>; I],
    outs: [Out<'b>; O],
    kernel: K,
) -> Result<(), BatchError>
where
    K: Fn(&Model, &mut Slot, usize, [&[f64]; I], [&mut [f64]; O]) + Sync,
{
    for (arg, x, per_state, what) in ins.iter().map(|(a, x, p, w)| (*a, x.len(), *p, *w)).chain(outs.iter().map(|(a, x, p, w)| (*a, x.len(), *p, *w))) {
        if x != n * per_state {
            return Err(BatchError::Shape { arg, got: x, expected: n * per_state, states: n, per_state, what });
        }
    }
    if n == 0 {
        return Ok(());
    }
    let per_in: [usize; I] = std::array::from_fn(|i| ins[i].2);
    let per_out: [usize; O] = std::array::from_fn(|o| outs[o].2);
    let Slots { slots, pool } = slots;
    let threads = slots.len().min(pool.len() + 1).min(n.div_ceil(MIN_STATES_PER_THREAD)).max(1);
    if threads == 1 {
        let slot = slots[0].get_mut().unwrap_or_else(PoisonError::into_inner);
        kernel(model, slot, n, ins.map(|x| x.1), outs.map(|x| x.1));
        return Ok(());
    }
    let queue = Mutex::new(Queue { ins: ins.map(|x| x.1), outs: outs.map(|x| x.1), left: n });
    let slots = &*slots;
    // a poisoned lock means another thread's kernel panicked: that panic is re-raised by the
    // pool; this thread just stops claiming
    let work = |t: usize| {
        let mut slot = slots[t].lock().unwrap_or_else(PoisonError::into_inner);
        let keep = if t == 0 { 0 } else { CALLERS_TAIL };
        while let Some((k, i, o)) = queue.lock().ok().and_then(|mut q| q.claim(threads, keep, &per_in, &per_out)) {
            kernel(model, &mut slot, k, i, o);
        }
    };
    pool.run(threads - 1, &work);
    Ok(())
}
