//! The worker threads a [`BatchWorkspace`](super::BatchWorkspace) keeps (record 0100): spawned
//! once with the workspace, handed each call's work through one atomic state per worker,
//! spinning a little while after a call for the next one (back-to-back calls start in well
//! under a µs), then parked; stopped and joined when the workspace is dropped. A call of a
//! few tens of µs (1024 states of forward kinematics) cannot afford rayon's wake-ups and task
//! boxes: the caller waited, asleep, for the pool's last chunk (records 0075, 0085).
//!
//! The work of a call borrows the caller's arguments, so a worker runs it through a reference
//! whose lifetime is erased; [`Pool::run`] returns (or unwinds) only once no worker holds
//! that reference any more: a post not yet taken is withdrawn, a running one waited for.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// No work for the worker.
const IDLE: u8 = 0;
/// Work posted, not yet taken.
const POSTED: u8 = 1;
/// The worker is running it.
const RUNNING: u8 = 2;
/// The workspace is dropped: the worker ends.
const EXIT: u8 = 3;

/// How long a worker spins for the next call before it parks: longer than the gap between
/// back-to-back calls (a Python call's conversions take a few µs), short enough to cost
/// nothing noticeable after the last call.
const SPIN: Duration = Duration::from_micros(200);

/// The work of one call, run by each thread with its index (0 the caller, 1.. the workers).
type Job = &'static (dyn Fn(usize) + Sync);

/// What the caller and one worker share.
struct Shared {
    state: AtomicU8,
    /// The posted work; taken by the worker when it starts, or by the caller when it withdraws
    /// the post, so it never outlives the call.
    job: Mutex<Option<Job>>,
    /// The payload of a panic of the work on this worker, re-raised by the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

struct Worker {
    shared: Arc<Shared>,
    handle: JoinHandle<()>,
}

/// The kept threads of one workspace.
pub(crate) struct Pool {
    workers: Vec<Worker>,
    /// The process that spawned them: after a `fork` the child has none of them, and they are
    /// spawned anew instead of waited for.
    pid: u32,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    /// `helpers` worker threads (fewer if the system refuses to spawn them).
    pub(crate) fn new(helpers: usize) -> Self {
        let mut pool = Pool { workers: Vec::new(), pid: std::process::id() };
        pool.resize(helpers);
        pool
    }

    /// The number of worker threads.
    pub(crate) fn len(&self) -> usize {
        self.workers.len()
    }

    /// Spawns or stops workers until there are `helpers` (or as many as the system gives).
    pub(crate) fn resize(&mut self, helpers: usize) {
        while self.workers.len() > helpers {
            if let Some(w) = self.workers.pop() {
                self.stop(w);
            }
        }
        while self.workers.len() < helpers {
            let index = self.workers.len() + 1;
            let shared = Arc::new(Shared { state: AtomicU8::new(IDLE), job: Mutex::new(None), panic: Mutex::new(None) });
            let s = Arc::clone(&shared);
            match thread::Builder::new().name(format!("karakuri-batch-{index}")).spawn(move || work(&s, index)) {
                Ok(handle) => self.workers.push(Worker { shared, handle }),
                Err(_) => break,
            }
        }
    }

    fn stop(&self, w: Worker) {
        w.shared.state.store(EXIT, Ordering::Release);
        w.handle.thread().unpark();
        // a worker that panicked outside the work (it cannot) has nothing to report
        let _ = w.handle.join();
    }

    /// After a `fork` the child has none of the threads: their handles are let go untouched.
    fn forked(&mut self) -> bool {
        let forked = std::process::id() != self.pid;
        if forked {
            std::mem::forget(std::mem::take(&mut self.workers));
            self.pid = std::process::id();
        }
        forked
    }

