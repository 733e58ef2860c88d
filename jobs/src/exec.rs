//! Shard execution on all cores of a worker.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use engine::{
    Ending, GameConfig, InfoSource, LocalTable, Observability, PlayerEngine, RulesConfig, Searcher, Seat, play_game,
    play_game_recorded,
};
use full::FullTarget;
use sha2::{Digest, Sha256};

use crate::grid::{Shard, coords};
use crate::moves::MoveRow;
use crate::spec::{Source, Spec, hex};

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

/// Plays shards on a fixed number of threads, keeping one transposition table
/// per thread between shards of the same rules (values never depend on the
/// table's contents, so this only saves time).
#[derive(Debug)]
pub struct Executor {
    threads: usize,
    tables: Mutex<Option<(RulesConfig, Vec<LocalTable>)>>,
}

/// Games a thread claims at a time.
const BLOCK: u64 = 16;

impl Executor {
    /// An executor on `threads` threads (at least one); the tables are made
    /// on the first shard, and again whenever the rules change.
    pub fn new(threads: usize) -> Executor {
        Executor {
            threads: threads.max(1),
            tables: Mutex::new(None),
        }
    }

    /// The threads a shard is played on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Plays the games of `shard` and returns their rows in game order.
    /// `progress` counts finished games; `cancel` stops the work early.
    pub fn run(
        &self,
        spec: &Spec,
        shard: Shard,
        progress: &AtomicU64,
        cancel: &AtomicBool,
    ) -> Result<Vec<GameRow>, ExecError> {
        self.run_with(spec, shard, None, progress, cancel)
    }

    /// [`Self::run`] with the trained classifier for the `classifier` source.
    pub fn run_with(
        &self,
        spec: &Spec,
        shard: Shard,
        model: Option<&crate::predictors::Trained>,
        progress: &AtomicU64,
        cancel: &AtomicBool,
    ) -> Result<Vec<GameRow>, ExecError> {
        self.run_with_moves(spec, shard, model, progress, cancel)
            .map(|(rows, _)| rows)
    }

    /// [`Self::run_with`], also returning the per-move table's rows (in game
    /// and ply order) when the spec asks for them (`[output] moves = true`;
    /// else none).
    pub fn run_with_moves(
        &self,
        spec: &Spec,
        shard: Shard,
        model: Option<&crate::predictors::Trained>,
        progress: &AtomicU64,
        cancel: &AtomicBool,
    ) -> Result<(Vec<GameRow>, Vec<MoveRow>), ExecError> {
        self.run_with_extras(spec, shard, model, progress, cancel)
            .map(|p| (p.rows, p.moves))
    }

