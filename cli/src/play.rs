//! `muggins play`: one game, move by move.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use engine::{
    Deal, GameConfig, GameRecord, InfoSource, LocalTable, Move, Observability, PlayerEngine, Rules, Searcher, TileSet,
    play_game,
};
use full::{FullAgent, FullEngine, FullTarget, Preset};
use serde_json::json;

use crate::args::{RulesArgs, SearchArgs, parse_depth};
use crate::play_full::{self, FullPlay};

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// Starting state index (with --preset: the deal index).
    #[arg(long)]
    pub state: u64,
    /// Repeat number (picks the boneyard order and the random target's draws).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    /// Experiment seed.
    #[arg(long, default_value_t = 2014)]
    pub seed: u64,
    /// The player's engine: mstar or expectimax.
    #[arg(long, default_value = "mstar", conflicts_with = "preset")]
    pub engine: PlayerEngine,
    /// The opponent: random, scorer or defender (with --preset also
    /// heaviest; every seat not on seat 0's side plays it). Default: scorer
    /// (block and team: random).
    #[arg(long)]
    pub target: Option<FullTarget>,
    /// full or partial (with --preset: partial samples --worlds K worlds
    /// per decision).
    #[arg(long, default_value = "full")]
    pub observability: Observability,
    /// Where M* takes its target model from: oracle, classifier or bayes.
    #[arg(long, default_value = "oracle", conflicts_with = "preset")]
    pub source: jobs::Source,
    /// The trained classifier (a model artifact, e.g.
    /// <results>/<experiment>/classifier/model-<hash>.json); needed by --source classifier.
    #[arg(long, conflicts_with = "preset")]
    pub model: Option<PathBuf>,
    /// Play the full game instead of the thesis rules: block, team or
    /// all-fives (docs/rules.md section 9). Every seat plays a fixed
    /// strategy (--agent for seat 0 and its partner, --target for the rest).
    #[arg(long)]
    pub preset: Option<Preset>,
    /// With --preset all-fives: seats (2-4; 3-4 seats get hands of 5).
    #[arg(long, requires = "preset")]
    pub seats: Option<u8>,
    /// With --preset all-fives and 4 seats: partnerships 0+2 and 1+3 (default true).
    #[arg(long, requires = "preset")]
    pub teams: Option<bool>,
    /// With --preset all-fives: play a match of hands until a side reaches
    /// this score (default: one hand).
    #[arg(long = "match", value_name = "TO", requires = "preset", value_parser = clap::value_parser!(u32).range(1..))]
    pub match_to: Option<u32>,
    /// With --preset: the player of seat 0 and its partner: a strategy
    /// (random, scorer, defender, heaviest) or a search (mstar or
    /// expectimax, with --depth N moves or --budget N nodes; ismcts, with
    /// --budget), or dominai (seed 002's player, with --observability
    /// partial).
    #[arg(long, default_value = "heaviest", requires = "preset")]
    pub agent: AgentArg,
    /// With --preset: nodes per world of a decision (iterative deepening
    /// stops when they are spent; ismcts: nodes per decision per world).
    #[arg(long, requires = "preset")]
    pub budget: Option<u64>,
    /// With --preset all-fives: the transposition table's megabytes.
    #[arg(long, requires = "preset", default_value_t = full::DEFAULT_TABLE_MB)]
    pub table_mb: u32,
    /// With --preset all-fives: leaves valued by the score so far (score) or
    /// the shipped learned evaluation (learned).
    #[arg(long = "eval", value_name = "EVAL", requires = "preset", default_value = "score")]
    pub evaluation: String,
    /// With --preset all-fives and --agent mstar or expectimax: how
    /// opponents' nodes are shaped by a prediction of their play: none,
    /// prune, asymmetric or expect (docs/prediction.md).
    #[arg(long, requires = "preset", default_value = "none")]
    pub shaping: String,
    /// With --shaping: the model predicting the opponents' plays: naive-bayes, dbn or logit.
    #[arg(long, requires = "preset", default_value = "logit")]
    pub predictor: String,
    /// With --shaping prune: plays searched at most per opponent node.
    #[arg(long, requires = "preset", default_value_t = 2)]
    pub top_n: u8,
    /// With --shaping prune: the least probability searched.
    #[arg(long, requires = "preset", default_value_t = 0.0)]
    pub epsilon: f64,
    /// With --shaping asymmetric: how many of the most probable plays are likely.
    #[arg(long, requires = "preset", default_value_t = 1)]
    pub likely: u8,
    /// With --shaping asymmetric: extra plies under a likely play.
    #[arg(long, requires = "preset", default_value_t = 1)]
    pub extend: u8,
    /// With --shaping asymmetric: plies fewer under the others.
    #[arg(long, requires = "preset", default_value_t = 1)]
    pub reduce: u8,
    /// With --target searcher: its Expectimax depth.
    #[arg(long, requires = "preset", default_value_t = full::DEFAULT_TARGET_DEPTH)]
    pub target_depth: u8,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Print the game record as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PlayArgs) -> Result<()> {
    match args.preset {
        Some(preset) => run_full(args, preset),
        None => run_thesis(args),
    }
}

