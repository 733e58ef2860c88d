//! One grid point of a full-game spec (`[rules] preset = "all-fives"`,
//! `"block"` or `"team"`): a hand, or an All-Fives match with `[match]`,
//! between the agent's side (seat 0 and its partner: M* or Expectimax at the
//! spec's depth) and the target's side (the grid's target in every other
//! seat), written as a games-table row. Block and team rows carry
//! OpenSpiel's returns (see `play_open`).
//!
//! The row keeps the thesis's columns: `player_score` / `target_score` are
//! the agent's side's total over the hands and the targets' (with three or
//! four separate seats, the best target's), `leader` whether
//! the first hand was opened by the agent's side (`player`) or not, `ending`
//! the last hand's end, `turns` the plays and passes of every hand, the draws
//! per side, `predictions` 0 (M* is given each target's true strategy, the
//! oracle), `nodes` the positions the agent's searches valued, and `moves`
//! the hands' events (see [`full::moves_text`]). A row is a pure function of the
//! spec and the game's coordinates.

use std::time::Instant;

use engine::{Ending, Observability, PlayerEngine, Seat, WorldCount};
use full::{
    FivesPosition, FullAction, FullAgent, FullMove, FullPosition, FullRules, HandEnd, MAX_SEATS, MatchOptions, OPENING,
    OpenHandRecord, Preset, SearchSettings, deal_from_index, openspiel, play_match_with, play_open_hand,
    play_open_hand_external,
};

use super::external_game;
use crate::grid::GameCoords;
use crate::nets::{GameSeats, NetAgent};
use crate::rows::{ExecError, GameRow, HandRow, MoveRow};
use crate::spec::{AgentPlay, FullSpec, Spec};

