//! The driver of every batched call: argument lengths checked, the states cut into contiguous
//! chunks (one per thread, a multiple of the lane count), each chunk handed to the call's
//! kernel with its slot of buffers and its rows of every argument. The chunks run as tasks of
//! rayon's pool, whose threads are kept: a scoped thread spawned per call cost 20–50 µs, more
//! than a whole call of 1024 ur5 states (0068).

use super::lanes::LANES;
use super::workspace::{BatchError, Slot, Slots};
use crate::model::Model;

/// Fewer states than this per thread and handing a chunk to another thread (a few µs) costs more
/// than it saves.
const MIN_STATES_PER_THREAD: usize = 32;

/// An input: name, numbers, numbers per state, what a state's entry is.
pub(crate) type In<'a> = (&'static str, &'a [f64], usize, &'static str);
/// An output, likewise.
pub(crate) type Out<'a> = (&'static str, &'a mut [f64], usize, &'static str);

/// Checks every argument's length against `n` states, then runs `kernel(model, slot, k, ins,
/// outs)` on chunks of `k` states: on the calling thread alone, or as one task of rayon's pool
/// per chunk but the last, which the calling thread runs (`in_place_scope`: one hand-off to a
/// waiting pool thread, not two). The chunks and their order do not
/// depend on the threads, so neither do the results.
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
    let mut rest_in: [&[f64]; I] = ins.map(|x| x.1);
    let mut rest_out: [&mut [f64]; O] = outs.map(|x| x.1);
    let threads = slots.0.len().min(n.div_ceil(MIN_STATES_PER_THREAD)).max(1);
    if threads == 1 {
        kernel(model, &mut slots.0[0], n, rest_in, rest_out);
        return Ok(());
    }
    let chunk = n.div_ceil(threads).next_multiple_of(LANES);
    let kernel = &kernel;
    rayon::in_place_scope(|scope| {
        let mut left = n;
        for slot in slots.0.iter_mut().take(threads) {
            let k = chunk.min(left);
            left -= k;
            let mut head_in: [&[f64]; I] = [&[]; I];
            for i in 0..I {
                let (h, t) = rest_in[i].split_at(k * per_in[i]);
                (head_in[i], rest_in[i]) = (h, t);
            }
            let mut head_out: [&mut [f64]; O] = std::array::from_fn(|_| Default::default());
            for o in 0..O {
                let (h, t) = std::mem::take(&mut rest_out[o]).split_at_mut(k * per_out[o]);
                (head_out[o], rest_out[o]) = (h, t);
            }
            if left == 0 {
                kernel(model, slot, k, head_in, head_out);
                break;
            }
            scope.spawn(move |_| kernel(model, slot, k, head_in, head_out));
        }
    });
    Ok(())
}
