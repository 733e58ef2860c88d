//! The rows the stages produce, as plain data: a game ([`GameRow`], with
//! its checksum line), a hand of a match ([`HandRow`]), a play
//! ([`MoveRow`]) and a training sample ([`SampleRow`]). Playing fills them
//! (`exec`, `training`); `parquet_io` alone turns them into columns.

use engine::{Ending, Observability, PlayerEngine, Seat, TargetKind};
use full::FullTarget;
use sha2::{Digest, Sha256};

use crate::spec::{Source, hex};

/// One row of the results: a game's coordinates and record.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRow {
    /// Position in the grid, 0-based, Table 12 order (see [`coords`](crate::coords)).
    pub game_index: u64,
    /// Where M* takes its model of the target from: oracle, classifier or bayes.
    pub information_source: Source,
    /// Whether the player sees the target's hand (full) or not (partial).
    pub observability: Observability,
    /// The target seat's type: random, scorer or defender (full game: also heaviest).
    pub target: FullTarget,
    /// The deal, as a starting-state index of the spec's rules.
    pub starting_state: u64,
    /// The player's decision engine: M* or Expectimax.
    pub engine: PlayerEngine,
    /// Repeat number, 1-based; with `starting_state` it keys the game's
    /// random draws, so rows sharing both are paired across engines.
    pub repeat: u32,
    /// The seat that made the first play.
    pub leader: Seat,
    /// The player's final points.
    pub player_score: u32,
    /// The target's final points.
    pub target_score: u32,
    /// `player_score - target_score`.
    pub score_diff: i32,
    /// `score_diff >= 0`.
    pub win_or_tie: bool,
    /// How the game ended: domino (a hand emptied) or blocked.
    pub ending: Ending,
    /// Plays and passes.
    pub turns: u32,
    /// Tiles the player drew from the boneyard.
    pub player_draws: u32,
    /// Tiles the target drew from the boneyard.
    pub target_draws: u32,
    /// Searched M* decisions, each predicting the target's type; 0 for Expectimax.
    pub predictions: u32,
    /// Predictions equal to the true target type.
    pub predictions_correct: u32,
    /// Positions valued at the roots of the player's searched decisions
    /// (actions x worlds).
    pub nodes: u64,
    /// The move list as space-separated tokens (`T33L` play, `P23R+5` play
    /// scoring 5, `Td01` draw, `T-` pass).
    pub moves: String,
    /// Wall time of the game in microseconds; the only column that differs
    /// between runs.
    pub elapsed_us: u64,
    /// Where the player's partial-observation worlds came from (a grid
    /// coordinate; `uniform` unless the spec says otherwise); `None` under
    /// full observation, where no world is sampled.
    pub belief: Option<engine::Belief>,
    /// Full game, partial observation: the mean over the agent side's
    /// searched decisions of the belief's log loss on the hidden tiles
    /// (`None` elsewhere).
    pub belief_log_loss: Option<f64>,
    /// The same decisions' mean Brier score.
    pub belief_brier: Option<f64>,
    /// `model` belief: the mean effective sample size of its pools.
    pub belief_ess: Option<f64>,
    /// How the search shaped opponents' nodes (a grid coordinate; `none`
    /// unless the spec says otherwise).
    pub shaping: crate::spec::ShapingLevel,
    /// The node budget of the agent's searches, where the spec lists
    /// several (a grid coordinate); `None` otherwise.
    pub budget: Option<u64>,
    /// With named agents (`[grid] agents`): the agent's name; the row's
    /// player columns are this agent's side, wherever it sat.
    pub agent: Option<String>,
    /// With named agents: the opponent's name (an agent or a strategy).
    pub opponent: Option<String>,
    /// With named agents: the side the agent sat at, 0 or 1 (paired deals
    /// play each deal at both; side 0 holds the deal's first hand).
    pub agent_side: Option<u32>,
    /// With a rules factor (`[grid] rules`): the rule set's name.
    pub rules: Option<String>,
    /// A game an external agent forfeited: why (`illegal`, `time`,
    /// `crash`, `protocol`; docs/agents.md).
    pub forfeit: Option<String>,
}

impl GameRow {
    /// A row at the coordinates `c`, its outcome columns empty (the code
    /// that plays the game fills them in).
    pub(crate) fn at(c: &crate::grid::GameCoords) -> GameRow {
        GameRow {
            game_index: c.game_index,
            information_source: c.information_source,
            observability: c.observability,
            target: c.target,
            starting_state: c.starting_state,
            engine: c.engine,
            repeat: c.repeat,
            leader: Seat::Player,
            player_score: 0,
            target_score: 0,
            score_diff: 0,
            win_or_tie: true,
            ending: Ending::Domino,
            turns: 0,
            player_draws: 0,
            target_draws: 0,
            predictions: 0,
            predictions_correct: 0,
            nodes: 0,
            moves: String::new(),
            elapsed_us: 0,
            belief: (c.observability == engine::Observability::Partial).then_some(c.belief),
            belief_log_loss: None,
            belief_brier: None,
            belief_ess: None,
            shaping: c.shaping,
            budget: c.budget,
            agent: None,
            opponent: None,
            agent_side: c.pairing.map(|_| c.agent_side as u32),
            rules: None,
            forfeit: None,
        }
    }