/// Plays the grid point `c` of a full-game spec.
pub(crate) fn play(
    spec: &Spec,
    full: &FullSpec,
    c: &GameCoords,
    predictors: Option<&full::predict::Predictors>,
    ext: &mut crate::external::ExternalPool,
) -> Result<(GameRow, Vec<MoveRow>, Vec<HandRow>), ExecError> {
    let rules = spec.full_rules(c.rules).expect("a full-game spec");
    if c.shaping != crate::spec::ShapingLevel::NONE && predictors.is_none() {
        return Err(ExecError::Game {
            index: c.game_index,
            message: "the shaping needs the experiment's fitted predictors (its fit stage), and none were given".into(),
        });
    }
    let agents = agents(spec, full, c);
    let to = full.match_to.unwrap_or(0);
    let forfeited = |f: &full::Forfeit| {
        let row = named(spec, c, GameRow::at(c));
        Ok((
            external_game::forfeit_row(row, c, &rules, to, f),
            Vec::new(),
            Vec::new(),
        ))
    };
    let externals = external_game::externals(spec, c, &rules);
    if let Some(f) = external_game::begin(ext, &externals, spec, c, &rules, to)? {
        return forfeited(&f);
    }
    let external = !externals.is_empty();
    if rules.kind() != Preset::AllFives {
        return play_open(spec, c, &rules, &agents, external.then_some(ext), net_sides(spec, c));
    }
    let t = Instant::now();
    // The learned leaves are given whenever a seat's search reads them:
    // `[search] evaluation = "learned"`, or an `[agents.NAME]` search's own.
    let learned = agents.iter().any(|a| matches!(a, FullAgent::Search(s) if s.learned));
    let opts = MatchOptions {
        eval: (full.search.learned || learned).then(crate::evals::shipped_eval),
        table_mb: table_mb(spec, full, c),
        target_depth: full.search.target_depth,
        predictors,
        agent_side: c.agent_side,
        // A worker plays games on every thread it has.
        decision_threads: 1,
    };
    let keys = full::MatchKeys {
        seed: spec.seed,
        deal: c.starting_state,
        repeat: c.repeat as u64,
    };
    let nets = net_sides(spec, c);
    let played = if external || nets.iter().any(Option::is_some) {
        let key = (spec.seed, c.starting_state, c.repeat as u64);
        let r = {
            let programs = external.then_some(&mut *ext as &mut dyn full::ExternalSeats);
            let mut seats = GameSeats::new(&rules, key, nets, programs);
            full::play_match_external(&rules, keys, &agents, to, &opts, &mut seats)
        };
        if external {
            let sides = rules.sides() as usize;
            match &r {
                Some(Ok(m)) => external_game::end(ext, Some((&m.totals[..sides], m.winner)), None),
                Some(Err(f)) => external_game::end(ext, None, Some(f)),
                None => external_game::end(ext, None, None),
            }
        }
        r
    } else {
        play_match_with(&rules, spec.seed, c.starting_state, c.repeat as u64, &agents, to, &opts).map(Ok)
    };
    let m = match played {
        Some(Ok(m)) => m,
        Some(Err(f)) => return forfeited(&f),
        None => {
            return Err(ExecError::Game {
                index: c.game_index,
                message: format!("starting_state = {} is not a deal of these rules", c.starting_state),
            });
        }
    };
    let elapsed_us = t.elapsed().as_micros() as u64;
    let mine = c.agent_side;
    let (mut turns, mut draws) = (0, [0u32; 2]);
    for h in &m.hands {
        for mv in &h.moves {
            match *mv {
                FullMove::Play { .. } | FullMove::Pass { .. } => turns += 1,
                FullMove::Draw { seat, .. } => draws[(rules.side(seat) != mine) as usize] += 1,
            }
        }
    }
    let scores: Vec<_> = m.hands.iter().flat_map(|h| h.beliefs.iter()).collect();
    let first = m.hands.first().expect("a match has a hand");
    let last = m.hands.last().expect("a match has a hand");
    let (player_score, target_score) = if mine == 0 {
        (m.totals[0], best_opponent(&rules, &m.totals))
    } else {
        // Named agents play two sides: the agent's and the other.
        (m.totals[mine as usize], m.totals[0])
    };
    let score_diff = player_score as i32 - target_score as i32;
    let move_rows = if spec.output_moves {
        full_moves(&rules, c.game_index, &m.hands)
    } else {
        Vec::new()
    };
    let row = GameRow {
        leader: if rules.side(first.opening.leader) == mine {
            Seat::Player
        } else {
            Seat::Target
        },
        player_score,
        target_score,
        score_diff,
        win_or_tie: score_diff >= 0,
        ending: match last.end {
            HandEnd::Domino(_) => Ending::Domino,
            HandEnd::Blocked => Ending::Blocked,
        },
        turns,
        player_draws: draws[0],
        target_draws: draws[1],
        nodes: m.hands.iter().map(|h| h.nodes).sum(),
        moves: full::moves_text(&rules, &m.hands),
        elapsed_us,
        belief_log_loss: mean(&scores, |s| Some(s.log_loss)),
        belief_brier: mean(&scores, |s| Some(s.brier)),
        belief_ess: mean(&scores, |s| s.ess),
        ..with_belief(named(spec, c, GameRow::at(c)))
    };
    let hands = if spec.writes_hands() {
        hand_rows(&rules, c, &m.hands)
    } else {
        Vec::new()
    };
    Ok((row, move_rows, hands))
}

/// The seats of grid point `c`: the agent's side searches (its partner
/// may be a strategy), every other seat plays the target.
pub fn agents(spec: &Spec, full: &FullSpec, c: &GameCoords) -> [FullAgent; MAX_SEATS] {
    let rules = spec.full_rules(c.rules).expect("a full-game spec");
    if let (Some(pool), Some(k)) = (&spec.pool, c.pairing) {
        let (a, o) = pool.pairings[k as usize];
        let play = |i: u16| match pool.agents[i as usize].play {
            AgentPlay::Strategy(t) => FullAgent::target(t, full.search.target_depth),
            AgentPlay::External(_) | AgentPlay::Net(_) => FullAgent::External,
            AgentPlay::Search(s) => FullAgent::Search(SearchSettings {
                worlds: if c.observability == Observability::Partial {
                    s.settings.worlds
                } else {
                    0
                },
                ..s.settings
            }),
        };
        let (mine, theirs) = (play(a), play(o));
        return std::array::from_fn(|s| {
            if rules.side(s as u8) == c.agent_side {
                mine
            } else {
                theirs
            }
        });
    }
    // Unlimited only with a budget (checked when parsed): deepen until it
    // is spent.
    let depth = full::depth_of(spec.search.depth);
    let engine = c.engine;
    let worlds = match (c.observability, spec.search.worlds) {
        (Observability::Partial, WorldCount::Sample(k)) => k as u16,
        _ => 0,
    };
    let settings = SearchSettings {
        engine,
        depth,
        budget: c.budget.unwrap_or(full.search.budget),
        worlds,
        learned: full.search.learned,
        belief: c.belief,
        shaping: c.shaping.shaping,
        predictor: c.shaping.predictor,
        adaptive: full.search.adaptive,
    };
    std::array::from_fn(|s| match (s, rules.side(s as u8), full.partner) {
        (0, _, _) | (_, 0, None) => FullAgent::Search(settings),
        (_, 0, Some(p)) => FullAgent::Fixed(p),
        _ => FullAgent::target(c.target, full.search.target_depth),
    })
}

