//! The games as OpenSpiel sees a game: states with explicit chance nodes,
//! action ids, per-player observations and information states, and
//! `resample_from_infostate`. Block and team are OpenSpiel's own games
//! ([`OpenSpielState`]: its ids, chance actions and observer output); All
//! Fives and the thesis's rules are [`FivesState`] (the ids of
//! docs/python.md). The Python package and the agent protocol stand on
//! this layer; it sits above the game loops and holds no I/O.

mod any;
mod encode;
mod error;
mod fives;
mod guided;
mod leaves;
mod open;
mod past;
mod policy;
mod pool;
mod tensor;
mod view;
mod world_search;

pub use crate::fives::{fives_action_of as action_of, fives_play_id as play_id};
pub use any::SpielState;
pub use encode::{ENCODING_VERSION, Encoding};
pub use error::SpielError;
pub use fives::{Event, FivesState};
pub use guided::{ALPHAZERO_NOISE, Guided, GuidedTree, PUCT, RootNoise, guided_decide};
pub use leaves::{LeafBuffers, LeafError, LeafSearch, MAX_LEAF_DEPTH, MAX_LEAF_WORLDS, leaf_decide};
pub use open::OpenSpielState;
pub use policy::{MAX_SIMULATIONS, MAX_TEMPERATURE, NetPolicy, NetSeats, PolicyError};
pub use pool::{BELIEF_POOL, GuidedBelief, POLICY_POOL};
pub use world_search::{
    MAX_WORLD_SEARCH_BUDGET, MAX_WORLD_SEARCH_WORLDS, WorldBuffers, WorldModels, WorldSearch, WorldSearchError,
    world_decide,
};

/// OpenSpiel's player id of a chance node.
pub const CHANCE: i64 = -1;
/// OpenSpiel's player id of a terminal state.
pub const TERMINAL: i64 = -4;

/// How an observation is made (OpenSpiel's `IIGObservationType`).
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// The information state (everything seen, in order) rather than an
    /// observation of now.
    pub perfect_recall: bool,
    /// The player's own tiles.
    pub private: bool,
    /// The public part.
    pub public: bool,
}
