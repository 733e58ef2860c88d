//! Expectimax and M* over chance nodes, with a transposition table of
//! full-information values, and the player's decisions under full and partial
//! observation (docs/rules.md section 5). The settings live in `config`, the
//! searcher, its decisions and the plain search in `searcher`, the pruned
//! search in `pruned` (its children in `kids`, its formula bounds in
//! `bounds`).

mod bounds;
mod config;
mod kids;
mod pruned;
mod searcher;

pub use config::{DepthLimit, SearchConfig};
pub use searcher::{Decision, PlayerView, Searcher, TIE_EPSILON};