/// The transposition table of grid point `c`: `[search] table_mb`, or with
/// named agents the larger of the pairing's two agents' (a table never
/// replaces an entry, so its size changes no result).
fn table_mb(spec: &Spec, full: &FullSpec, c: &GameCoords) -> u32 {
    let (Some(pool), Some(k)) = (&spec.pool, c.pairing) else {
        return full.search.table_mb;
    };
    let (a, o) = pool.pairings[k as usize];
    [a, o]
        .iter()
        .filter_map(|&i| match pool.agents[i as usize].play {
            AgentPlay::Search(s) => Some(s.table_mb),
            AgentPlay::Strategy(_) | AgentPlay::External(_) | AgentPlay::Net(_) => None,
        })
        .max()
        .unwrap_or(full.search.table_mb)
}

/// The networks of grid point `c`'s pairing, by side (`[agent's side,
/// other]` placed at their sides).
fn net_sides<'s>(spec: &'s Spec, c: &GameCoords) -> [Option<&'s NetAgent>; 2] {
    let (Some(pool), Some(k)) = (&spec.pool, c.pairing) else {
        return [None, None];
    };
    let (a, o) = pool.pairings[k as usize];
    let net = |i: u16| match &pool.agents[i as usize].play {
        AgentPlay::Net(n) => Some(n),
        _ => None,
    };
    let mut sides = [None, None];
    sides[c.agent_side as usize & 1] = net(a);
    sides[1 - (c.agent_side as usize & 1)] = net(o);
    sides
}

/// With named agents, the row names the agent and the opponent; with a
/// rules factor, the rule set.
fn named(spec: &Spec, c: &GameCoords, mut row: GameRow) -> GameRow {
    if let Some(k) = c.rules {
        row.rules = Some(spec.rule_sets[k as usize].name.clone());
    }
    if let (Some(pool), Some(k)) = (&spec.pool, c.pairing) {
        let (a, o) = pool.pairings[k as usize];
        row.agent = Some(pool.agents[a as usize].name.clone());
        row.opponent = Some(pool.agents[o as usize].name.clone());
    }
    row
}

/// The per-move rows of a grid point's hands: each play with the legal
/// plays before it, the count and the sides' points of the hand after it,
/// and for the agent side's searched decisions the search's values.
fn full_moves(rules: &FullRules, index: u64, hands: &[full::HandRecord]) -> Vec<MoveRow> {
    let mut out: Vec<MoveRow> = Vec::new();
    let mut list = engine::ActionList::default();
    for (h, hand) in hands.iter().enumerate() {
        let mut pos = FivesPosition::deal(rules, hand.hands, hand.opening);
        let mut searched = hand.decisions.iter().peekable();
        for (k, mv) in hand.moves.iter().enumerate() {
            match *mv {
                FullMove::Play { seat, tile, loc, .. } => {
                    pos.actions(rules, &mut list);
                    let legal = list.len() as u32;
                    let d = searched.next_if(|(at, _)| *at == k).map(|(_, d)| *d);
                    pos.play(rules, engine::Action { tile, loc });
                    out.push(MoveRow {
                        game_index: index,
                        hand: h as u32 + 1,
                        turn: out.len() as u32,
                        seat: seat as u32,
                        action: full::play_token(rules, tile, loc),
                        count: pos.board.count(),
                        player_score: pos.scores[0],
                        target_score: best_opponent(rules, &pos.scores),
                        legal_actions: legal,
                        value: d.map(|d| d.value),
                        best_alternative: d.and_then(|d| d.best_other),
                        nodes: d.map_or(0, |d| d.nodes),
                    });
                }
                FullMove::Draw { tile, .. } => pos.draw(tile),
                FullMove::Pass { .. } => {
                    pos.pass(rules);
                }
            }
        }
    }
    out
}

