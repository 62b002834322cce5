//! Work on a large fleet spread over a few helper threads, its results
//! taken in order on the calling thread.
//!
//! Reading a 100,000-node inventory, planning it and printing the plan are
//! each a loop over nodes whose steps do not depend on one another; on a
//! machine with a second core, helpers take chunks of the loop while the
//! caller takes their results in the fleet's order (so that outputs, and
//! the first mistake reported, are what one thread would give). Chunks are
//! handed out in order and a result waits only for the chunks handed out
//! before it: with chunks of like cost, a few wait, not the fleet (a
//! helper held up long enough lets the others run ahead, and their results
//! wait; never more than the whole work).
//!
//! A helper that cannot be made (a pod's limit on processes) leaves its
//! share to the others, or to the caller alone: never a panic.

use std::sync::mpsc::sync_channel;
use std::sync::Mutex;

/// At most this many helpers, whatever the machine.
const MAX_HELPERS: usize = 4;

/// How many helpers this machine gives work of this kind: none on one core.
pub fn helpers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_HELPERS))
}

/// Maps each chunk of `chunks` with `map` (given a state of its thread's
/// own, made by `state`: a cache, say) and hands the results to `take` in
/// the chunks' order, until `take` says stop (`Ok(false)`) or fails.
/// With `parallel` false, or one core, everything runs on this thread.
pub fn in_order<C, T, S, E>(
    chunks: impl Iterator<Item = C> + Send,
    parallel: bool,
    state: impl Fn() -> S + Sync,
    map: impl Fn(&mut S, C) -> T + Sync,
    mut take: impl FnMut(T) -> Result<bool, E>,
) -> Result<(), E>
where
    C: Send,
    T: Send,
{
    let helpers = if parallel { helpers() } else { 1 };
    let work = Mutex::new(chunks.enumerate());
    let next = || work.lock().unwrap_or_else(|e| e.into_inner()).next();
    if helpers < 2 {
        return alone(next, &state, &map, &mut take);
    }
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<(usize, T)>(helpers);
        let mut started = 0;
        for _ in 0..helpers {
            let (tx, next, state, map) = (tx.clone(), &next, &state, &map);
            let helper = std::thread::Builder::new().spawn_scoped(scope, move || {
                let mut s = state();
                while let Some((i, chunk)) = next() {
                    // A closed channel: the taker stopped; so do the helpers.
                    if tx.send((i, map(&mut s, chunk))).is_err() {
                        break;
                    }
                }
            });
            if helper.is_err() {
                break;
            }
            started += 1;
        }
        drop(tx);
        if started == 0 {
            return alone(next, &state, &map, &mut take);
        }
        // Chunks arrive in any order; they are taken in theirs.
        let mut early = std::collections::BTreeMap::new();
        let mut want = 0;
        for (i, t) in rx {
            early.insert(i, t);
            while let Some(t) = early.remove(&want) {
                if !take(t)? {
                    return Ok(());
                }
                want += 1;
            }
        }
        Ok(())
    })
}

/// [`in_order`] on this thread alone.
fn alone<C, T, S, E>(
    next: impl Fn() -> Option<(usize, C)>,
    state: &impl Fn() -> S,
    map: &impl Fn(&mut S, C) -> T,
    take: &mut impl FnMut(T) -> Result<bool, E>,
) -> Result<(), E> {
    let mut s = state();
    while let Some((_, chunk)) = next() {
        if !take(map(&mut s, chunk))? {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_are_taken_in_order_whatever_thread_made_them() {
        let items: Vec<usize> = (0..10_000).collect();
        for parallel in [false, true] {
            let mut got = Vec::new();
            in_order(
                items.chunks(97),
                parallel,
                || (),
                |_, c: &[usize]| {
                    // Later chunks sooner, now and then.
                    if c[0].is_multiple_of(3) {
                        std::thread::yield_now();
                    }
                    c.iter().map(|x| x * 2).collect::<Vec<_>>()
                },
                |v| {
                    got.extend(v);
                    Ok::<_, ()>(true)
                },
            )
            .unwrap();
            assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_stop_or_a_mistake_ends_the_work() {
        let mapped = AtomicUsize::new(0);
        let items: Vec<usize> = (0..100_000).collect();
        let mut taken = 0;
        let r = in_order(
            items.chunks(10),
            true,
            || (),
            |_, c: &[usize]| {
                mapped.fetch_add(1, Ordering::Relaxed);
                c[0]
            },
            |first| {
                taken += 1;
                if first == 500 {
                    Err(first)
                } else {
                    Ok(true)
                }
            },
        );
        assert_eq!(r, Err(500));
        assert_eq!(taken, 51);
        // The helpers stopped soon after: a few chunks read ahead, not all.
        assert!(mapped.load(Ordering::Relaxed) < 1_000);
    }

    #[test]
    fn each_thread_has_its_own_state() {
        let made = AtomicUsize::new(0);
        let items: Vec<usize> = (0..5_000).collect();
        let mut total = 0;
        in_order(
            items.chunks(50),
            true,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                0usize
            },
            |seen: &mut usize, c: &[usize]| {
                *seen += c.len();
                c.len()
            },
            |n| {
                total += n;
                Ok::<_, ()>(true)
            },
        )
        .unwrap();
        assert_eq!(total, 5_000);
        assert!(made.load(Ordering::Relaxed) <= helpers().max(1));
    }
}
