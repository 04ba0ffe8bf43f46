//! A counting global allocator for the tests that hold a path to no allocation
//! (`no_allocation.rs`, `batch_no_allocation.rs`): each allocation and reallocation adds one to
//! the allocating thread's count, read by [`allocations`]. Per thread, because the test harness's
//! own threads may allocate while a slow test runs (seen on a loaded machine: 2–4 allocations from
//! another thread when the batch test took a second); the code under test runs on the test's thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // const-initialised: reading it never allocates
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // try_with: a thread being torn down has no count left to add to
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and reallocations so far on the calling thread.
pub fn allocations() -> usize {
    ALLOCATIONS.with(|c| c.get())
}
