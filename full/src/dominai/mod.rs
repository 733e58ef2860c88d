//! The DominAI player of seed 002 (Vielma's challenge report, a four-player
//! partnership double-6 player): per-player probability matrices as its
//! belief, and minimax with alpha-beta between the partnerships, the depth
//! growing with the turn. docs/dominai.md says what the report says, what
//! it leaves vague, and what was chosen; the aim is a faithful baseline,
//! not an improved one. The matrices live in `matrices`, the search in
//! `minimax`.

mod matrices;
mod minimax;

pub use matrices::DominaiMatrices;
pub use minimax::{dominai_decide, dominai_decide_block};
