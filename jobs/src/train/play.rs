//! Playing for training: a generation's self-play games (the network at a
//! temperature on every seat, or on one side against a fixed strategy of
//! the population), written as [`TrainRow`]s; and the greedy matches of
//! the gate and the evaluation, in pairs of games (one deal, both
//! seatings). Every game is a pure function of the spec, the generation,
//! its index and the networks' bytes: its streams are keyed by them
//! (`engine::seed::TRAIN_*`), whatever thread plays it.

use full::openspiel::action_from_id;
use full::spiel::{CHANCE, Encoding, SpielState};
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::RngCore;

use super::fixed::{Fixed, TrainSearch};
use super::rows::TrainRow;
use super::spec::TrainSpec;

/// Who plays a side.
#[derive(Clone, Copy, Debug)]
pub enum Player<'a> {
    /// A network: the highest logit (`temperature` 0) or a draw from the
    /// softmax of the logits over `temperature`.
    Net {
        /// The network.
        model: &'a net::Model,
        /// Its observation encoding.
        encoding: Encoding,
        /// 0 for the highest logit.
        temperature: f64,
        /// A share of its decisions searched instead, and by what.
        search: Option<(f64, TrainSearch)>,
    },
    /// A fixed strategy.
    Fixed(Fixed),
}

/// A player's buffers, kept from one decision to the next.
#[derive(Default)]
pub struct Buffers {
    obs: Vec<f32>,
    logits: Vec<f32>,
    scratch: net::Scratch,
    probs: Vec<f32>,
    /// ISMCTS's tree, its room kept between decisions.
    tree: full::IsmctsTree,
    /// The guided search's tree, likewise.
    guided: full::spiel::GuidedTree,
}

impl Player<'_> {
    /// The action of `seat` (to act, with `legal` ascending, two or more)
    /// in `state`; a network's decision is recorded into `record` when one
    /// is given (the observation, the distribution drawn from, the value).
    fn decide(
        &self,
        state: &SpielState,
        seat: u8,
        legal: &[u32],
        rng: &mut ChaCha20Rng,
        b: &mut Buffers,
        record: Option<&mut Vec<TrainRow>>,
    ) -> u32 {
        match *self {
            Player::Fixed(Fixed::Random) => legal[engine::seed::below_u32(rng, legal.len() as u32) as usize],
            Player::Fixed(Fixed::Ismcts { budget, worlds }) => {
                ismcts(state, seat, legal, (budget, worlds), rng, &mut b.tree, None)
            }
            Player::Fixed(Fixed::Heaviest) => legal[heaviest(state, legal)],
            Player::Fixed(Fixed::Past) => unreachable!("self-play plays a past network as Player::Net"),
            Player::Fixed(Fixed::Mstar { budget, worlds }) => mstar(state, seat, (budget, worlds), rng),
            Player::Net {
                model,
                encoding,
                temperature,
                search,
            } => {
                state.encode(seat, encoding, &mut b.obs);
                b.logits.resize(model.meta.actions, 0.0);
                let mut value = [0.0f32];
                model.mlp.forward(&b.obs, 1, &mut b.logits, &mut value, &mut b.scratch);
                let z = |a: u32| b.logits[a as usize] as f64;
                let best = legal
                    .iter()
                    .copied()
                    .fold(legal[0], |m, a| if z(a) > z(m) { a } else { m });
                // Drawn only when some decisions are searched, so a run
                // without search draws what it always drew.
                let searched = search.filter(|s| engine::seed::unit(rng) < s.0);
                let action = if let Some((_, TrainSearch::Ismcts { budget, worlds })) = searched {
                    ismcts(
                        state,
                        seat,
                        legal,
                        (budget, worlds),
                        rng,
                        &mut b.tree,
                        Some(&mut b.probs),
                    )
                } else if let Some((_, TrainSearch::Mstar { budget, worlds })) = searched {
                    // The expert's play is the row's target.
                    let a = mstar(state, seat, (budget, worlds), rng);
                    b.probs.clear();
                    b.probs.extend(legal.iter().map(|&l| f32::from(u8::from(l == a))));
                    a
                } else if let Some((_, TrainSearch::Guided { simulations })) = searched {
                    guided(state, seat, legal, (model, encoding, simulations), rng, b)
                } else if temperature == 0.0 {
                    best
                } else {
                    let top = z(best);
                    b.probs.clear();
                    b.probs
                        .extend(legal.iter().map(|&a| ((z(a) - top) / temperature).exp() as f32));
                    let total: f64 = b.probs.iter().map(|&p| p as f64).sum();
                    b.probs.iter_mut().for_each(|p| *p = (*p as f64 / total) as f32);
                    let mut u = engine::seed::unit(rng);
                    let mut pick = legal[legal.len() - 1];
                    for (&a, &p) in legal.iter().zip(&b.probs) {
                        if u < p as f64 {
                            pick = a;
                            break;
                        }
                        u -= p as f64;
                    }
                    pick
                };
                if let Some(rows) = record {
                    rows.push(TrainRow {
                        game_index: 0,
                        turn: 0,
                        seat,
                        observation: b.obs.clone(),
                        legal: legal.to_vec(),
                        policy: if temperature == 0.0 && searched.is_none() {
                            legal.iter().map(|&a| f32::from(u8::from(a == best))).collect()
                        } else {
                            b.probs.clone()
                        },
                        action,
                        value: value[0],
                        outcome: 0.0,
                        searched: searched.is_some(),
                        // The belief head's target, for a network that has one.
                        holders: {
                            let mut h = Vec::new();
                            if model.mlp.belief().is_some() {
                                state.holders(seat, &mut h);
                            }
                            h
                        },
                        // And the prior it corrects, for a head that has one
                        // (a model file has a prior only with a head).
                        prior: {
                            let mut p = Vec::new();
                            if model.meta.belief_prior.is_some() {
                                state.belief_prior(seat, &mut p);
                            }
                            p
                        },
                    });
                }
                action
            }
        }
    }
}

