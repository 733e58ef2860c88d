//! How far one world's search may go ([`Limits`]), and how far it has gone:
//! the node count against the budget and what the current iteration of
//! iterative deepening did ([`Progress`]).

/// How far one world's search may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// The deepest iteration, in plays and draws (1-254).
    pub depth: u8,
    /// Nodes one world's search may spend: iterative deepening stops
    /// before an iteration that would pass it (the first always runs).
    /// 0: no budget, search to `depth`.
    pub budget: u64,
}

/// The counters of a search: nodes spent against the budget, and what the
/// current iteration of iterative deepening did.
#[derive(Clone, Copy, Debug)]
pub(super) struct Progress {
    /// Nodes searched so far.
    pub(super) nodes: u64,
    /// The node count past which the current iteration aborts (`u64::MAX`:
    /// never).
    pub(super) stop_at: u64,
    /// Whether the current iteration passed `stop_at` (its values are
    /// dropped).
    pub(super) aborted: bool,
    /// Whether the current iteration cut a leaf at the depth limit.
    pub(super) horizon: bool,
    /// The depth the last world's iterative deepening completed.
    pub(super) reached: u8,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            nodes: 0,
            stop_at: u64::MAX,
            aborted: false,
            horizon: false,
            reached: 0,
        }
    }
}
