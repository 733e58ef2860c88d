//! Playing one game end to end: the game loop shared by searched games and
//! training games lives in `game_loop`, the searching player and
//! [`play_game`] in `searched`, records and replays in `record`, the Bayes
//! source's likelihoods in `bayes`, Table 9's training games in `training`.

mod bayes;
mod game_loop;
mod record;
mod searched;
mod training;

pub use bayes::{BAYES_FLOOR, likelihoods};
pub use record::{
    Ending, GameError, GameRecord, Move, Observability, PlayerEngine, ReplayError, ReplayStep, Replayed, replay,
    replay_with,
};
pub use searched::{GameConfig, InfoSource, SearchedDecision, play_game, play_game_recorded};
pub use training::{TABLE_9, TrainingGame, training_game};
