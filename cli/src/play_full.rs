//! `muggins play --preset ...`: one hand (or a match) of the full game, seat
//! 0 a fixed strategy or a search, the others the target, readable (each seat's hand, the board's
//! count, the sides' scores) or `--json` (with the OpenSpiel history for
//! block and team).

use anyhow::{Result, bail};
use engine::{TargetKind, TileSet};
use full::{
    self, FivesPosition, FullAction, FullAgent, FullConfig, FullMove, FullRules, FullTarget, HandEnd, HandRecord,
    MAX_SEATS, MatchRecord, Preset, openspiel,
};
use serde_json::{Value, json};

/// What `--preset` play was asked for.
pub struct FullPlay {
    /// The rules.
    pub rules: FullRules,
    /// The first hand's deal index.
    pub deal: u64,
    /// The experiment seed.
    pub seed: u64,
    /// The repeat number.
    pub repeat: u64,
    /// Seat 0's (and its partner's) player.
    pub agent: FullAgent,
    /// The network seat 0's side plays (`--agent net`).
    pub net: Option<jobs::nets::NetAgent>,
    /// The other seats' strategy.
    pub target: FullTarget,
    /// Play a match to this score instead of one hand (all-fives).
    pub match_to: Option<u32>,
    /// Print JSON.
    pub json: bool,
    /// The transposition table's megabytes.
    pub table_mb: u32,
    /// Threads a searched decision's worlds are shared among.
    pub decision_threads: usize,
    /// Whether searches use the shipped learned evaluation.
    pub learned: bool,
    /// The `searcher` target's depth.
    pub target_depth: u8,
}

/// The rules of `preset` with the flags' overrides.
pub fn rules(preset: Preset, seats: Option<u8>, teams: Option<bool>) -> Result<FullRules> {
    let mut config = match (preset, seats) {
        (Preset::AllFives, Some(n)) => FullConfig::all_fives(n),
        _ => FullConfig::preset(preset),
    };
    if let Some(n) = seats {
        config.seats = n;
    }
    if let Some(t) = teams {
        config.teams = t;
    }
    FullRules::new(config).map_err(|e| {
        anyhow::anyhow!(
            "--preset {preset}: {}",
            e.to_string().replacen("invalid rules.", "--", 1)
        )
    })
}

/// Runs the play.
pub fn run(p: FullPlay) -> Result<()> {
    let rules = &p.rules;
    let count = full::deal_count(rules);
    if count.is_some_and(|c| p.deal >= c) {
        bail!(
            "--state {}: not a deal index of {}: it has {} deals (0-{})",
            p.deal,
            describe(rules),
            count.unwrap_or(0),
            count.unwrap_or(1) - 1
        );
    }
    let agents: [FullAgent; MAX_SEATS] = std::array::from_fn(|s| {
        if rules.side(s as u8) == rules.side(0) {
            p.agent
        } else {
            FullAgent::target(p.target, p.target_depth)
        }
    });
    match rules.kind() {
        Preset::AllFives => {
            let to = p.match_to.unwrap_or(0);
            // A shaped search's predictors: the shipped ones (two seats),
            // else fitted here as a spec's fit stage would at these seats.
            let shaped = matches!(p.agent, FullAgent::Search(s) if !s.shaping.is_plain());
            let fitted = match (shaped, rules.seats()) {
                (true, seats) if seats != 2 => {
                    let training = full::predict::PredictTraining {
                        seats,
                        ..full::predict::default_predict_training()
                    };
                    eprintln!(
                        "fitting the predictors for {seats} seats ({} hands a strategy)...",
                        training.hands
                    );
                    Some(jobs::predictors::fit(&training)?.0)
                }
                _ => None,
            };
            let predictors = fitted
                .as_ref()
                .or_else(|| shaped.then(jobs::predictors::shipped_predictors));
            let opts = full::MatchOptions {
                eval: p.learned.then(jobs::evals::shipped_eval),
                table_mb: p.table_mb,
                target_depth: p.target_depth,
                predictors,
                agent_side: 0,
                decision_threads: p.decision_threads,
            };
            let m = match &p.net {
                None => full::play_match_with(rules, p.seed, p.deal, p.repeat, &agents, to, &opts),
                // Seat 0's side is the network's: its seats decide from
                // their views, keyed by the game as an experiment's are.
                Some(net) => {
                    let key = (p.seed, p.deal, p.repeat);
                    let mut seats = jobs::nets::GameSeats::new(rules, key, [Some(net), None], None);
                    let (seed, deal, repeat) = key;
                    let keys = full::MatchKeys { seed, deal, repeat };
                    full::play_match_external(rules, keys, &agents, to, &opts, &mut seats)
                        .map(|r| {
                            r.map_err(|f| {
                                anyhow::anyhow!("the network at seat {} could not play: {}", f.seat, f.reason)
                            })
                        })
                        .transpose()?
                }
            }
            .expect("the deal index was checked above");
            if p.json {
                println!("{}", serde_json::to_string_pretty(&fives_json(&p, &agents, &m))?);
            } else {
                print_fives(&p, &agents, &m);
            }
        }
        Preset::Block | Preset::Team => {
            if p.match_to.is_some() {
                bail!(
                    "--match: {} is one hand, as OpenSpiel plays it; matches are for --preset all-fives",
                    rules.kind()
                );
            }
            for a in [p.agent, FullAgent::Fixed(p.target)] {
                if let FullAgent::Fixed(
                    t @ (FullTarget::Thesis(TargetKind::Scorer | TargetKind::Defender) | FullTarget::Searcher),
                ) = a
                {
                    bail!(
                        "--agent/--target {}: {} has no count to score or defend; its strategies are random and \
                         heaviest (and the searches mstar and expectimax for --agent)",
                        t.name(),
                        rules.kind()
                    );
                }
            }
            let hand = play_open_hand(rules, &p, &agents)?;
            if p.json {
                println!("{}", serde_json::to_string_pretty(&hand)?);
            } else {
                print_open_hand(rules, &hand);
            }
        }
    }
    Ok(())
}