/// A grid point of block or team: one hand, the agent's side searching; the
/// row's scores are OpenSpiel's returns (the winning side's gain, the other
/// side's loss), `score_diff` the agent side's return.
fn play_open(
    spec: &Spec,
    c: &GameCoords,
    rules: &FullRules,
    agents: &[FullAgent; MAX_SEATS],
    mut ext: Option<&mut crate::external::ExternalPool>,
    nets: [Option<&NetAgent>; 2],
) -> Result<(GameRow, Vec<MoveRow>, Vec<HandRow>), ExecError> {
    let hands = deal_from_index(rules, c.starting_state).ok_or_else(|| ExecError::Game {
        index: c.game_index,
        message: format!("starting_state = {} is not a deal of these rules", c.starting_state),
    })?;
    let mut rngs = full::MatchKeys {
        seed: spec.seed,
        deal: c.starting_state,
        repeat: c.repeat as u64,
    }
    .seat_streams();
    let t = Instant::now();
    let h = if ext.is_none() && nets.iter().all(Option::is_none) {
        play_open_hand(rules, hands, agents, &mut rngs)
    } else {
        let key = (spec.seed, c.starting_state, c.repeat as u64);
        let r = {
            let programs = ext.as_deref_mut().map(|e| e as &mut dyn full::ExternalSeats);
            let mut seats = GameSeats::new(rules, key, nets, programs);
            play_open_hand_external(rules, hands, agents, &mut rngs, Some(&mut seats))
        };
        match (r, ext) {
            (Ok(h), None) => h,
            (Ok(h), Some(ext)) => {
                let sides = rules.sides() as usize;
                let winner = (0..sides).max_by_key(|&s| h.returns[s]).unwrap_or(0) as u8;
                let points: Vec<u32> = (0..sides).map(|s| h.returns[s].max(0) as u32).collect();
                external_game::end(ext, Some((&points, winner)), None);
                h
            }
            (Err(f), Some(ext)) => {
                external_game::end(ext, None, Some(&f));
                let row = named(spec, c, GameRow::at(c));
                return Ok((external_game::forfeit_row(row, c, rules, 0, &f), Vec::new(), Vec::new()));
            }
            (Err(f), None) => {
                return Err(ExecError::Game {
                    index: c.game_index,
                    message: format!("the network at seat {} could not play: {}", f.seat, f.reason),
                });
            }
        }
    };
    let elapsed_us = t.elapsed().as_micros() as u64;
    // The agent's side's return (every seat of a side has the same).
    let mine = (0..rules.seats())
        .find(|&s| rules.side(s) == c.agent_side)
        .expect("the agent's side has a seat");
    let ret = h.returns[mine as usize];
    let row = GameRow {
        player_score: ret.max(0) as u32,
        target_score: (-ret).max(0) as u32,
        score_diff: ret,
        win_or_tie: ret >= 0,
        // Seat 0 opens a block or team hand.
        leader: if rules.side(0) == c.agent_side {
            Seat::Player
        } else {
            Seat::Target
        },
        ending: match h.end {
            HandEnd::Domino(_) => Ending::Domino,
            HandEnd::Blocked => Ending::Blocked,
        },
        turns: h.plays.len() as u32,
        nodes: h.nodes,
        moves: open_moves_text(rules, &h),
        belief_log_loss: mean(&h.beliefs.iter().collect::<Vec<_>>(), |s| Some(s.log_loss)),
        belief_brier: mean(&h.beliefs.iter().collect::<Vec<_>>(), |s| Some(s.brier)),
        // The rest as `GameRow::at` leaves it: nobody draws, and no
        // predictions are made.
        elapsed_us,
        ..with_belief(named(spec, c, GameRow::at(c)))
    };
    let moves = if spec.output_moves {
        open_moves(rules, c.game_index, &h)
    } else {
        Vec::new()
    };
    Ok((row, moves, Vec::new()))
}

/// A block or team play as a token: `66` opens, `26@6` covers pip 6.
fn open_token(rules: &FullRules, a: FullAction) -> String {
    let (p, q) = rules.pips(a.tile);
    if a.cover == OPENING {
        format!("{p}{q}")
    } else {
        format!("{p}{q}@{}", a.cover)
    }
}

