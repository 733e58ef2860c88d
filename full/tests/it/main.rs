//! The full game's tests: rules and scoring (All Fives, block, team), the
//! searches, beliefs, DominAI and the move predictors.

mod adaptive;
mod alphabeta;
mod beliefs;
mod block_budget;
mod dominai;
mod eval_leaf;
mod external;
mod fives;
mod fives_view;
mod game;
mod guided;
mod open_ismcts;
mod predict;
mod thesis;
mod value_leaves;