/// `muggins play --preset`: the full game.
fn run_full(args: PlayArgs, preset: Preset) -> Result<()> {
    if args.rules.any_given() {
        bail!(
            "--set/--hand/--boneyard/--lead/--blocked are the thesis rules' flags; with --preset {preset} use --seats and --teams"
        );
    }
    let fives = preset == Preset::AllFives;
    let dominai = matches!(args.agent, AgentArg::Search(FullEngine::Dominai));
    let worlds = match (args.observability, args.search.worlds.as_str()) {
        // DominAI keeps its own matrices: it samples no worlds.
        (Observability::Partial, "all") if dominai => 0,
        (Observability::Full, "all") => 0,
        (Observability::Full, w) => bail!(
            "--worlds {w}: worlds are sampled under --observability partial; leave --worlds out, or add \
             --observability partial"
        ),
        (Observability::Partial, w) => match w.parse::<u16>() {
            Ok(k) if (1..=jobs::MAX_WORLDS as u16).contains(&k) => k,
            _ => bail!(
                "--worlds {w:?}: partial observation of the full game samples worlds: give a number from 1 to {}, \
                 e.g. --worlds 16",
                jobs::MAX_WORLDS
            ),
        },
    };
    let learned = match args.evaluation.as_str() {
        "score" => false,
        "learned"
            if let AgentArg::Search(e) = args.agent
                && !e.values_leaves() =>
        {
            bail!(
                "--eval learned: the learned evaluation values the leaves of mstar and expectimax; --agent {} has none",
                e.name()
            )
        }
        "learned" => true,
        other => bail!("--eval {other:?}: expected score or learned"),
    };
    let budget = args.budget.unwrap_or(0);
    if args.budget.is_some() && !(1..=jobs::MAX_BUDGET).contains(&budget) {
        bail!("--budget {budget}: give 1 to {} nodes", jobs::MAX_BUDGET);
    }
    let (shaping, predictor) = shaping_of(&args, fives)?;
    if !fives && learned {
        bail!("--eval learned: the learned evaluation values All Fives; {preset}'s leaves are valued by their pips");
    }
    let need = full::FivesTable::mb_for_budget(budget);
    if budget > 0 && args.table_mb < need {
        bail!(
            "--table-mb {}: --budget {budget} needs at least {need} MB so that no entry is ever replaced",
            args.table_mb
        );
    }
    let depth = parse_depth(&args.search.depth)?;
    let belief = args.search.belief()?;
    if !fives && belief.all_fives_only() {
        bail!(
            "--belief {}: {preset}'s worlds come from uniform or constraints (model and dominai weigh All Fives' \
             plays)",
            belief.name()
        );
    }
    if belief != engine::Belief::Uniform && worlds == 0 {
        bail!(
            "--belief {}: beliefs choose the worlds of partial observation; add --observability partial \
             --worlds K",
            belief.name()
        );
    }
    let flags = FullSearchFlags {
        worlds,
        budget,
        learned,
        belief,
        shaping,
        predictor,
    };
    let agent = full_agent(&args, depth, flags)?;
    play_full::run(FullPlay {
        rules: play_full::rules(preset, args.seats, args.teams)?,
        deal: args.state,
        seed: args.seed,
        repeat: args.repeat,
        agent,
        target: args.target.unwrap_or(match preset {
            Preset::AllFives => FullTarget::Thesis(engine::TargetKind::Scorer),
            Preset::Block | Preset::Team => FullTarget::Thesis(engine::TargetKind::Random),
        }),
        match_to: args.match_to,
        json: args.json,
        table_mb: args.table_mb,
        learned,
        target_depth: args.target_depth,
    })
}

