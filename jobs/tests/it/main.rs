//! Integration tests of the jobs crate.

mod agents;
mod evals;
mod exec;
mod external;
mod hash;
mod keys;
mod layout;
mod net_worlds;
mod nets;
mod rules;
mod spec;
mod spec_full;
mod spec_search;
mod sprt;
mod train;
mod train_belief;
mod train_games;

use std::sync::atomic::{AtomicBool, AtomicU64};

/// Plays every shard of `spec` in order on two threads: the grid's rows.
pub(crate) fn run_all(spec: &jobs::Spec) -> Vec<jobs::GameRow> {
    run_all_on(spec, 2)
}

/// Plays every shard of `spec` in order on `threads` threads, a shaped
/// search with the predictors its fit stage would make: the grid's rows.
pub(crate) fn run_all_on(spec: &jobs::Spec, threads: usize) -> Vec<jobs::GameRow> {
    let ex = jobs::Executor::new(threads);
    let (progress, cancel) = (AtomicU64::new(0), AtomicBool::new(false));
    let trained = jobs::predictors::fit_for(spec).map(|f| jobs::predictors::Trained::Predictors(f.unwrap().0));
    let mut rows = Vec::new();
    for shard in jobs::shards(spec) {
        rows.extend(ex.run_with(spec, shard, trained.as_ref(), &progress, &cancel).unwrap());
    }
    assert_eq!(progress.into_inner(), spec.games());
    rows
}
