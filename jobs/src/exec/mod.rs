//! Shard execution on all cores of a worker: the thesis's games here, the
//! full game's in `full_game.rs`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use engine::{GameConfig, InfoSource, LocalTable, RulesConfig, Searcher, Seat, play_game, play_game_recorded};

mod external_game;
mod full_game;

use crate::grid::{Shard, coords};
use crate::rows::{ExecError, GameRow, MoveRow};
use crate::spec::{Source, Spec};

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
        type Part = (Vec<GameRow>, Vec<MoveRow>, Vec<crate::rows::HandRow>);
        let results: Vec<Result<Part, ExecError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = tables
                .iter_mut()
                .map(|table| {
                    let (rules, next, failed) = (&rules, &next, &failed);
                    scope.spawn(move || {
                        let mut searcher = Searcher::new(rules.clone(), spec.search, std::mem::take(table));
                        // This thread's agent processes, kept across its games.
                        // A stop ends their waits at once.
                        let mut ext = crate::external::ExternalPool::new(cancel);
                        let mut rows = Vec::new();
                        let mut moves = Vec::new();
                        let mut hands = Vec::new();
                        let outcome = 'games: loop {
                            let start = next.fetch_add(BLOCK, Ordering::Relaxed);
                            if start >= shard.games {
                                break Ok(());
                            }
                            if cancel.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                                break Err(ExecError::Cancelled);
                            }
                            let end = (start + BLOCK).min(shard.games);
                            for i in start..end {
                                let played = play_one(spec, &mut searcher, model, &mut ext, shard.first_game + i);
                                // Stopped: no game starts, and the one in
                                // play (its agents killed) is given back.
                                if cancel.load(Ordering::Relaxed) {
                                    break 'games Err(ExecError::Cancelled);
                                }
                                match played {
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
                .map(|h| {
                    // The shard thread's own message goes on into the task's
                    // error (before: "a shard thread panicked: Any { .. }").
                    h.join()
                        .unwrap_or_else(|p| panic!("a shard thread panicked: {}", panic_text(p.as_ref())))
                })
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
    pub hands: Vec<crate::rows::HandRow>,
}

fn play_one<S: engine::ValueStore>(
    spec: &Spec,
    searcher: &mut Searcher<S>,
    model: Option<&crate::predictors::Trained>,
    ext: &mut crate::external::ExternalPool,
    index: u64,
) -> Result<(GameRow, Vec<MoveRow>, Vec<crate::rows::HandRow>), ExecError> {
    let c = coords(spec, index);
    if let Some(full) = &spec.full {
        return full_game::play(
            spec,
            full,
            &c,
            model.and_then(crate::predictors::Trained::predictors),
            ext,
        );
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

/// What a panic said, if it said it in text.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