/// The full game's search flags, checked against each other.
#[derive(Clone, Copy, Debug)]
struct FullSearchFlags {
    worlds: u16,
    budget: u64,
    learned: bool,
    belief: engine::Belief,
    shaping: full::Shaping,
    predictor: full::predict::PredictModel,
}

/// `--shaping` with its parameters, and `--predictor`.
fn shaping_of(args: &PlayArgs, fives: bool) -> Result<(full::Shaping, full::predict::PredictModel)> {
    let params = jobs::ShapingParams {
        top_n: args.top_n,
        epsilon: args.epsilon,
        likely: args.likely,
        extend: args.extend,
        reduce: args.reduce,
    };
    if !(1..=64).contains(&params.top_n) || !(1..=64).contains(&params.likely) {
        bail!(
            "--top-n {} / --likely {}: give 1 to 64 plays",
            params.top_n,
            params.likely
        );
    }
    if params.extend > 8 || params.reduce > 8 {
        bail!(
            "--extend {} / --reduce {}: give 0 to 8 plies",
            params.extend,
            params.reduce
        );
    }
    if !(0.0..1.0).contains(&params.epsilon) {
        bail!(
            "--epsilon {}: give a probability from 0 up to (not including) 1",
            params.epsilon
        );
    }
    let shaping = jobs::shaping_of(&args.shaping, &params).map_err(|why| anyhow::anyhow!("--shaping: {why}"))?;
    let predictor: full::predict::PredictModel = args
        .predictor
        .parse()
        .map_err(|why| anyhow::anyhow!("--predictor: {why}"))?;
    if shaping != full::Shaping::None && (!fives || !matches!(args.agent, AgentArg::Search(e) if e.values_leaves())) {
        bail!(
            "--shaping {}: shaping applies to --preset all-fives searched by --agent mstar or expectimax",
            args.shaping
        );
    }
    Ok((shaping, predictor))
}

/// Seat 0's agent from `--agent` and the search flags already checked.
fn full_agent(args: &PlayArgs, depth: engine::DepthLimit, s: FullSearchFlags) -> Result<FullAgent> {
    let FullSearchFlags {
        worlds,
        budget,
        learned,
        belief,
        shaping,
        predictor,
    } = s;
    Ok(match (args.agent, depth) {
        (AgentArg::Fixed(t), _) if depth != engine::DepthLimit::Unlimited || budget > 0 || worlds > 0 || learned => {
            bail!(
                "--depth/--budget/--worlds/--eval learned: --agent {} plays a fixed strategy; they go with --agent \
                 mstar, expectimax or ismcts",
                t.name()
            )
        }
        (AgentArg::Fixed(FullTarget::Searcher), _) => {
            bail!("--agent searcher: the searcher is a target; for seat 0 use --agent expectimax --depth N")
        }
        (AgentArg::Fixed(t), _) => FullAgent::Fixed(t),
        (AgentArg::Search(FullEngine::Dominai), _) if args.observability == Observability::Full => {
            bail!("--agent dominai plays from its own hand and its matrices: add --observability partial")
        }
        (AgentArg::Search(FullEngine::Dominai), _) => FullAgent::Search(full::SearchSettings {
            engine: FullEngine::Dominai,
            depth: full::DEEPEST,
            budget,
            worlds: 0,
            learned: false,
            belief: engine::Belief::Dominai,
            shaping: full::Shaping::None,
            predictor,
            adaptive: None,
        }),
        (AgentArg::Search(FullEngine::Ismcts), _) if budget == 0 => {
            bail!("--agent ismcts runs until a node budget is spent: give --budget N, e.g. --budget 20000")
        }
        (AgentArg::Search(e), engine::DepthLimit::Unlimited) if budget == 0 && e != FullEngine::Ismcts => bail!(
            "--agent {}: the full game is too large for an exact search; give --depth N, the plays and draws to \
             look ahead (e.g. --depth 3), or --budget N nodes",
            e.name()
        ),
        (AgentArg::Search(e), d) => FullAgent::Search(full::SearchSettings {
            engine: e,
            depth: full::depth_of(d),
            budget,
            worlds,
            learned,
            belief,
            shaping,
            predictor,
            adaptive: None,
        }),
    })
}