/// A seat's player as the game shows it: the network's name on its seats.
fn agent_name(p: &FullPlay, a: &FullAgent) -> String {
    match (a, &p.net) {
        (FullAgent::External, Some(n)) => n.policy.name(),
        _ => a.name(),
    }
}

fn describe(rules: &FullRules) -> String {
    format!("{} with {}", rules.kind(), rules.seating())
}

fn names(rules: &FullRules, set: TileSet) -> Vec<String> {
    full::tiles_of(set).map(|t| rules.tile_name(t)).collect()
}

fn end_text(end: HandEnd) -> String {
    match end {
        HandEnd::Domino(s) => format!("domino by seat {s}"),
        HandEnd::Blocked => "blocked".into(),
    }
}

fn fives_json(p: &FullPlay, agents: &[FullAgent; MAX_SEATS], m: &MatchRecord) -> Value {
    let rules = &p.rules;
    let sides = rules.sides() as usize;
    let m_nodes: u64 = m.hands.iter().map(|h| h.nodes).sum();
    let hand = |h: &HandRecord| {
        let moves: Vec<Value> = h
            .moves
            .iter()
            .map(|mv| match *mv {
                FullMove::Play {
                    seat,
                    tile,
                    loc,
                    scored,
                } => json!({
                    "seat": seat, "play": rules.tile_name(tile), "loc": loc, "count_points": scored.count_points,
                    "end_points": scored.end_points, "end_side": scored.end_side,
                }),
                FullMove::Draw { seat, tile } => json!({ "seat": seat, "draw": rules.tile_name(tile) }),
                FullMove::Pass { seat, scored } => json!({
                    "seat": seat, "pass": true, "end_points": scored.end_points, "end_side": scored.end_side,
                }),
            })
            .collect();
        json!({
            "hands": (0..rules.seats() as usize).map(|s| names(rules, h.hands[s])).collect::<Vec<_>>(),
            "leader": h.opening.leader,
            "forced_lead": h.opening.forced.map(|t| rules.tile_name(t)),
            "moves": moves,
            "end": end_text(h.end),
            "scores": h.scores[..sides].to_vec(),
            "nodes": h.nodes,
        })
    };
    json!({
        "preset": rules.kind().name(),
        "seats": rules.seats(),
        "hand": rules.hand(),
        "teams": rules.teams(),
        "deal": p.deal,
        "seed": p.seed,
        "repeat": p.repeat,
        "agents": agents[..rules.seats() as usize].iter().map(|a| agent_name(p, a)).collect::<Vec<_>>(),
        "nodes": m_nodes,
        "to": p.match_to,
        "hands": m.hands.iter().map(hand).collect::<Vec<_>>(),
        "totals": m.totals[..sides].to_vec(),
        "winner_side": m.winner,
    })
}

