//! All-Fives hands and matches played by fixed strategies in every seat:
//! the targets (`random`, `scorer`, `defender`, `heaviest`), one hand from a
//! deal, and a match of hands to a target score, each hand from its own
//! seeded streams.
//!
//! Randomness: the streams of a match are ChaCha20 keyed (see
//! [`engine::seed::keyed_rng`]) by the experiment seed, the first hand's deal
//! index and the repeat, with the tag `mugfull1`; stream `hand << 8 |
//! purpose` serves hand `hand` (0 = the deal of a later hand, 1 = the
//! boneyard's order, 2 + seat = that seat's random choices). A match is thus
//! a pure function of (seed, deal, repeat, rules, agents).

use rand_chacha::ChaCha20Rng;

use engine::seed::{keyed_rng, shuffle};
use engine::{ActionList, Loc, TileSet, bits};

use super::agent::{
    ExternalSeats, Forfeit, FullAgent, MatchContext, MatchOptions, Scratch, SeatView, external_choice, models,
    search_decision,
};
use super::deal::deal_from_index;
use super::fives::{FivesPosition, Opening, Scored, fives_draw_id, fives_pass_id, fives_play_id};
use super::position::HandEnd;
use super::rules::{FullRules, MAX_SEATS};
use super::search::FullDecision;
use super::seen::Seen;
use super::targets::{FullTarget, full_choice};
use super::worlds::BeliefScore;

/// One event of a hand, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullMove {
    /// `seat` played `tile` at `loc`, scoring as said.
    Play {
        /// The seat.
        seat: u8,
        /// The tile.
        tile: u8,
        /// Where.
        loc: Loc,
        /// What the play scored.
        scored: Scored,
    },
    /// `seat` drew `tile` from the boneyard.
    Draw {
        /// The seat.
        seat: u8,
        /// The tile.
        tile: u8,
    },
    /// `seat` passed (no play, nothing it may draw).
    Pass {
        /// The seat.
        seat: u8,
        /// What the pass scored (a blocking pass scores the hand).
        scored: Scored,
    },
}

impl FullMove {
    /// The event as a token: the seat and `66L` (a play; `+10` when the
    /// count scored, `*15` a domino's points), `d23` (a draw) or `-` (a
    /// pass; `*20` when it blocked the hand and scored), e.g. `1:36L+15`.
    pub fn token(&self, rules: &FullRules) -> String {
        match *self {
            FullMove::Play {
                seat,
                tile,
                loc,
                scored,
            } => {
                let mut t = format!("{seat}:{}", play_token(rules, tile, loc));
                if scored.count_points > 0 {
                    t += &format!("+{}", scored.count_points);
                }
                if scored.end_points > 0 {
                    t += &format!("*{}", scored.end_points);
                }
                t
            }
            FullMove::Draw { seat, tile } => {
                let (a, b) = rules.pips(tile);
                format!("{seat}:d{a}{b}")
            }
            FullMove::Pass { seat, scored } => {
                if scored.end_points > 0 {
                    format!("{seat}:-*{}", scored.end_points)
                } else {
                    format!("{seat}:-")
                }
            }
        }
    }
}

/// A play as a token: the tile's pips, low first, and the location's
/// letter, e.g. `36L`.
pub fn play_token(rules: &FullRules, tile: u8, loc: Loc) -> String {
    let (a, b) = rules.pips(tile);
    format!("{a}{b}{}", loc.letter())
}

/// The hands' events as tokens ([`FullMove::token`]): `h1` starts hand 1,
/// e.g. `h1 0:66L 1:36L+15 0:d14 ... h2 ...`.
pub fn moves_text(rules: &FullRules, hands: &[HandRecord]) -> String {
    let mut out = Vec::new();
    for (i, h) in hands.iter().enumerate() {
        out.push(format!("h{}", i + 1));
        out.extend(h.moves.iter().map(|mv| mv.token(rules)));
    }
    out.join(" ")
}