/// `muggins play` under the thesis rules.
fn run_thesis(args: PlayArgs) -> Result<()> {
    let target = match args.target.unwrap_or(FullTarget::Thesis(engine::TargetKind::Scorer)) {
        FullTarget::Thesis(k) => k,
        t @ (FullTarget::Heaviest | FullTarget::Searcher) => {
            bail!("--target {t}: a full-game strategy; the thesis rules' targets are random, scorer and defender")
        }
    };
    if args.engine == PlayerEngine::Ismcts {
        bail!(
            "--engine ismcts plays the full game (--preset all-fives --agent ismcts); the thesis's engines are mstar and expectimax"
        );
    }
    let rules = args.rules.rules()?;
    let config = args.search.config()?;
    let model = match (args.source, &args.model) {
        (jobs::Source::Classifier, Some(path)) => Some(load_model(path)?),
        (jobs::Source::Classifier, None) => bail!(
            "--source classifier needs the trained classifier: give --model FILE, the model artifact of a fitted \
             experiment (<results>/<experiment>/classifier/model-<hash>.json)"
        ),
        (other, Some(path)) => bail!(
            "--model {}: only --source classifier uses a model, not --source {}; leave --model out",
            path.display(),
            other.name()
        ),
        (_, None) => None,
    };
    // `model` is set exactly when the source is the classifier (checked above).
    let source = match (args.source, &model) {
        (_, Some((m, _))) => InfoSource::Classifier(m),
        (jobs::Source::Bayes, None) => InfoSource::Bayes,
        (_, None) => InfoSource::Oracle,
    };
    let game = GameConfig {
        seed: args.seed,
        starting_state: args.state,
        repeat: args.repeat,
        engine: args.engine,
        target,
        observability: args.observability,
    };
    let mut searcher = Searcher::new(rules.clone(), config, LocalTable::new());
    let record = play_game(&mut searcher, &game, source)?;
    let deal = Deal::from_index(&rules, args.state).expect("play_game checked the state");
    if args.json {
        return print_json(
            &args,
            &rules,
            &deal,
            &record,
            target,
            model.as_ref().map(|(_, hash)| hash.as_str()),
        );
    }
    println!(
        "state {} repeat {} seed {}: {} ({}) against {}, {} observation",
        args.state,
        args.repeat,
        args.seed,
        args.engine,
        args.source.name(),
        target,
        args.observability
    );
    println!("deal: {}", deal.describe(&rules));
    println!();
    print_moves(&rules, &deal, &record)?;
    println!();
    println!(
        "{} ending: player {} - target {}, score_diff {:+} ({})",
        record.ending,
        record.player_score,
        record.target_score,
        record.score_diff,
        if record.win_or_tie() { "win or tie" } else { "loss" }
    );
    println!(
        "turns {}, draws player {} target {}, predictions {} correct {}, nodes {}",
        record.turns,
        record.player_draws,
        record.target_draws,
        record.predictions,
        record.predictions_correct,
        record.nodes
    );
    Ok(())
}