    /// The row's deterministic content as one line (everything but
    /// elapsed_us; the belief columns only when not `uniform` (or absent) and empty, the
    /// shaping only when not `none`, so that rows written before them keep
    /// their checksums).
    pub fn canonical_line(&self) -> String {
        let mut belief = String::new();
        if self.belief.is_some_and(|b| b != engine::Belief::Uniform) || self.belief_log_loss.is_some() {
            // Floats by their bits: the line is exact.
            let bits = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:016x}", x.to_bits()));
            belief = format!(
                ",{},{},{},{}",
                self.belief.map_or("-", |b| b.name()),
                bits(self.belief_log_loss),
                bits(self.belief_brier),
                bits(self.belief_ess)
            );
        }
        if self.shaping != crate::spec::ShapingLevel::NONE {
            belief = format!("{belief},shaping={}", self.shaping.name());
        }
        if let Some(b) = self.budget {
            belief = format!("{belief},budget={b}");
        }
        if let (Some(a), Some(o), Some(side)) = (&self.agent, &self.opponent, self.agent_side) {
            belief = format!("{belief},agent={a},opponent={o},side={side}");
        }
        if let Some(r) = &self.rules {
            belief = format!("{belief},rules={r}");
        }
        if let Some(f) = &self.forfeit {
            belief = format!("{belief},forfeit={f}");
        }
        format!(
            "{},{},{},{},{},{},{},{:?},{},{},{},{},{},{},{},{},{},{},{},{}{belief}\n",
            self.game_index,
            self.information_source.name(),
            self.observability,
            self.target,
            self.starting_state,
            self.engine,
            self.repeat,
            self.leader,
            self.player_score,
            self.target_score,
            self.score_diff,
            self.win_or_tie,
            self.ending,
            self.turns,
            self.player_draws,
            self.target_draws,
            self.predictions,
            self.predictions_correct,
            self.nodes,
            self.moves
        )
    }
}

/// SHA-256 (hex) over the canonical lines of `rows` in order.
pub fn checksum(rows: &[GameRow]) -> String {
    let mut h = Sha256::new();
    for r in rows {
        h.update(r.canonical_line().as_bytes());
    }
    hex(&h.finalize())
}

/// Why a shard did not finish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// `cancel` was set before every game was played.
    #[error("the shard was cancelled")]
    Cancelled,
    /// A game could not be played; the shard's other threads stop.
    #[error("game {index}: {message}")]
    Game {
        /// The game's index in the grid.
        index: u64,
        /// The engine's error, or the classifier source's missing model.
        message: String,
    },
}

/// One hand of one match, read from the agent's side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandRow {
    /// The match's index in the grid.
    pub game_index: u64,
    /// The hand, 1-based.
    pub hand: u32,
    /// Whether the agent's side opened the hand.
    pub player_led: bool,
    /// Points the agent's side made in the hand.
    pub player_points: u32,
    /// Points the other side made (with three or four separate seats, the
    /// best of the others).
    pub target_points: u32,
    /// The agent side's match total after the hand.
    pub player_total: u32,
    /// The other side's total after the hand (the best other, as above).
    pub target_total: u32,
    /// Whether the hand was blocked (else a hand emptied: domino).
    pub blocked: bool,
    /// Plays and passes.
    pub turns: u32,
    /// Draws by the agent's side.
    pub player_draws: u32,
    /// Draws by the others.
    pub target_draws: u32,
    /// Positions the agent side's searches valued in the hand.
    pub nodes: u64,
}

/// One play of one game.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRow {
    /// The game's index in the grid.
    pub game_index: u64,
    /// The hand, 1-based (always 1 for the thesis and for one-hand grid points).
    pub hand: u32,
    /// The play's position among the game's plays, 0-based (draws and passes
    /// are not counted).
    pub turn: u32,
    /// The seat that played: thesis 0 = player, 1 = target; full game the seat
    /// number (the agent's side holds seat 0).
    pub seat: u32,
    /// The play: tile and location, e.g. `33L`.
    pub action: String,
    /// The board count after the play.
    pub count: u32,
    /// The player's (agent side's) points after the play, this hand.
    pub player_score: u32,
    /// The target's (targets' side's) points after the play, this hand.
    pub target_score: u32,
    /// Legal plays the seat had.
    pub legal_actions: u32,
    /// A searched decision's value of the chosen play (null otherwise).
    pub value: Option<f64>,
    /// A searched decision's best value among the other plays: the best
    /// alternative (null otherwise).
    pub best_alternative: Option<f64>,
    /// Positions the search valued for this decision (0 when not searched).
    pub nodes: u64,
}

/// One sample: the features after a target turn of a training game.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleRow {
    /// The training game's index; it picks the pairing `TABLE_9[game % 9]`.
    pub game: u64,
    /// The target seat's turn number, 1-based.
    pub turn: u32,
    /// The fixed policy the player seat played.
    pub player_type: TargetKind,
    /// The target seat's type: the sample's label.
    pub target_type: TargetKind,
    /// The features in Table 8's order: points per turn, defense, opponent
    /// draws per turn, scoring plays per turn, count.
    pub x: [f64; 5],
}