/// The index in `legal` (two or more plays) of the heaviest tile played,
/// in either game's action ids.
fn heaviest(state: &SpielState, legal: &[u32]) -> usize {
    let rules = state.rules();
    let tile = |id: u32| match state {
        SpielState::Open(_) => action_from_id(rules, id as u64).expect("a legal id").1.tile,
        SpielState::Fives(_) => full::fives_action_of(id).tile,
    };
    full::heaviest(rules, legal.iter().map(|&id| tile(id)))
}

/// muggins' ISMCTS's play for `seat` in a block or team `state`, from the
/// seat's information only (its tiles, the plays, the voids they showed):
/// the game loop's search (`full::decide_open`), `budget` nodes a world on
/// `worlds` worlds. With `visits`, the root's visits are written there as
/// a distribution over `legal` (the search's policy).
fn ismcts(
    state: &SpielState,
    seat: u8,
    legal: &[u32],
    (budget, worlds): (u32, u16),
    rng: &mut ChaCha20Rng,
    tree: &mut full::IsmctsTree,
    visits: Option<&mut Vec<f32>>,
) -> u32 {
    let SpielState::Open(core) = state else {
        unreachable!("a spec naming ISMCTS for all-fives is refused (TrainSpec::check_all_fives)");
    };
    let rules = &core.rules;
    let pos = core.pos.expect("a player node has a position");
    let obs = full::Observation::of_hands(rules, &pos.hands, pos.boneyard, seat, &core.void, &[0; full::MAX_SEATS]);
    let settings = full::SearchSettings {
        engine: engine::PlayerEngine::Ismcts,
        depth: full::DEEPEST,
        budget: budget as u64,
        worlds,
        learned: false,
        belief: engine::Belief::Constraints,
        shaping: full::Shaping::None,
        predictor: full::predict::PredictModel::Logit,
        adaptive: None,
    };
    let mut list = full::FullActions::default();
    pos.actions(rules, &mut list);
    let models = [full::FullTarget::Searcher; full::MAX_SEATS];
    let index = full::decide_open(rules, &pos, &obs, settings, models, tree, rng).index;
    let id = |a: full::FullAction| full::openspiel::action_id(rules, seat, a);
    if let Some(out) = visits {
        let mut counts = Vec::new();
        full::open_root_visits(tree, rules, &pos, &mut counts);
        let total = counts.iter().map(|&c| c as f64).sum::<f64>().max(1.0);
        out.clear();
        out.resize(legal.len(), 0.0);
        for (&a, &c) in list.as_slice().iter().zip(&counts) {
            if let Ok(k) = legal.binary_search(&id(a)) {
                out[k] = (c as f64 / total) as f32;
            }
        }
    }
    id(list.as_slice()[index])
}