fn side_name(rules: &FullRules, side: usize) -> String {
    if rules.teams() {
        format!("seats {}+{}", side, side + 2)
    } else {
        format!("seat {side}")
    }
}

fn print_fives(p: &FullPlay, agents: &[FullAgent; MAX_SEATS], m: &MatchRecord) {
    let rules = &p.rules;
    let sides = rules.sides() as usize;
    println!(
        "{}, deal {} repeat {} seed {}{}",
        describe(rules),
        p.deal,
        p.repeat,
        p.seed,
        p.match_to.map_or(String::new(), |to| format!(", a match to {to}"))
    );
    for s in 0..rules.seats() as usize {
        println!(
            "  seat {s}: {} (side {})",
            agent_name(p, &agents[s]),
            rules.side(s as u8)
        );
    }
    let mut totals = [0u32; MAX_SEATS];
    for (i, h) in m.hands.iter().enumerate() {
        println!();
        match h.opening.forced {
            Some(t) => println!(
                "hand {}: seat {} must lead {}",
                i + 1,
                h.opening.leader,
                rules.tile_name(t)
            ),
            None => println!("hand {}: seat {} leads", i + 1, h.opening.leader),
        }
        for s in 0..rules.seats() as usize {
            println!("  seat {s}: {}", names(rules, h.hands[s]).join(" "));
        }
        let mut pos = FivesPosition::deal(rules, h.hands, h.opening);
        let score_heads: Vec<String> = (0..sides).map(|s| format!("{:>8}", format!("side {s}"))).collect();
        println!(
            "  {:<6} {:<22} {:<12} {:>5} {}",
            "seat",
            "move",
            "open ends",
            "count",
            score_heads.join("")
        );
        for mv in &h.moves {
            let (seat, text) = match *mv {
                FullMove::Play {
                    seat,
                    tile,
                    loc,
                    scored,
                } => {
                    pos.play(rules, engine::Action { tile, loc });
                    let mut t = format!("plays {} {loc:?}", rules.tile_name(tile));
                    if scored.count_points > 0 {
                        t += &format!(" +{}", scored.count_points);
                    }
                    if scored.end_points > 0 {
                        t += &format!(" domino +{}", scored.end_points);
                    }
                    (seat, t)
                }
                FullMove::Draw { seat, tile } => {
                    pos.draw(tile);
                    (seat, format!("draws {}", rules.tile_name(tile)))
                }
                FullMove::Pass { seat, scored } => {
                    pos.pass(rules);
                    let mut t = "passes".to_string();
                    if let Some(side) = scored.end_side {
                        t += &format!(" (blocked: side {side} +{})", scored.end_points);
                    }
                    (seat, t)
                }
            };
            let scores: Vec<String> = pos.scores[..sides].iter().map(|x| format!("{x:>8}")).collect();
            let ends: Vec<String> = engine::Loc::ALL
                .iter()
                .filter_map(|&l| pos.board.exposed(l).map(|p| format!("{}{p}", l.letter())))
                .collect();
            println!(
                "  {seat:<6} {text:<22} {:<12} {:>5} {}",
                ends.join(" "),
                pos.board.count(),
                scores.join("")
            );
        }
        for (t, s) in totals.iter_mut().zip(h.scores) {
            *t += s;
        }
        let line: Vec<String> = (0..sides)
            .map(|s| format!("{} {}", side_name(rules, s), totals[s]))
            .collect();
        println!("  {}; totals: {}", end_text(h.end), line.join(", "));
    }
    println!();
    let nodes: u64 = m.hands.iter().map(|h| h.nodes).sum();
    if nodes > 0 {
        println!("searched positions: {nodes}");
    }
    println!(
        "{} {} with {} ({})",
        side_name(rules, m.winner as usize),
        if rules.teams() { "win" } else { "wins" },
        m.totals[m.winner as usize],
        crate::text::plural(m.hands.len() as u64, "hand")
    );
}