/// A hand played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct HandRecord {
    /// The deal: each seat's tiles.
    pub hands: [TileSet; MAX_SEATS],
    /// Who opened, and with what when forced.
    pub opening: Opening,
    /// How it ended.
    pub end: HandEnd,
    /// Points each side made (index: side).
    pub scores: [u32; MAX_SEATS],
    /// Every play, draw and pass.
    pub moves: Vec<FullMove>,
    /// Positions the searching seats valued.
    pub nodes: u64,
    /// The searching seats' decisions with two or more plays: the index of
    /// the play in `moves`, and the decision.
    pub decisions: Vec<(usize, FullDecision)>,
    /// How well the agent side's belief placed the hidden tiles at each of
    /// its partial-observation decisions (in the order of `decisions`).
    pub beliefs: Vec<BeliefScore>,
}

/// The keys of a match's streams: the experiment seed, the first hand's
/// deal index and the repeat (tag [`engine::seed::FULL_GAME`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchKeys {
    /// The experiment seed.
    pub seed: u64,
    /// The first hand's deal index.
    pub deal: u64,
    /// The repeat.
    pub repeat: u64,
}

impl MatchKeys {
    /// The stream of hand `hand` of the match for `purpose` (see the
    /// module's documentation).
    fn stream(self, hand: u64, purpose: u64) -> ChaCha20Rng {
        keyed_rng(
            self.seed,
            self.deal,
            self.repeat,
            engine::seed::FULL_GAME,
            hand << 8 | purpose,
        )
    }

    /// The seats' streams of the first hand (purpose `2 + seat`): a block or
    /// team hand's random choices.
    pub fn seat_streams(self) -> [ChaCha20Rng; MAX_SEATS] {
        std::array::from_fn(|s| self.stream(0, 2 + s as u64))
    }
}

/// Plays one hand from `hands` with `agents[seat]` in each seat; a searching
/// seat's M* models the others by their strategies (a searching opponent as
/// `searcher`). `rngs`: the boneyard's stream, then one stream per seat (a
/// random strategy's choices, a searching seat's worlds).
pub fn play_hand(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    opening: Opening,
    agents: &[FullAgent; MAX_SEATS],
    boneyard_rng: &mut ChaCha20Rng,
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
) -> HandRecord {
    let opts = MatchOptions::default();
    Scratch::with_thread_scratch(agents, opts.table_mb, |scratch| {
        let mut ctx = MatchContext::new(rules, &opts, scratch);
        play_hand_with(&mut ctx, hands, opening, agents, boneyard_rng, seat_rngs)
            .expect("no seat is decided outside muggins")
    })
}