/// The thesis game as JSON (`--json`).
fn print_json(
    args: &PlayArgs,
    rules: &Rules,
    deal: &Deal,
    record: &engine::GameRecord,
    target: engine::TargetKind,
    model_hash: Option<&str>,
) -> Result<()> {
    let names = |s: TileSet| -> Vec<String> {
        (0..rules.tile_count())
            .filter(|t| s >> t & 1 == 1)
            .map(|t| rules.tile_name(t))
            .collect()
    };
    let value = json!({
        "rules": rules.config(),
        "seed": args.seed,
        "starting_state": args.state,
        "repeat": args.repeat,
        "engine": args.engine,
        "information_source": args.source.name(),
        "model_hash": model_hash,
        "target": target,
        "observability": args.observability,
        "deal": { "player": names(deal.player), "target": names(deal.target), "boneyard": names(deal.boneyard) },
        "leader": record.leader,
        "player_score": record.player_score,
        "target_score": record.target_score,
        "score_diff": record.score_diff,
        "win_or_tie": record.win_or_tie(),
        "ending": record.ending,
        "turns": record.turns,
        "player_draws": record.player_draws,
        "target_draws": record.target_draws,
        "predictions": record.predictions,
        "predictions_correct": record.predictions_correct,
        "nodes": record.nodes,
        "moves": record.moves.iter().map(|m| m.token(rules)).collect::<Vec<_>>(),
    });
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

/// A model artifact and its hash. A file named `model-<hash>.json`, as the fit stage
/// writes it, must hold exactly that content; any other name is taken as it is.
fn load_model(path: &Path) -> Result<(classifier::Artifact, String)> {
    let bytes =
        std::fs::read(path).with_context(|| format!("--model {}: cannot read the model artifact", path.display()))?;
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(jobs::layout::model_hash_of)
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    let expected = named.map_or_else(|| classifier::sha256_hex(&bytes), str::to_string);
    let artifact = classifier::Artifact::from_bytes(&bytes, &expected).with_context(|| {
        format!(
            "--model {}: not a usable model artifact (use the classifier/model-<hash>.json that an experiment's fit \
             stage wrote)",
            path.display()
        )
    })?;
    Ok((artifact, expected))
}

/// Prints the move table by replaying the record through the engine (which
/// checks every move and keeps the scores), and checks that the replay ends
/// as the record says.
fn print_moves(rules: &Rules, deal: &Deal, record: &GameRecord) -> Result<()> {
    println!(
        "{:>4}  {:<7} {:<18} {:>5} {:>7} {:>7}",
        "turn", "seat", "move", "count", "player", "target"
    );
    let replayed = engine::replay_with(rules, deal, &record.moves, |step| {
        let (seat, text) = match *step.mv {
            Move::Play {
                seat,
                tile,
                loc,
                points,
                ..
            } => {
                let scored = if points > 0 {
                    format!(" scores {points}")
                } else {
                    String::new()
                };
                (seat, format!("plays {} {:?}{scored}", rules.tile_name(tile), loc))
            }
            Move::Draw { seat, tile } => (seat, format!("draws {}", rules.tile_name(tile))),
            Move::Pass { seat } => (seat, "passes".to_string()),
        };
        let seat = match seat {
            engine::Seat::Player => "player",
            engine::Seat::Target => "target",
        };
        let turn = if matches!(step.mv, Move::Draw { .. }) {
            String::new()
        } else {
            step.turns.to_string()
        };
        println!(
            "{:>4}  {:<7} {:<18} {:>5} {:>7} {:>7}",
            turn,
            seat,
            text,
            step.position.board.count(),
            step.player_score,
            step.target_score
        );
    })
    .context("the game's own move list does not replay (a bug: please report it with this command line)")?;
    let same = (
        replayed.player_score,
        replayed.target_score,
        replayed.ending,
        replayed.turns,
    ) == (record.player_score, record.target_score, record.ending, record.turns);
    if !same {
        bail!(
            "the replay ends {replayed:?}, but the game recorded {record:?} (a bug: please report it with this command line)"
        );
    }
    Ok(())
}

/// `--agent` with `--preset`: a fixed strategy, or a search of the full game.
#[derive(Debug, Clone, Copy)]
pub enum AgentArg {
    /// A fixed strategy.
    Fixed(FullTarget),
    /// M*, Expectimax (with `--depth` or `--budget`) or ISMCTS (with `--budget`).
    Search(FullEngine),
}

impl std::str::FromStr for AgentArg {
    type Err = String;
    fn from_str(s: &str) -> Result<AgentArg, String> {
        match s {
            "mstar" => Ok(AgentArg::Search(FullEngine::MStar)),
            "expectimax" => Ok(AgentArg::Search(FullEngine::Expectimax)),
            "ismcts" => Ok(AgentArg::Search(FullEngine::Ismcts)),
            "dominai" => Ok(AgentArg::Search(FullEngine::Dominai)),
            _ => s.parse().map(AgentArg::Fixed).map_err(|_| {
                format!(
                    "unknown agent {s:?}: expected random, scorer, defender, heaviest, mstar, expectimax, ismcts or \
                     dominai"
                )
            }),
        }
    }
}
