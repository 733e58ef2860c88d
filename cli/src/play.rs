//! `muggins play`: one game, move by move.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use engine::{
    Deal, GameConfig, GameRecord, InfoSource, LocalTable, Move, Observability, PlayerEngine, Rules, Searcher, TileSet,
    play_game,
};
use full::{FullTarget, Preset};
use serde_json::json;

use crate::args::{RulesArgs, SearchArgs};
use crate::play_full_args::{FullArgs, FullFlags, run_full};

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
    /// The opponent: random, scorer or defender (with --preset also
    /// heaviest; every seat not on seat 0's side plays it). Default: scorer
    /// (block and team: random).
    #[arg(long)]
    pub target: Option<FullTarget>,
    /// full or partial (with --preset: partial samples --worlds K worlds
    /// per decision).
    #[arg(long, default_value = "full")]
    pub observability: Observability,
    /// Play the full game instead of the thesis rules: block, team or
    /// all-fives (docs/rules.md section 9). Every seat plays a fixed
    /// strategy (--agent for seat 0 and its partner, --target for the rest).
    #[arg(long)]
    pub preset: Option<Preset>,
    #[command(flatten)]
    pub full: FullFlags,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub thesis: ThesisFlags,
    /// Print the game record as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `muggins play`'s flags for the thesis rules (without `--preset`).
#[derive(Debug, Args)]
pub struct ThesisFlags {
    /// The player's engine: mstar or expectimax.
    #[arg(long, default_value_t = PlayerEngine::MStar, conflicts_with = "preset")]
    pub engine: PlayerEngine,
    /// Where M* takes its target model from: oracle, classifier or bayes.
    #[arg(long, default_value = "oracle", conflicts_with = "preset")]
    pub source: jobs::Source,
    /// The trained classifier (a model artifact, e.g.
    /// <results>/<experiment>/classifier/model-<hash>.json); needed by --source classifier.
    #[arg(long, conflicts_with = "preset")]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub rules: RulesArgs,
}

pub fn run(args: PlayArgs) -> Result<()> {
    match args.preset {
        Some(preset) => run_full(
            FullArgs {
                state: args.state,
                repeat: args.repeat,
                seed: args.seed,
                target: args.target,
                observability: args.observability,
                json: args.json,
                search: &args.search,
                full: &args.full,
                rules_given: args.thesis.rules.any_given(),
            },
            preset,
        ),
        None => run_thesis(args),
    }
}

/// `muggins play` under the thesis rules.
fn run_thesis(args: PlayArgs) -> Result<()> {
    let target = match args.target.unwrap_or(FullTarget::Thesis(engine::TargetKind::Scorer)) {
        FullTarget::Thesis(k) => k,
        t @ (FullTarget::Heaviest | FullTarget::Searcher) => {
            bail!("--target {t}: a full-game strategy; the thesis rules' targets are random, scorer and defender")
        }
    };
    if args.thesis.engine == PlayerEngine::Ismcts {
        bail!(
            "--engine ismcts plays the full game (--preset all-fives --agent ismcts); the thesis's engines are mstar and expectimax"
        );
    }
    let rules = args.thesis.rules.rules()?;
    let config = args.search.config()?;
    let model = match (args.thesis.source, &args.thesis.model) {
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
    let source = match (args.thesis.source, &model) {
        (_, Some((m, _))) => InfoSource::Classifier(m),
        (jobs::Source::Bayes, None) => InfoSource::Bayes,
        (_, None) => InfoSource::Oracle,
    };
    let game = GameConfig {
        seed: args.seed,
        starting_state: args.state,
        repeat: args.repeat,
        engine: args.thesis.engine,
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
        args.thesis.engine,
        args.thesis.source.name(),
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
        "engine": args.thesis.engine,
        "information_source": args.thesis.source.name(),
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