/// [`play_hand`] under the rules, options and scratch of `ctx`; a seat
/// decided outside muggins (`ctx.external`) may forfeit the hand.
pub fn play_hand_with(
    ctx: &mut MatchContext,
    hands: [TileSet; MAX_SEATS],
    opening: Opening,
    agents: &[FullAgent; MAX_SEATS],
    boneyard_rng: &mut ChaCha20Rng,
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
) -> Result<HandRecord, Forfeit> {
    let rules = ctx.rules;
    let mut pos = FivesPosition::deal(rules, hands, opening);
    let mut order: Vec<u8> = bits(pos.boneyard).collect();
    shuffle(boneyard_rng, &mut order);
    let mut next_draw = 0;
    let mut moves = Vec::new();
    let mut nodes = 0;
    let mut decisions = Vec::new();
    let mut beliefs = Vec::new();
    let models = models(agents);
    let mut list = ActionList::default();
    let mut seen = Seen::default();
    while pos.end.is_none() {
        let seat = pos.mover;
        if !pos.can_play(rules, seat) {
            seen.stuck(rules, &pos);
            // Draw while the boneyard holds more than the tiles kept back, else pass.
            if pos.boneyard.count_ones() > rules.config().keep as u32 {
                let tile = order[next_draw];
                next_draw += 1;
                pos.draw(tile);
                seen.drew(seat);
                moves.push(FullMove::Draw { seat, tile });
            } else {
                let scored = pos.pass(rules);
                moves.push(FullMove::Pass { seat, scored });
            }
            continue;
        }
        pos.actions(rules, &mut list);
        let i = match agents[seat as usize] {
            FullAgent::Fixed(FullTarget::Searcher) => {
                unreachable!("a searcher target plays as FullAgent::target makes it")
            }
            FullAgent::Fixed(t) => full_choice(rules, t, &pos, list.as_slice(), &mut seat_rngs[seat as usize]),
            FullAgent::Search(_) | FullAgent::External if list.len() == 1 => 0,
            FullAgent::External => {
                let view_moves = external_history(rules, &moves);
                let legal: Vec<u32> = list.as_slice().iter().map(|&a| fives_play_id(a)).collect();
                let view = SeatView {
                    seat,
                    hand_no: ctx.hand_no,
                    tiles: pos.hands[seat as usize],
                    history: &view_moves,
                    sizes: std::array::from_fn(|s| pos.hands[s].count_ones() as u8),
                    boneyard: pos.boneyard.count_ones() as u8,
                    points: pos.scores,
                    totals: ctx.totals,
                    legal: &legal,
                };
                external_choice(ctx.external.as_deref_mut(), &view)?
            }
            FullAgent::Search(settings) => {
                let (d, score) = search_decision(ctx, &pos, &seen, settings, models, &mut seat_rngs[seat as usize]);
                // Only the agent side's decisions are recorded (a searching
                // target's are its own business, as a fixed target's).
                if rules.side(seat) == ctx.opts.agent_side {
                    nodes += d.nodes;
                    decisions.push((moves.len(), d));
                    beliefs.extend(score);
                }
                d.index
            }
        };
        let a = list.as_slice()[i];
        seen.played(&pos, a);
        let scored = pos.play(rules, a);
        moves.push(FullMove::Play {
            seat,
            tile: a.tile,
            loc: a.loc,
            scored,
        });
    }
    Ok(HandRecord {
        hands,
        opening,
        end: pos.end.expect("the loop ends with the hand"),
        scores: pos.scores,
        moves,
        nodes,
        decisions,
        beliefs,
    })
}

/// A hand's events as All-Fives action ids (a draw's tile not shown).
fn external_history(rules: &FullRules, moves: &[FullMove]) -> Vec<u32> {
    moves
        .iter()
        .map(|m| match *m {
            FullMove::Play { tile, loc, .. } => fives_play_id(engine::Action { tile, loc }),
            FullMove::Draw { .. } => fives_draw_id(rules),
            FullMove::Pass { .. } => fives_pass_id(rules),
        })
        .collect()
}

/// A match played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRecord {
    /// The hands in order.
    pub hands: Vec<HandRecord>,
    /// Each side's total (index: side).
    pub totals: [u32; MAX_SEATS],
    /// The side that reached the target score first.
    pub winner: u8,
}

/// Most hands a match may take: a match still short of `to` after this many
/// hands ends there (it cannot happen at `to` <= 1000 in practice; it bounds
/// the loop should every hand score nothing).
pub const MAX_HANDS: u64 = 10_000;

/// The hands of one grid point: the first dealt as deal index `deal`, later
/// ones from the match's deal stream, until a side's total reaches `to`
/// (checked at the end of each hand; with `to` = 0, after one hand). The
/// winner is the side with the highest total, ties to the lower side index.
/// Returns `None` when `deal` is not a deal index of the rules.
pub fn play_match(
    rules: &FullRules,
    seed: u64,
    deal: u64,
    repeat: u64,
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
) -> Option<MatchRecord> {
    play_match_with(rules, seed, deal, repeat, agents, to, &MatchOptions::default())
}

/// [`play_match`] with options for the searching seats.
pub fn play_match_with(
    rules: &FullRules,
    seed: u64,
    deal: u64,
    repeat: u64,
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
    opts: &MatchOptions,
) -> Option<MatchRecord> {
    let keys = MatchKeys { seed, deal, repeat };
    let m = play_match_inner(rules, keys, agents, to, opts, None)?;
    Some(m.expect("no seat is decided outside muggins"))
}

