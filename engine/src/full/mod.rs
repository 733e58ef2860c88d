//! The full game beyond the thesis's toy: double-N sets, 2 to 4 seats,
//! partnerships. Seats, sides and the agent's seat are data, not types;
//! positions are `Copy` and playing does not allocate.
//!
//! The presets: OpenSpiel's `block` and `team` games, played exactly as its
//! Python implementations play them, and `all-fives` for 2 to 4 seats with
//! matches (see docs/rules.md). All Fives uses the thesis's board
//! ([`crate::Board`]); the thesis rules keep their own engine (the rest of
//! this crate), unchanged.

mod alphabeta;
mod belief;
mod block_search;
mod deal;
mod dominai;
mod eval;
mod fives;
mod game;
mod ismcts;
pub mod openspiel;
mod position;
pub mod predict;
mod rules;
mod search;
mod table;
mod worlds;

pub use alphabeta::{AlphaBeta, Limits, Shaping};
pub use belief::{BONEYARD, Constraints, HOLDERS, Marginals, Observation, matching, scores, world_of};
pub use block_search::{OpenHandRecord, heaviest_play, play_open_hand};
pub use deal::{below, binom, deal_count, deal_from_index, deal_index, playouts, random_deal, random_playout};
pub use dominai::{DominaiMatrices, dominai_decide, dominai_decide_block};
pub use eval::{
    EVAL_LIMIT, EvalTraining, Evaluation, FEATURE_COUNT, FEATURES, LinearEval, default_training, features,
    fit_linear_eval,
};
pub use fives::{FivesPosition, Opening, Scored, fives_perft, round_to_five};
pub use game::{
    DEFAULT_TABLE_MB, DEFAULT_TARGET_DEPTH, DOMINAI_NODES, FullMove, FullTarget, HandRecord, MAX_HANDS, MatchOptions,
    MatchRecord, Scratch, fives_playouts, fixed_choice, full_choice, play_hand, play_hand_with, play_match,
    play_match_with, random_fives_hand, search_decision,
};
pub use ismcts::{ISMCTS_EXPLORATION, IsmctsTree, Seen};
pub use position::{FullAction, FullActions, FullPosition, HandEnd, OPENING, tiles_of};
pub use rules::{DealOrder, FivesBlocked, FivesLead, FullConfig, FullRules, MAX_SEATS, Preset};
pub use search::{FULL_TIE_EPSILON, FullAgent, FullDecision, FullEngine, FullSearcher, SearchSettings};
pub use table::{Bound, Entry, FivesTable, SLOT_BYTES, position_key};
pub use worlds::{
    BeliefScore, MODEL_POOL_MAX, MODEL_POOL_MIN, MODEL_POOL_PER_WORLD, MODEL_TREMBLE, WorldSampler, hand_decisions,
    model_weight,
};
