//! The full game beyond the thesis's toy: double-N sets, 2 to 4 seats,
//! partnerships. Seats, sides and the agent's seat are data, not types;
//! positions are `Copy` and playing does not allocate.
//!
//! The presets: OpenSpiel's `block` and `team` games, played exactly as its
//! Python implementations play them, and `all-fives` for 2 to 4 seats with
//! matches (see docs/rules.md). All Fives uses the thesis's board
//! ([`engine::Board`]); the thesis rules keep their own engine (the rest of
//! this crate), unchanged.

mod agent;
mod alphabeta;
mod belief;
mod block_search;
mod deal;
mod dominai;
mod draw_leaves;
mod eval;
mod fives;
mod game;
mod ismcts;
mod model_error;
mod open_hand;
mod open_ismcts;
pub mod openspiel;
mod position;
pub mod predict;
mod rules;
mod search;
mod seen;
mod settings;
pub mod spiel;
mod table;
mod targets;
mod worlds;

pub use agent::{
    DEEPEST, DEFAULT_TABLE_MB, DOMINAI_NODES, ExternalSeats, Forfeit, FullAgent, MatchContext, MatchOptions, Scratch,
    SearchSettings, SeatView, depth_of, search_decision,
};
pub use alphabeta::{ADAPTIVE_MIN_WORLDS, Adaptive, AlphaBeta, ConfidenceError, Limits, Shaping};
pub use belief::{BONEYARD, Constraints, HOLDERS, Marginals, Observation, matching, scores, world_of};
pub use deal::{
    binom, deal_count, deal_from_index, deal_index, playout_returns, playouts, random_deal, random_playout,
};
pub use dominai::{DominaiMatrices, dominai_decide, dominai_decide_block};
pub use draw_leaves::DrawLeaves;
pub use eval::{
    EVAL_LIMIT, EvalTraining, Evaluation, FEATURE_COUNT, FEATURES, LinearEval, default_training, features,
    fit_linear_eval,
};
pub use fives::{
    FivesPosition, Opening, Scored, fives_action_of, fives_draw_id, fives_pass_id, fives_perft, fives_play_id,
    round_to_five,
};
pub use game::{
    FullMove, HandRecord, MAX_HANDS, MatchKeys, MatchRecord, fives_playouts, moves_text, play_hand, play_hand_with,
    play_match, play_match_external, play_match_with, play_token, random_fives_hand,
};
pub use ismcts::{ISMCTS_EXPLORATION, IsmctsTree};
pub use model_error::ModelError;
pub use open_hand::{OpenHandRecord, decide_open, pimc_open, play_open_hand, play_open_hand_external};
pub use open_ismcts::open_root_visits;
pub use position::{FullAction, FullActions, FullPosition, HandEnd, OPENING, tiles_of};
pub use rules::{DealOrder, FivesBlocked, FivesLead, FullConfig, FullRules, MAX_SEATS, Preset, Tally};
pub use search::{FULL_TIE_EPSILON, FullDecision, FullSearcher};
pub use seen::Seen;
pub use settings::{Leaves, PlayerName, Setting, SettingError};
pub use table::{Bound, Entry, FivesTable, SLOT_BYTES, position_key};
pub use targets::{DEFAULT_TARGET_DEPTH, FullTarget, fixed_choice, full_choice, heaviest, heaviest_play};
pub use worlds::{
    BeliefScore, MODEL_POOL_MAX, MODEL_POOL_MIN, MODEL_POOL_PER_WORLD, MODEL_TREMBLE, WorldSampler, WorldSource,
    hand_decisions, model_weight,
};
