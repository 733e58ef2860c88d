//! The All-Fives search the agents play with: Expectimax and M* with
//! pruning that keeps values exact, a bounded transposition table, move
//! ordering, iterative deepening under a node budget, a leaf evaluation,
//! and determinized sampling (PIMC) under partial observation.
//!
//! Values are the agent side's *gain* from a position on: its points minus
//! the mean of the other sides' (the utility of [`super::FullSearcher`]),
//! less what the hand has scored so far; a leaf at depth 0 adds the
//! evaluation's estimate of the rest of the hand (0 for "score so far").
//! Depth counts plays and draws; a pass is free.
//!
//! Node types: the agent's side maximises; an opponent minimises
//! (Expectimax, and under M* a `searcher` opponent); under M* a
//! deterministic model's node has its one play, and `random`'s is the
//! uniform average over its plays, a chance node like a draw.
//!
//! Pruning (never changes a value): fail-soft alpha-beta at max and min
//! nodes; Ballard's Star1 at chance nodes, with the bound every gain
//! satisfies, |gain| <= depth x (the largest count a play can score) + (the
//! largest hand-end bonus) + (the evaluation's limit). Move ordering: the
//! table's best move, then plays that score by the points they make, then
//! the history heuristic (cut-offs by tile and location), then canonical
//! order. Root plays are each searched with the full window, so every root
//! value is exact (a world's values can be averaged, and the row's
//! alternatives are true values).
//!
//! The search lives in `search`, its chance nodes (draws, Star1) in
//! `chance`, the shaping of opponents' nodes in `shaping`, move ordering
//! in `ordering`, the limits and counters of iterative deepening in
//! `limits`, a decision's worlds shared among threads in `threads`.

mod chance;
mod limits;
mod ordering;
mod race;
mod search;
mod shaping;
mod threads;

pub use limits::Limits;
pub use race::{ADAPTIVE_MIN_WORLDS, Adaptive, ConfidenceError};
pub use search::AlphaBeta;
pub use shaping::Shaping;