/// A block or team hand as its OpenSpiel history: the chance actions (the
/// tiles dealt, in dealing order), then each play's action id, space-separated
/// (`python_block_dominoes` / `python_team_dominoes` load it as it is).
fn open_moves_text(rules: &FullRules, h: &OpenHandRecord) -> String {
    let mut ids = openspiel::chance_actions(rules, &h.hands);
    ids.extend(h.plays.iter().map(|&(seat, a)| openspiel::action_id(rules, seat, a)));
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    ids.join(" ")
}

/// The per-move rows of a block or team hand: `count` is the sum of the open
/// ends' pips after the play; the scores are 0 until the last play, which
/// carries the returns.
fn open_moves(rules: &FullRules, index: u64, h: &OpenHandRecord) -> Vec<MoveRow> {
    let mut pos = FullPosition::deal(rules, h.hands);
    let mut searched = h.decisions.iter().peekable();
    let mut out = Vec::with_capacity(h.plays.len());
    for (k, &(seat, a)) in h.plays.iter().enumerate() {
        pos.play(rules, a);
        let d = searched.next_if(|(at, _)| *at == k).map(|(_, d)| *d);
        let r = pos.returns(rules)[0];
        out.push(MoveRow {
            game_index: index,
            hand: 1,
            turn: k as u32,
            seat: seat as u32,
            action: open_token(rules, a),
            count: pos.ends[..pos.open as usize].iter().map(|&e| e as u32).sum(),
            player_score: r.max(0) as u32,
            target_score: (-r).max(0) as u32,
            legal_actions: h.legal[k],
            value: d.map(|d| d.value),
            best_alternative: d.and_then(|d| d.best_other),
            nodes: d.map_or(0, |d| d.nodes),
        });
    }
    out
}

/// A match's hands as the per-hand table's rows, from the agent's side
/// (`c.agent_side`): points and running totals of each side (the other
/// side: the best of the others with three or four separate seats).
fn hand_rows(rules: &FullRules, c: &GameCoords, hands: &[full::HandRecord]) -> Vec<HandRow> {
    let mine = c.agent_side;
    let mut totals = [0u32; MAX_SEATS];
    let other = |scores: &[u32; MAX_SEATS]| {
        if mine == 0 {
            best_opponent(rules, scores)
        } else {
            scores[0]
        }
    };
    hands
        .iter()
        .enumerate()
        .map(|(k, h)| {
            for (t, s) in totals.iter_mut().zip(h.scores) {
                *t += s;
            }
            let (mut turns, mut draws) = (0, [0u32; 2]);
            for mv in &h.moves {
                match *mv {
                    FullMove::Play { .. } | FullMove::Pass { .. } => turns += 1,
                    FullMove::Draw { seat, .. } => draws[(rules.side(seat) != mine) as usize] += 1,
                }
            }
            HandRow {
                game_index: c.game_index,
                hand: k as u32 + 1,
                player_led: rules.side(h.opening.leader) == mine,
                player_points: h.scores[mine as usize],
                target_points: other(&h.scores),
                player_total: totals[mine as usize],
                target_total: other(&totals),
                blocked: matches!(h.end, HandEnd::Blocked),
                turns,
                player_draws: draws[0],
                target_draws: draws[1],
                nodes: h.nodes,
            }
        })
        .collect()
}

/// The targets' side's score: with two sides the other side's, with three or
/// four separate seats the best of them (so `score_diff >= 0` means the
/// agent is behind nobody).
fn best_opponent(rules: &FullRules, scores: &[u32; MAX_SEATS]) -> u32 {
    scores[1..rules.sides() as usize].iter().copied().max().unwrap_or(0)
}

/// The mean of `f` over the decisions' belief scores that have it.
fn mean(scores: &[&full::BeliefScore], f: impl Fn(&full::BeliefScore) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = scores.iter().filter_map(|s| f(s)).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The DominAI engine's worlds are its own matrices, whatever the grid's
/// belief: its rows say so.
fn with_belief(mut row: GameRow) -> GameRow {
    if row.engine == PlayerEngine::Dominai && row.belief.is_some() {
        row.belief = Some(engine::Belief::Dominai);
    }
    row
}