/// M*'s play for `seat` in an All-Fives `state`, from the seat's
/// information only: the game loop's search (`full::search_decision`, which
/// reads of the true position only what the seat may know, its worlds
/// drawn from its belief given what was seen), the shipped learned leaves,
/// `worlds` worlds from the `model` belief, `budget` nodes each, the
/// opponents modelled as searchers.
fn mstar(state: &SpielState, seat: u8, (budget, worlds): (u32, u16), rng: &mut ChaCha20Rng) -> u32 {
    let SpielState::Fives(world) = state else {
        unreachable!("a spec naming M* for block or team is refused (TrainSpec::check_game_players)");
    };
    let rules = world.rules();
    let pos = world.pos.expect("a player node has a position");
    let mut list = engine::ActionList::default();
    pos.actions(rules, &mut list);
    let settings = full::SearchSettings {
        engine: engine::PlayerEngine::MStar,
        depth: full::DEEPEST,
        budget: budget as u64,
        worlds,
        learned: true,
        belief: engine::Belief::Model,
        shaping: full::Shaping::None,
        predictor: full::predict::PredictModel::Logit,
        adaptive: None,
    };
    let opts = full::MatchOptions {
        eval: Some(crate::evals::shipped_eval()),
        agent_side: rules.side(seat),
        ..full::MatchOptions::default()
    };
    let models = [full::FullTarget::Searcher; full::MAX_SEATS];
    let agent = full::FullAgent::Search(settings);
    let index = full::Scratch::with_thread_scratch(&[agent], opts.table_mb, |scratch| {
        let mut ctx = full::MatchContext::new(rules, &opts, scratch);
        full::search_decision(&mut ctx, &pos, &world.seen, settings, models, rng)
            .0
            .index
    });
    full::spiel::play_id(list.as_slice()[index])
}

/// The play of `seat` by `simulations` of the search `model` guides (from
/// the seat's view, with AlphaZero's noise at the root); the root's visits are written into `b.probs` as a
/// distribution over `legal`.
fn guided(
    state: &SpielState,
    seat: u8,
    legal: &[u32],
    (model, encoding, simulations): (&net::Model, Encoding, u32),
    rng: &mut ChaCha20Rng,
    b: &mut Buffers,
) -> u32 {
    // Self-play explores: Dirichlet noise at the root, AlphaZero's.
    let how = full::spiel::Guided {
        belief: full::spiel::GuidedBelief::Constraints,
        simulations,
        noise: Some(full::spiel::ALPHAZERO_NOISE),
        adaptive: false,
    };
    let action = full::spiel::guided_decide(&mut b.guided, model, encoding, state, seat, how, rng)
        .expect("the true state agrees with what the seat saw");
    let mut counts = Vec::new();
    b.guided.root_visits(legal, &mut counts);
    let total = counts.iter().map(|&c| c as f64).sum::<f64>().max(1.0);
    b.probs.clear();
    b.probs.extend(counts.iter().map(|&c| (c as f64 / total) as f32));
    action
}

/// A dealt game of the spec (its first deal drawn from `rng`).
fn dealt(spec: &TrainSpec, rng: &mut ChaCha20Rng) -> SpielState {
    let mut state = spec.state();
    while state.current_player() == CHANCE {
        state.apply_chance(rng).expect("a chance node deals");
    }
    state
}