/// [`play_match_with`] with seats decided outside muggins
/// ([`FullAgent::External`]) by `external`: the match, or the forfeit that
/// ended it (`None` when `keys.deal` is not a deal of the rules).
pub fn play_match_external(
    rules: &FullRules,
    keys: MatchKeys,
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
    opts: &MatchOptions,
    external: &mut dyn ExternalSeats,
) -> Option<Result<MatchRecord, Forfeit>> {
    play_match_inner(rules, keys, agents, to, opts, Some(external))
}

fn play_match_inner(
    rules: &FullRules,
    keys: MatchKeys,
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
    opts: &MatchOptions,
    external: Option<&mut dyn ExternalSeats>,
) -> Option<Result<MatchRecord, Forfeit>> {
    let first = deal_from_index(rules, keys.deal)?;
    Some(Scratch::with_thread_scratch(agents, opts.table_mb, |scratch| {
        let mut ctx = MatchContext {
            external,
            ..MatchContext::new(rules, opts, scratch)
        };
        play_hands(&mut ctx, keys, first, agents, to)
    }))
}

/// The hands of a match from its first deal (see [`play_match`]).
fn play_hands(
    ctx: &mut MatchContext,
    keys: MatchKeys,
    first: [TileSet; MAX_SEATS],
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
) -> Result<MatchRecord, Forfeit> {
    let rules = ctx.rules;
    let mut hands = Vec::new();
    let mut totals = [0u32; MAX_SEATS];
    let mut previous = None;
    for h in 0..MAX_HANDS {
        let dealt = if h == 0 {
            first
        } else {
            super::deal::random_deal(rules, &mut keys.stream(h, 0))
        };
        let opening = Opening::of(rules, &dealt, previous);
        let mut seat_rngs = std::array::from_fn(|s| keys.stream(h, 2 + s as u64));
        ctx.totals = totals;
        ctx.hand_no = h as u32;
        let record = play_hand_with(ctx, dealt, opening, agents, &mut keys.stream(h, 1), &mut seat_rngs)?;
        for (t, s) in totals.iter_mut().zip(record.scores) {
            *t += s;
        }
        previous = Some(record.end);
        hands.push(record);
        if totals[..rules.sides() as usize].iter().any(|&t| t >= to) {
            break;
        }
    }
    let best = *totals[..rules.sides() as usize].iter().max().expect("two sides");
    let winner = totals.iter().position(|&t| t == best).expect("found above") as u8;
    Ok(MatchRecord { hands, totals, winner })
}

/// One All-Fives hand from a uniformly random deal, every seat playing
/// uniformly random legal plays and drawing uniformly from the boneyard (the
/// playout benchmark's hand; the first hand's lead rule applies).
pub fn random_fives_hand(rules: &FullRules, rng: &mut impl rand_core::RngCore) -> FivesPosition {
    use super::deal::random_deal;
    use engine::seed::below_u32;
    let hands = random_deal(rules, rng);
    let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    let mut list = ActionList::default();
    while pos.end.is_none() {
        if !pos.can_play(rules, pos.mover) {
            pos.draw_or_pass(rules, rng);
            continue;
        }
        pos.actions(rules, &mut list);
        let i = below_u32(rng, list.len() as u32) as usize;
        pos.play(rules, list.as_slice()[i]);
    }
    pos
}

/// Plays `games` random All-Fives hands from one ChaCha8 stream seeded with
/// `seed`; returns the sum of side 0's points minus side 1's, a checksum.
pub fn fives_playouts(rules: &FullRules, seed: u64, games: u64) -> i64 {
    super::deal::playout_sum(seed, games, |rng| {
        let end = random_fives_hand(rules, rng);
        end.scores[0] as i64 - end.scores[1] as i64
    })
}
