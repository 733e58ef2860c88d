//! A decision's worlds searched on several threads. Each world is searched
//! afresh (an empty table, no history) and its values depend on nothing
//! else, so a world searched by a helper thread has the values, the node
//! count and the depth it has when searched in turn; the values are summed
//! in the worlds' order. The decision, its node count and the adaptive
//! stop are therefore those of [`AlphaBeta::decide_with`], bit for bit,
//! whatever the number of threads (tested): only the wall time changes.
//! Each thread takes the next world no thread has taken (an atomic
//! counter), so a thread that drew short worlds takes more of them.
//! With the adaptive stop the worlds go in batches of one a thread, and a
//! batch's worlds after the one that decided are searched for nothing
//! (neither counted nor averaged).

use std::sync::atomic::{AtomicUsize, Ordering};

use engine::ActionList;

use crate::fives::FivesPosition;
use crate::search::FullDecision;
use crate::table::FivesTable;

use super::limits::{Limits, Progress};
use super::ordering::History;
use super::race::{Adaptive, Race};
use super::search::AlphaBeta;

/// One world's search: its root values, nodes and depth reached.
#[derive(Clone, Copy)]
struct WorldResult {
    values: [f64; 64],
    nodes: u64,
    reached: u8,
}

impl WorldResult {
    /// Before the world is searched.
    const NONE: WorldResult = WorldResult {
        values: [0.0; 64],
        nodes: 0,
        reached: 0,
    };
}

impl<'a> AlphaBeta<'a> {
    /// The same search for another thread, keeping its values in `table`
    /// (of this search's table's capacity, so that it finds what this one
    /// would).
    pub(super) fn helper<'t>(&self, table: &'t mut FivesTable) -> AlphaBeta<'t>
    where
        'a: 't,
    {
        AlphaBeta {
            rules: self.rules,
            side: self.side,
            engine: self.engine,
            models: self.models,
            eval: self.eval,
            table,
            prune: self.prune,
            history: History::new(),
            shaper: self.shaper.again(),
            progress: Progress::default(),
            max_count: self.max_count,
            end_max: self.end_max,
        }
    }

    /// [`decide_with`](Self::decide_with) with the worlds shared among
    /// this search's thread and one more thread a table of `helpers` (each
    /// of this search's table's capacity; no helpers: the same call).
    pub fn decide_threaded(
        &mut self,
        worlds: &[FivesPosition],
        limits: Limits,
        adaptive: Option<Adaptive>,
        helpers: &mut [FivesTable],
    ) -> FullDecision {
        let capacity = self.table.capacity();
        let helpers: Vec<&mut FivesTable> = helpers.iter_mut().take(worlds.len().saturating_sub(1)).collect();
        assert!(
            helpers.iter().all(|t| t.capacity() == capacity),
            "a helper's table has the search's capacity"
        );
        if helpers.is_empty() {
            return self.decide_with(worlds, limits, adaptive);
        }
        let threads = helpers.len() + 1;
        let start = self.progress.nodes;
        let mut list = ActionList::default();
        worlds[0].actions(self.rules, &mut list);
        let n = list.len();
        let mut race = Race::new(n, adaptive);
        let batch = if adaptive.is_some() { threads } else { worlds.len() };
        let mut helpers: Vec<AlphaBeta<'_>> = helpers.into_iter().map(|t| self.helper(t)).collect();
        let mut results = vec![WorldResult::NONE; batch];
        let (mut nodes, mut reached) = (0, 0);
        'batches: for chunk in worlds.chunks(batch) {
            let out = &mut results[..chunk.len()];
            // Each thread takes the next world not yet taken: a world's
            // result goes to its place, whoever searched it.
            let next = AtomicUsize::new(0);
            let mut found: Vec<Vec<(usize, WorldResult)>> = Vec::new();
            std::thread::scope(|scope| {
                let next = &next;
                let handles: Vec<_> = helpers
                    .iter_mut()
                    .map(|helper| scope.spawn(move || search_taken(helper, limits, chunk, next)))
                    .collect();
                found.push(search_taken(self, limits, chunk, next));
                for h in handles {
                    found.push(h.join().expect("a helper's search does not panic"));
                }
            });
            for (i, r) in found.into_iter().flatten() {
                out[i] = r;
            }
            for r in out.iter() {
                race.add(&r.values[..n]);
                nodes += r.nodes;
                reached = r.reached;
                if adaptive.is_some() && race.decided() {
                    break 'batches;
                }
            }
        }
        // As the worlds searched in turn would leave them.
        self.progress.nodes = start + nodes;
        self.progress.reached = reached;
        race.decision(nodes)
    }
}

/// Searches the worlds of `chunk` that this thread takes from `next`
/// until none is left: each with its index.
fn search_taken(
    ab: &mut AlphaBeta<'_>,
    limits: Limits,
    chunk: &[FivesPosition],
    next: &AtomicUsize,
) -> Vec<(usize, WorldResult)> {
    let mut out = Vec::new();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(w) = chunk.get(i) else {
            return out;
        };
        let mut r = WorldResult::NONE;
        (r.nodes, r.reached) = ab.world(w, limits, &mut r.values);
        out.push((i, r));
    }
}