    /// [`Self::run_with`], also returning the per-move table's rows (with
    /// `[output] moves = true`) and the per-hand rows (with `[match]`), each
    /// in game order.
    pub fn run_with_extras(
        &self,
        spec: &Spec,
        shard: Shard,
        model: Option<&crate::predictors::Trained>,
        progress: &AtomicU64,
        cancel: &AtomicBool,
    ) -> Result<Played, ExecError> {
        let rules = spec.rules();
        let mut tables = {
            let mut guard = self.tables.lock().unwrap_or_else(|e| e.into_inner());
            match guard.take() {
                Some((r, t)) if r == spec.rules && t.len() == self.threads => t,
                _ => (0..self.threads).map(|_| LocalTable::new()).collect(),
            }
        };
        let next = AtomicU64::new(0);
        let failed = AtomicBool::new(false);
        type Part = (Vec<GameRow>, Vec<MoveRow>, Vec<crate::hands::HandRow>);
        let results: Vec<Result<Part, ExecError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = tables
                .iter_mut()
                .map(|table| {
                    let (rules, next, failed) = (&rules, &next, &failed);
                    scope.spawn(move || {
                        let mut searcher = Searcher::new(rules.clone(), spec.search, std::mem::take(table));
                        let mut rows = Vec::new();
                        let mut moves = Vec::new();
                        let mut hands = Vec::new();
                        let outcome = loop {
                            let start = next.fetch_add(BLOCK, Ordering::Relaxed);
                            if start >= shard.games {
                                break Ok(());
                            }
                            if cancel.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                                break Err(ExecError::Cancelled);
                            }
                            let end = (start + BLOCK).min(shard.games);
                            for i in start..end {
                                match play_one(spec, &mut searcher, model, shard.first_game + i) {
                                    Ok((row, m, h)) => {
                                        rows.push(row);
                                        moves.extend(m);
                                        hands.extend(h);
                                    }
                                    Err(e) => {
                                        failed.store(true, Ordering::Relaxed);
                                        *table = searcher.into_store();
                                        return Err(e);
                                    }
                                }
                            }
                            progress.fetch_add(end - start, Ordering::Relaxed);
                        };
                        *table = searcher.into_store();
                        outcome.map(|()| (rows, moves, hands))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a shard thread panicked"))
                .collect()
        });
        *self.tables.lock().unwrap_or_else(|e| e.into_inner()) = Some((spec.rules, tables));
        let mut rows = Vec::with_capacity(shard.games as usize);
        let mut moves = Vec::new();
        let mut hands = Vec::new();
        let mut cancelled = false;
        for r in results {
            match r {
                Ok((part, m, h)) => {
                    rows.extend(part);
                    moves.extend(m);
                    hands.extend(h);
                }
                Err(ExecError::Cancelled) => cancelled = true,
                Err(e) => return Err(e),
            }
        }
        if cancelled {
            return Err(ExecError::Cancelled);
        }
        rows.sort_unstable_by_key(|r| r.game_index);
        moves.sort_unstable_by_key(|m| (m.game_index, m.turn));
        hands.sort_unstable_by_key(|h| (h.game_index, h.hand));
        Ok(Played { rows, moves, hands })
    }
}

/// What a shard's play returns: the games rows, and the per-move and
/// per-hand rows where the spec writes them.
#[derive(Debug, Default)]
pub struct Played {
    /// One row per game, in game order.
    pub rows: Vec<GameRow>,
    /// `[output] moves = true`: one row per play.
    pub moves: Vec<MoveRow>,
    /// `[match]`: one row per hand.
    pub hands: Vec<crate::hands::HandRow>,
}

fn play_one<S: engine::ValueStore>(
    spec: &Spec,
    searcher: &mut Searcher<S>,
    model: Option<&crate::predictors::Trained>,
    index: u64,
) -> Result<(GameRow, Vec<MoveRow>, Vec<crate::hands::HandRow>), ExecError> {
    let c = coords(spec, index);
    if let Some(full) = &spec.full {
        return crate::exec_full::play(spec, full, &c, model.and_then(crate::predictors::Trained::predictors));
    }
    searcher.set_belief(c.belief);
    let game = GameConfig {
        seed: spec.seed,
        starting_state: c.starting_state,
        repeat: c.repeat as u64,
        engine: c.engine,
        target: c
            .target
            .thesis()
            .expect("a thesis grid has the thesis's targets (checked when parsed)"),
        observability: c.observability,
    };
    let source = match c.information_source {
        Source::Oracle => InfoSource::Oracle,
        Source::Bayes => InfoSource::Bayes,
        Source::Classifier => match model.and_then(crate::predictors::Trained::classifier) {
            Some(m) => InfoSource::Classifier(m),
            None => {
                return Err(ExecError::Game {
                    index,
                    message: "the classifier source needs the experiment's trained model, and none was given".into(),
                });
            }
        },
    };
    let t = Instant::now();
    let fail = |e: engine::GameError| ExecError::Game {
        index,
        message: e.to_string(),
    };
    let (rec, decisions) = if spec.output_moves {
        play_game_recorded(searcher, &game, source).map_err(fail)?
    } else {
        (play_game(searcher, &game, source).map_err(fail)?, Vec::new())
    };
    let elapsed_us = t.elapsed().as_micros() as u64;
    let move_rows = if spec.output_moves {
        thesis_moves(searcher.rules(), index, &game, &rec, &decisions)
    } else {
        Vec::new()
    };
    let moves = rec.moves_text(searcher.rules());
    let row = GameRow {
        leader: rec.leader,
        player_score: rec.player_score,
        target_score: rec.target_score,
        score_diff: rec.score_diff,
        win_or_tie: rec.win_or_tie(),
        ending: rec.ending,
        turns: rec.turns,
        player_draws: rec.player_draws,
        target_draws: rec.target_draws,
        predictions: rec.predictions,
        predictions_correct: rec.predictions_correct,
        nodes: rec.nodes,
        moves,
        elapsed_us,
        ..GameRow::at(&c)
    };
    Ok((row, move_rows, Vec::new()))
}

/// The per-move rows of a thesis game: its plays replayed, each with the
/// legal plays before it and, for the player's searched decisions (two or
/// more legal plays), the search's values.
fn thesis_moves(
    rules: &engine::Rules,
    index: u64,
    game: &GameConfig,
    rec: &engine::GameRecord,
    decisions: &[engine::SearchedDecision],
) -> Vec<MoveRow> {
    let deal = engine::Deal::from_index(rules, game.starting_state).expect("the game was played from this deal");
    let mut before = engine::Position::start(rules, &deal);
    let mut list = engine::ActionList::default();
    let mut searched = decisions.iter();
    let mut out: Vec<MoveRow> = Vec::new();
    let replayed = engine::replay_with(rules, &deal, &rec.moves, |step| {
        if let engine::Move::Play { seat, tile, loc, .. } = *step.mv {
            before.actions(rules, &mut list);
            let d = (seat == Seat::Player && list.len() > 1)
                .then(|| searched.next())
                .flatten();
            out.push(MoveRow {
                game_index: index,
                hand: 1,
                turn: out.len() as u32,
                seat: seat as u32,
                action: format!("{}{}", rules.tile_name(tile), loc.letter()),
                count: step.position.board.count(),
                player_score: step.player_score,
                target_score: step.target_score,
                legal_actions: list.len() as u32,
                value: d.map(|d| d.value),
                best_alternative: d.and_then(|d| d.best_other),
                nodes: d.map_or(0, |d| d.evaluations),
            });
        }
        before = *step.position;
    });
    debug_assert!(replayed.is_ok(), "a game's own moves replay");
    out
}
