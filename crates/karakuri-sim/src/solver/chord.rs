//! The chord solve of an active-set try's set whose states are those of the set factored
//! last and whose slides' directions (and slip compliances) only turned (`active.rs`): a
//! third of the sets of a standing or fallen robot (record 0111). Its matrix `A` is formed
//! as for any set, but not factored: `A x = r` is solved by corrections through the factored
//! set's factors `F` (`x += F⁻¹ (r − A x)`), a few while the directions turned by little; when
//! they do not reach [`CHORD_TOL`] of the tolerance, `A` is factored after all (record 0119).

use super::lu::{chol_factor, lu_factor};
use super::workspace::{Dense, State};

/// Corrections a chord solve makes before it gives up (its matrix is factored then).
const MAX_CORRECTIONS: usize = 4;

/// A chord solve is done when every equation's residual is within this share of the
/// velocity tolerance (a velocity, as the equations are rows of `W`): far below what the
/// sets' residual and their next set read (`0.1 tol`).
const CHORD_TOL: f64 = 1e-3;

/// A correction must shrink the largest residual to at most this share of the one before
/// (else the directions turned too far for the old factors, and `A` is factored).
const CONTRACTION: f64 = 0.25;

/// The chord state of a try (in [`Dense`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Chord {
    /// The states of the set whose factors `Dense::a` holds; empty: none this try.
    pub state: Vec<State>,
    /// The set about to be solved may be chord-solved (its states are `state`); its matrix is
    /// formed into the buffer that does not hold the factors.
    pub wanted: bool,
    /// `Dense::a` holds the factors of an earlier set, and `mat` the last set's matrix:
    /// `Dense::apply_factors` solves by corrections.
    pub on: bool,
    /// The matrix of the set solved by corrections `(n x n)`; else spare room for `Dense::a`.
    pub mat: Vec<f64>,
    /// The last solution (the start of the next corrections) `(n)`.
    pub x: Vec<f64>,
    /// The right-hand side being solved for `(n)`.
    pub t: Vec<f64>,
    /// Velocity tolerance of the try.
    pub tol: f64,
    /// A pivot below which a factorisation counts as singular (the set's).
    pub tiny: f64,
}

impl Dense {
    /// A new try: no factored set yet (`tol`: its velocity tolerance, `tiny`: its
    /// factorisations' least pivot).
    pub(super) fn chord_reset(&mut self, tol: f64, tiny: f64) {
        self.chord.tiny = tiny;
        self.chord.state.clear();
        self.chord.on = false;
        self.chord.wanted = false;
        self.chord.tol = tol;
    }

    /// Before a set is solved: whether it may be chord-solved (the same states as the set
    /// factored last); if so its matrix goes into the spare buffer, the factors kept aside.
    pub(super) fn chord_before(&mut self) {
        let c = &mut self.chord;
        c.on = false;
        c.wanted = !c.state.is_empty() && c.state == self.state;
        if c.wanted {
            std::mem::swap(&mut self.a, &mut c.mat);
        }
    }

    /// After a set was solved (its solution in `r`): the start of the next corrections, and
    /// the states of a factored set.
    pub(super) fn chord_after(&mut self) {
        let n = self.idx.len();
        let c = &mut self.chord;
        c.x.clear();
        c.x.extend_from_slice(&self.r[..n]);
        if !c.on {
            c.state.clone_from(&self.state);
        }
    }

    /// `solve_set`'s hook, `a` holding the wanted set's matrix `(n x n)` and `r` its
    /// right-hand side: solves by corrections through the factors kept aside (then `r` is the
    /// solution, `a` the factors again, and true), else puts them back as they were (false:
    /// the matrix is factored).
    pub(super) fn chord_solve(&mut self, n: usize) -> bool {
        std::mem::swap(&mut self.a, &mut self.chord.mat);
        if self.corrections(n) {
            self.chord.on = true;
            return true;
        }
        std::mem::swap(&mut self.a, &mut self.chord.mat);
        false
    }

    /// `apply_factors`' hook while [`Chord::on`]: solves the chord-solved set's matrix for `r`
    /// by corrections, or (they do not reach the tolerance) factors it and solves.
    pub(super) fn chord_apply(&mut self, n: usize) {
        if self.corrections(n) {
            return;
        }
        std::mem::swap(&mut self.a, &mut self.chord.mat);
        self.chord.on = false;
        let tiny = self.chord.tiny;
        let ok = if self.chol { chol_factor(&mut self.a[..n * n], n, tiny) } else { lu_factor(&mut self.a, &mut self.perm, n, tiny) };
        if ok {
            self.apply_factors(n);
        }
    }

    /// `x` from the last solution by corrections through the factors in `a`, `mat x = r`
    /// (`r` then the solution); false when they do not reach [`CHORD_TOL`] within
    /// [`MAX_CORRECTIONS`] (`r` as it was).
    fn corrections(&mut self, n: usize) -> bool {
        let on = self.chord.on;
        self.chord.on = false;
        let c = &mut self.chord;
        c.t.clear();
        c.t.extend_from_slice(&self.r[..n]);
        if c.x.len() != n {
            c.x.clear();
            c.x.resize(n, 0.0);
        }
        let limit = CHORD_TOL * c.tol;
        let mut last = f64::INFINITY;
        let mut done = false;
        for _ in 0..=MAX_CORRECTIONS {
            let c = &self.chord;
            let mut worst: f64 = 0.0;
            for (i, row) in c.mat[..n * n].chunks_exact(n).enumerate() {
                let ax: f64 = row.iter().zip(&c.x).map(|(a, x)| a * x).sum();
                let res = c.t[i] - ax;
                worst = worst.max(res.abs());
                self.r[i] = res;
            }
            if worst <= limit {
                done = true;
                break;
            }
            if worst > CONTRACTION * last {
                break;
            }
            last = worst;
            self.apply_factors(n);
            self.chord.x.iter_mut().zip(&self.r[..n]).for_each(|(x, d)| *x += d);
        }
        if done {
            self.r[..n].copy_from_slice(&self.chord.x);
        } else {
            self.r[..n].copy_from_slice(&self.chord.t);
        }
        self.chord.on = on;
        done
    }
}