    /// Runs `job(0)` on the calling thread and `job(1)` .. `job(helpers)` on that many workers
    /// (at most [`Pool::len`]); returns when every worker that took its part has finished it.
    /// A worker still asleep when the caller is done never runs its part. A panic of any part
    /// is raised again here once no worker runs.
    pub(crate) fn run(&mut self, helpers: usize, job: &(dyn Fn(usize) + Sync)) {
        let n = self.workers.len();
        if self.forked() {
            self.resize(n);
        }
        // a payload left by a call whose caller panicked too
        for w in &self.workers {
            lock(&w.shared.panic).take();
        }
        // SAFETY: only the lifetime is changed. The reference is handed to workers through
        // `Shared::job` below and leaves it again before this function returns or unwinds:
        // `Withdraw::drop` (run on both) takes back every post no worker took, and waits for
        // every worker that took one to store IDLE, which it does after its last use of the
        // reference (`work`).
        #[allow(unsafe_code)]
        let job: Job = unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(job) };
        let posted = Withdraw(&self.workers[..helpers.min(self.workers.len())]);
        for w in posted.0 {
            *lock(&w.shared.job) = Some(job);
            w.shared.state.store(POSTED, Ordering::Release);
            w.handle.thread().unpark();
        }
        job(0);
        drop(posted);
        let mut first = None;
        for w in &self.workers {
            if let Some(p) = lock(&w.shared.panic).take() {
                first.get_or_insert(p);
            }
        }
        if let Some(p) = first {
            panic::resume_unwind(p);
        }
    }
}

/// Withdraws the posts of a call or waits for them, when dropped.
struct Withdraw<'a>(&'a [Worker]);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        for w in self.0 {
            let s = &w.shared;
            if s.state.compare_exchange(POSTED, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                lock(&s.job).take();
                continue;
            }
            // running: its last chunk is a few µs away on a quiet machine; on a crowded one the
            // worker may wait for this very core, so the caller soon yields it
            let mut spins = 0u32;
            while s.state.load(Ordering::Acquire) != IDLE {
                spins = spins.saturating_add(1);
                if spins < 1 << 8 {
                    std::hint::spin_loop();
                } else {
                    thread::yield_now();
                }
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.forked();
        for w in std::mem::take(&mut self.workers) {
            self.stop(w);
        }
    }
}

/// A worker's life: wait for a post (spinning for [`SPIN`] after the last one, then parked),
/// take it, run its part, report IDLE; until told to exit.
fn work(s: &Shared, index: usize) {
    loop {
        let (start, mut spins) = (Instant::now(), 0u32);
        loop {
            match s.state.load(Ordering::Acquire) {
                POSTED => break,
                EXIT => return,
                _ => {}
            }
            // spinning, yielding the core every 64 turns to whoever else wants it
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) {
                std::hint::spin_loop();
            } else if start.elapsed() < SPIN {
                thread::yield_now();
            } else {
                thread::park();
            }
        }
        // the caller may have withdrawn the post meanwhile
        if s.state.compare_exchange(POSTED, RUNNING, Ordering::Acquire, Ordering::Acquire).is_err() {
            continue;
        }
        if let Some(job) = lock(&s.job).take() {
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| job(index))) {
                *lock(&s.panic) = Some(p);
            }
        }
        s.state.store(IDLE, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Every worker takes its part when the caller waits for it (the caller's part lasts until
    /// all three parts have started, or 2 s), over calls back to back and after the workers
    /// parked; none of them runs a part twice.
    #[test]
    fn every_worker_runs_its_part_once() {
        let mut pool = Pool::new(2);
        for call in 0..20 {
            if call == 10 {
                std::thread::sleep(Duration::from_millis(5)); // parked by now
            }
            let runs: [AtomicUsize; 3] = Default::default();
            pool.run(2, &|t| {
                runs[t].fetch_add(1, Ordering::SeqCst);
                let start = Instant::now();
                while t == 0 && runs.iter().any(|r| r.load(Ordering::SeqCst) == 0) && start.elapsed() < Duration::from_secs(2) {
                    std::hint::spin_loop();
                }
            });
            assert_eq!(runs.map(|r| r.into_inner()), [1, 1, 1], "call {call}");
        }
    }

    /// A panic of a worker's part reaches the caller, and the pool serves the next call.
    #[test]
    fn a_workers_panic_reaches_the_caller() {
        let mut pool = Pool::new(1);
        let started = AtomicUsize::new(0);
        let hit = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.run(1, &|t| {
                let start = Instant::now();
                if t == 1 {
                    started.store(1, Ordering::SeqCst);
                    panic!("worker {t} fails");
                }
                while started.load(Ordering::SeqCst) == 0 && start.elapsed() < Duration::from_secs(2) {
                    std::hint::spin_loop();
                }
            })
        }));
        let msg = hit.expect_err("the worker's panic");
        assert!(msg.downcast_ref::<String>().is_some_and(|m| m.contains("worker 1 fails")));
        let runs = AtomicUsize::new(0);
        pool.run(1, &|_| {
            runs.fetch_add(1, Ordering::SeqCst);
        });
        assert!((1..=2).contains(&runs.into_inner()));
    }
}