/// A block or team hand: the deal, the plays and the returns, with the
/// OpenSpiel history (chance actions, then action ids).
fn play_open_hand(rules: &FullRules, p: &FullPlay, agents: &[FullAgent; MAX_SEATS]) -> Result<Value> {
    let hands = full::deal_from_index(rules, p.deal).expect("the deal index was checked above");
    let mut rngs = full::MatchKeys {
        seed: p.seed,
        deal: p.deal,
        repeat: p.repeat,
    }
    .seat_streams();
    let hand = match &p.net {
        None => full::play_open_hand(rules, hands, agents, &mut rngs),
        Some(net) => {
            let mut seats = jobs::nets::GameSeats::new(rules, (p.seed, p.deal, p.repeat), [Some(net), None], None);
            full::play_open_hand_external(rules, hands, agents, &mut rngs, Some(&mut seats))
                .map_err(|f| anyhow::anyhow!("the network at seat {} could not play: {}", f.seat, f.reason))?
        }
    };
    let mut history: Vec<u32> = openspiel::chance_actions(rules, &hands);
    history.extend(hand.plays.iter().map(|&(seat, a)| openspiel::action_id(rules, seat, a)));
    let cover = |a: FullAction| (a.cover != full::OPENING).then_some(a.cover);
    let mut left = hands;
    for &(seat, a) in &hand.plays {
        left[seat as usize] &= !(1u64 << a.tile);
    }
    Ok(json!({
        "preset": rules.kind().name(),
        "seats": rules.seats(),
        "deal": p.deal,
        "seed": p.seed,
        "repeat": p.repeat,
        "agents": agents[..rules.seats() as usize]
            .iter()
            .map(|a| agent_name(p, a))
            .collect::<Vec<_>>(),
        "hands": (0..rules.seats() as usize).map(|s| names(rules, hands[s])).collect::<Vec<_>>(),
        "plays": hand.plays.iter().map(|&(seat, a)| json!({
            "seat": seat, "tile": rules.tile_name(a.tile), "covers": cover(a), "action": openspiel::action_id(rules, seat, a),
        })).collect::<Vec<_>>(),
        "end": end_text(hand.end),
        "pips_left": (0..rules.seats() as usize).map(|s| rules.pip_total(left[s])).collect::<Vec<_>>(),
        "returns": hand.returns[..rules.seats() as usize].to_vec(),
        "nodes": hand.nodes,
        "openspiel_game": if rules.kind() == Preset::Block { "python_block_dominoes" } else { "python_team_dominoes" },
        "openspiel_history": history,
    }))
}

fn print_open_hand(rules: &FullRules, hand: &Value) {
    println!(
        "{}, deal {} repeat {} seed {}",
        describe(rules),
        hand["deal"],
        hand["repeat"],
        hand["seed"]
    );
    for (s, tiles) in hand["hands"].as_array().into_iter().flatten().enumerate() {
        let tiles: Vec<&str> = tiles
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        println!(
            "  seat {s} ({}): {}",
            hand["agents"][s].as_str().unwrap_or_default(),
            tiles.join(" ")
        );
    }
    println!();
    let seats = rules.seats() as u64;
    let mut next: Option<u64> = None;
    for play in hand["plays"].as_array().into_iter().flatten() {
        // A seat with no tile that fits passes (OpenSpiel skips it): the
        // seats between the last mover and this one passed.
        let seat = play["seat"].as_u64().unwrap_or_default();
        if let Some(mut s) = next {
            while s != seat {
                println!("  seat {s}  passes (no tile fits)");
                s = (s + 1) % seats;
            }
        }
        next = Some((seat + 1) % seats);
        let covers = match play["covers"].as_u64() {
            Some(p) => format!("on {p}"),
            None => "opens".into(),
        };
        println!(
            "  seat {}  {} {covers}  (OpenSpiel action {})",
            play["seat"],
            play["tile"].as_str().unwrap_or_default(),
            play["action"]
        );
    }
    println!();
    println!(
        "{}; pips left {}; returns {}",
        hand["end"].as_str().unwrap_or_default(),
        hand["pips_left"],
        hand["returns"]
    );
}
