//! Tests of the analysis: the statistics, and reports on hand-made datasets,
//! one module per part of the report. Here: what they share (rows made by
//! hand, float comparison).

mod beliefs;
mod factors;
mod plots;
mod report;
mod shaping;
mod stats;
mod tournament;
mod workers;

use analysis::stats::Moments;

/// The moments of a sample.
fn moments(xs: &[f64]) -> Moments {
    let mut m = Moments::default();
    for &x in xs {
        m.add(x);
    }
    m
}

/// Whether `a` is within `tol` of `b`, relative (or 1e-15 absolute).
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-300) || (a - b).abs() < 1e-15
}

/// A game of the thesis's grid (full observation, the scorer target).
fn row(
    source: jobs::Source,
    engine: engine::PlayerEngine,
    state: u64,
    diff: i32,
    win: bool,
    pred: (u32, u32),
    moves: &str,
) -> jobs::GameRow {
    jobs::GameRow {
        game_index: state * 10 + engine as u64 + 100 * source as u64,
        information_source: source,
        observability: engine::Observability::Full,
        target: full::FullTarget::Thesis(engine::TargetKind::Scorer),
        starting_state: state,
        engine,
        repeat: 1,
        leader: engine::Seat::Target,
        player_score: diff.max(0) as u32,
        target_score: (-diff).max(0) as u32,
        score_diff: diff,
        win_or_tie: win,
        ending: engine::Ending::Domino,
        turns: 5,
        player_draws: 0,
        target_draws: 0,
        predictions: pred.0,
        predictions_correct: pred.1,
        nodes: 4,
        moves: moves.into(),
        elapsed_us: 1,
        belief: None,
        belief_log_loss: None,
        belief_brier: None,
        belief_ess: None,
        shaping: jobs::ShapingLevel::NONE,
        budget: None,
        agent: None,
        opponent: None,
        agent_side: None,
        rules: None,
        forfeit: None,
    }
}