/// Plays `state` to its end, side `s`'s seats by `players[s]`; returns
/// every seat's return. Rows of a network's decisions go to `record` for
/// the sides it names.
fn play_out(
    mut state: SpielState,
    players: [&Player; 2],
    rng: &mut ChaCha20Rng,
    b: &mut Buffers,
    mut record: Option<(&mut Vec<TrainRow>, [bool; 2])>,
) -> Vec<f64> {
    let rules = state.rules().clone();
    let mut ids = [0u32; 128];
    let mut turn = 0u32;
    loop {
        let p = state.current_player();
        if p < 0 {
            if p == CHANCE {
                state.apply_chance(rng).expect("a chance node deals");
                continue;
            }
            break;
        }
        let seat = p as u8;
        let n = state.legal_ids(&mut ids);
        let side = rules.side(seat) as usize;
        let action = if n == 1 {
            ids[0]
        } else {
            match record.as_mut() {
                Some((rows, sides)) if sides[side] => {
                    let a = players[side].decide(&state, seat, &ids[..n], rng, b, Some(&mut **rows));
                    if let Some(r) = rows.last_mut() {
                        r.turn = turn;
                    }
                    a
                }
                _ => players[side].decide(&state, seat, &ids[..n], rng, b, None),
            }
        };
        state.apply(action).expect("a legal action");
        turn += 1;
    }
    state.returns()
}

/// The self-play games `first..first + games` of generation `generation`,
/// played by `model` at the spec's temperature: their rows in game order.
/// `past` is what the population's `past` draws from (the run's earlier
/// best networks; `model` itself when empty).
pub fn self_play(
    spec: &TrainSpec,
    generation: u32,
    model: &net::Model,
    past: &[net::Model],
    first: u64,
    games: u64,
) -> Vec<TrainRow> {
    let t = &spec.train;
    let net = Player::Net {
        model,
        encoding: spec.encoding(),
        temperature: t.temperature,
        search: spec.search(),
    };
    let population = spec.population();
    let mut b = Buffers::default();
    let mut out = Vec::new();
    for g in first..first + games {
        let key =
            |stream| engine::seed::keyed_rng(spec.seed, generation as u64, g, engine::seed::TRAIN_SELF_PLAY, stream);
        let (mut deal, mut draws, mut pick) = (key(0), key(1), key(2));
        let state = dealt(spec, &mut deal);
        // With the population's share, one side (drawn) is a fixed strategy.
        let fixed = (!population.is_empty() && engine::seed::unit(&mut pick) < t.population_share).then(|| {
            let side = (pick.next_u32() & 1) as usize;
            let who = population[engine::seed::below_u32(&mut pick, population.len() as u32) as usize];
            if who != Fixed::Past {
                return (side, Player::Fixed(who));
            }
            let k = engine::seed::below_u32(&mut pick, past.len().max(1) as u32) as usize;
            let player = Player::Net {
                model: past.get(k).unwrap_or(model),
                encoding: spec.encoding(),
                temperature: 0.0,
                search: None,
            };
            (side, player)
        });
        let mut players = [&net, &net];
        let mut sides = [true, true];
        if let Some((side, who)) = &fixed {
            players[*side] = who;
            sides[*side] = false;
        }
        let start = out.len();
        let returns = play_out(state, players, &mut draws, &mut b, Some((&mut out, sides)));
        for r in &mut out[start..] {
            r.game_index = g;
            r.outcome = returns[r.seat as usize] as f32;
        }
    }
    out
}

/// One pair of greedy games between `a` and `b` on deal `deal` (of the
/// stream `tag`, generation `generation`): `a`'s score differences (its
/// side's return), `a` on side 0 first, then on side 1.
pub fn pair(spec: &TrainSpec, generation: u32, tag: &[u8; 8], deal: u64, a: &Player, b: &Player) -> [i32; 2] {
    let rules = spec.rules();
    let key = |stream| engine::seed::keyed_rng(spec.seed, generation as u64, deal, tag, stream);
    let state = dealt(spec, &mut key(0));
    let mut buffers = Buffers::default();
    let first_seat_of = |side: u8| (0..rules.seats()).find(|&s| rules.side(s) == side).expect("a seat");
    let mut diff = |players: [&Player; 2], a_side: u8, stream: u64| {
        let returns = play_out(state.clone(), players, &mut key(stream), &mut buffers, None);
        returns[first_seat_of(a_side) as usize].round() as i32
    };
    [diff([a, b], 0, 1), diff([b, a], 1, 2)]
}
