//! Sorting of lists that change little from step to step (the broad phase's order along x,
//! the candidate pairs, the warm-start entries of the contacts): insertion sort while the
//! input is nearly sorted, the library's sort past a budget.

/// Sorts `v` by the strict order `less` (a total order: the result is then unique) by
/// insertion, O(n) on input that is nearly sorted (last step's order of the same items); after
/// `8 n` moves it hands the rest to the library's unstable sort, so unsorted input costs
/// O(n log n) (the same result: the order is total). Allocates nothing.
pub(crate) fn sort_nearly_sorted<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let budget = 8 * v.len();
    let mut moves = 0;
    for i in 1..v.len() {
        let x = v[i];
        let mut k = i;
        while k > 0 && less(&x, &v[k - 1]) {
            v[k] = v[k - 1];
            k -= 1;
        }
        v[k] = x;
        moves += i - k;
        if moves > budget {
            v.sort_unstable_by(|a, b| {
                if less(a, b) {
                    std::cmp::Ordering::Less
                } else if less(b, a) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            });
            return;
        }
    }
}
