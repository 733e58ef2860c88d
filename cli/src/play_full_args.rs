//! `muggins play --preset`'s flags and their checks: the full game's
//! player (`--agent`, a [`PlayerName`]) and search settings, checked alone
//! here and together by [`full::SearchSettings::check`] (the rules the
//! spec and the Python `Bot` share); the thesis rules' flags are
//! `play.rs`'s.

use anyhow::{Result, bail};
use clap::Args;
use engine::{Observability, PlayerEngine, WorldCount};
use full::{FullAgent, FullTarget, Leaves, PlayerName, Preset, Setting};

use crate::args::SearchArgs;
use crate::play_full::{self, FullPlay};

/// What `muggins play --preset` was given: the flags both games share and
/// the full game's (`play.rs` holds the command's flags).
pub struct FullArgs<'a> {
    /// The deal index.
    pub state: u64,
    /// The repeat number.
    pub repeat: u64,
    /// The experiment seed.
    pub seed: u64,
    /// The other seats' strategy.
    pub target: Option<FullTarget>,
    /// What seat 0 sees.
    pub observability: Observability,
    /// Print JSON.
    pub json: bool,
    /// `--worlds`, `--depth`, `--belief`.
    pub search: &'a SearchArgs,
    /// The full game's flags.
    pub full: &'a FullFlags,
    /// Whether a thesis rules' flag was given (refused here).
    pub rules_given: bool,
}

/// `muggins play`'s flags for the full game (with `--preset`).
#[derive(Debug, Args)]
pub struct FullFlags {
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
    pub agent: PlayerName,
    /// With --preset: nodes per world of a decision (iterative deepening
    /// stops when they are spent; ismcts: nodes per decision per world).
    #[arg(long, requires = "preset")]
    pub budget: Option<u64>,
    /// With --preset all-fives: the transposition table's megabytes.
    #[arg(long, requires = "preset", default_value_t = full::DEFAULT_TABLE_MB)]
    pub table_mb: u32,
    /// With --preset all-fives and --agent mstar or expectimax under
    /// --observability partial: threads a decision's sampled worlds are
    /// shared among (the same plays and node counts, less wall time;
    /// docs/search.md). 1 to 64.
    #[arg(long, requires = "preset", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: u16,
    /// With --preset all-fives: leaves valued by the score so far (score) or
    /// the shipped learned evaluation (learned).
    #[arg(long = "eval", value_name = "EVAL", requires = "preset", default_value = "score")]
    pub evaluation: Leaves,
    /// With --preset all-fives and --agent mstar or expectimax: how
    /// opponents' nodes are shaped by a prediction of their play: none,
    /// prune, asymmetric or expect (docs/prediction.md).
    #[arg(long, requires = "preset", default_value = "none")]
    pub shaping: String,
    /// With --shaping: the model predicting the opponents' plays: naive-bayes, dbn or logit.
    #[arg(long, requires = "preset", default_value = "logit")]
    pub predictor: full::predict::PredictModel,
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
    /// With --agent net: the model file (a safetensors network, e.g.
    /// models/ppo-block.safetensors; docs/rl.md).
    #[arg(long, value_name = "FILE", requires = "preset")]
    pub net: Option<std::path::PathBuf>,
    /// With --agent net: 0 plays the highest logit; above 0 (up to 100)
    /// draws from the softmax at this temperature.
    #[arg(long, requires = "preset", default_value_t = 0.0)]
    pub temperature: f64,
    /// With --net and --agent ismcts (the guided search), or --agent mstar
    /// or expectimax with --eval learned: where the network's worlds come
    /// from: constraints, policy (weighted by the network's likelihood of
    /// the other seats' plays) or, for ismcts, head (docs/train.md).
    #[arg(long, value_name = "BELIEF", requires = "net", default_value = "constraints")]
    pub net_belief: full::spiel::GuidedBelief,
    /// With --target searcher: its Expectimax depth.
    #[arg(long, requires = "preset", default_value_t = full::DEFAULT_TARGET_DEPTH)]
    pub target_depth: u8,
}

/// `muggins play --preset`: the full game.
pub(crate) fn run_full(args: FullArgs, preset: Preset) -> Result<()> {
    if args.rules_given {
        bail!(
            "--set/--hand/--boneyard/--lead/--blocked are the thesis rules' flags; with --preset {preset} use --seats and --teams"
        );
    }
    let dominai = args.full.agent == PlayerName::Search(PlayerEngine::Dominai);
    let policy = args.full.agent == PlayerName::Net;
    let worlds = match (args.observability, args.search.worlds) {
        // DominAI keeps its own matrices, a network's policy reads its
        // seat's view: they sample no worlds.
        (Observability::Partial, WorldCount::All) if dominai || policy => 0,
        (Observability::Full, WorldCount::All) => 0,
        (Observability::Full, w) => bail!(
            "--worlds {w}: worlds are sampled under --observability partial; leave --worlds out, or add \
             --observability partial"
        ),
        (Observability::Partial, w) => match w {
            WorldCount::Sample(k) if (1..=jobs::MAX_WORLDS).contains(&k) => k as u16,
            _ => bail!(
                "--worlds {w}: partial observation of the full game samples worlds: give a number from 1 to {}, \
                 e.g. --worlds 16",
                jobs::MAX_WORLDS
            ),
        },
    };
    let budget = args.full.budget.unwrap_or(0);
    if args.full.budget.is_some() && !(1..=jobs::MAX_BUDGET).contains(&budget) {
        bail!("--budget {budget}: give 1 to {} nodes", jobs::MAX_BUDGET);
    }
    let (shaping, predictor) = shaping_of(&args)?;
    let need = full::FivesTable::mb_for_budget(budget);
    if budget > 0 && args.full.table_mb < need {
        bail!(
            "--table-mb {}: --budget {budget} needs at least {need} MB so that no entry is ever replaced",
            args.full.table_mb
        );
    }
    let belief = args.search.belief;
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
        learned: args.full.evaluation.is_learned(),
        belief,
        shaping,
        predictor,
        net_belief: args.full.net_belief,
    };
    let agent = full_agent(&args, args.search.depth, flags)?;
    if let FullAgent::Search(s) = agent {
        s.check(Some(preset), Some(args.observability)).map_err(|e| {
            let flag = match e.setting {
                Setting::Engine => "--agent",
                Setting::Depth => "--depth",
                Setting::Budget => "--budget",
                Setting::Worlds => "--worlds",
                Setting::Evaluation => "--eval",
                Setting::Belief => "--belief",
                Setting::Shaping => "--shaping",
                Setting::Adaptive => "--adaptive",
                Setting::Observability => "--observability",
            };
            anyhow::anyhow!(
                "{flag} {}: {} (--agent {})",
                e.value.trim_matches('"'),
                e.why,
                args.full.agent
            )
        })?;
    }
    let rules = play_full::rules(preset, args.full.seats, args.full.teams)?;
    if let (Preset::AllFives, Some(to), Some(_)) = (preset, args.full.match_to, &args.full.net) {
        bail!(
            "--match {to}: a network (--net) plays one hand of All Fives (its seats decide from the hand's view, \
             as engine = \"net\" does in specs)"
        );
    }
    let net = match (args.full.agent, &args.full.net) {
        (PlayerName::Net, None) => {
            bail!("--agent net plays a model file: give --net FILE, e.g. --net models/ppo-block.safetensors")
        }
        (PlayerName::Net, Some(path)) => {
            let path = path.to_string_lossy();
            Some(
                jobs::nets::load(&path, args.full.temperature, &rules)
                    .map_err(|e| anyhow::anyhow!("--net {path}: {e}"))?,
            )
        }
        (
            PlayerName::Search(e @ (PlayerEngine::MStar | PlayerEngine::Expectimax | PlayerEngine::Ismcts)),
            Some(path),
        ) => {
            let path = path.to_string_lossy();
            Some(net_search(e, &path, &rules, args.search.depth, &flags)?)
        }
        (_, Some(path)) => bail!(
            "--net {}: --agent net plays a model file (ismcts, mstar and expectimax search with it)",
            path.display()
        ),
        (_, None) => None,
    };
    // A search with a network decides as a network's seats do.
    let agent = if net.is_some() { FullAgent::External } else { agent };
    play_full::run(FullPlay {
        rules,
        net,
        deal: args.state,
        seed: args.seed,
        repeat: args.repeat,
        agent,
        target: args.target.unwrap_or(match preset {
            Preset::AllFives => FullTarget::Thesis(engine::TargetKind::Scorer),
            Preset::Block | Preset::Team => FullTarget::Thesis(engine::TargetKind::Random),
        }),
        match_to: args.full.match_to,
        json: args.json,
        table_mb: args.full.table_mb,
        decision_threads: args.full.threads as usize,
        learned: args.full.evaluation.is_learned(),
        target_depth: args.full.target_depth,
    })
}

/// `--agent ENGINE --net FILE`: ismcts is the network's guided search of
/// `--budget` x `--worlds` simulations, mstar and expectimax search
/// `--depth` plays on `--worlds` worlds with its value at the leaves (as a
/// spec's `engine = E` with `net`, docs/train.md, "Value leaves"), or with
/// `--eval learned` spend `--budget` nodes on each of `--worlds` worlds the
/// network draws with the learned leaves (All Fives; "The learned leaves
/// over the network's worlds").
fn net_search(
    e: PlayerEngine,
    path: &str,
    rules: &full::FullRules,
    depth: engine::DepthLimit,
    flags: &FullSearchFlags,
) -> Result<jobs::nets::NetAgent> {
    if flags.worlds == 0 {
        bail!("--net {path}: a network decides from its seat's view: add --observability partial --worlds K");
    }
    if flags.shaping != full::Shaping::None {
        bail!("--shaping: a search with --net reads the network, not a predictor of the others' plays");
    }
    if flags.learned {
        return learned_worlds(e, path, rules, depth, flags);
    }
    let agent = jobs::nets::load(path, 0.0, rules).map_err(|e| anyhow::anyhow!("--net {path}: {e}"))?;
    let made = if e == PlayerEngine::Ismcts {
        if flags.budget == 0 {
            bail!(
                "--agent ismcts --net {path}: the network's guided search of --budget x --worlds simulations: give --budget N"
            );
        }
        agent
            .with_simulations(flags.budget.saturating_mul(flags.worlds as u64))
            .and_then(|a| a.with_belief(flags.net_belief))
    } else {
        let engine::DepthLimit::Turns(d) = depth else {
            bail!(
                "--agent {} --net {path}: a network's value leaves are searched to a depth: give --depth 1 to 8 \
                 (or --eval learned --budget N: the learned leaves on the network's worlds)",
                e.name()
            );
        };
        if flags.budget > 0 {
            bail!(
                "--budget: --agent {} --net searches to --depth plays on --worlds worlds (--budget goes with \
                 --eval learned)",
                e.name()
            );
        }
        if flags.net_belief != full::spiel::GuidedBelief::Constraints {
            bail!(
                "--net-belief {}: a network's value-leaf search draws its worlds from the constraints belief \
                 (policy goes with --eval learned or --agent ismcts)",
                flags.net_belief.name()
            );
        }
        let how =
            full::spiel::LeafSearch::new(e, d as u32, flags.worlds as u32).map_err(|why| anyhow::anyhow!("{why}"))?;
        agent.with_leaves(how)
    };
    made.map_err(|e| anyhow::anyhow!("--net {path}: {e}"))
}

/// `--agent mstar|expectimax --net FILE --eval learned`: the learned
/// leaves, `--budget` nodes on each of `--worlds` worlds drawn by
/// `--net-belief` (constraints or policy), All Fives only.
fn learned_worlds(
    e: PlayerEngine,
    path: &str,
    rules: &full::FullRules,
    depth: engine::DepthLimit,
    flags: &FullSearchFlags,
) -> Result<jobs::nets::NetAgent> {
    // `--agent ismcts --eval learned` is refused before this, by the
    // search settings' own check: ISMCTS values no leaves.
    if let engine::DepthLimit::Turns(d) = depth {
        bail!("--depth {d}: the learned leaves' search deepens within its node budget: give --budget N, not --depth");
    }
    if flags.budget == 0 {
        bail!(
            "--agent {} --net {path} --eval learned: the learned leaves' search spends a node budget a world: give \
             --budget N",
            e.name()
        );
    }
    let how = full::spiel::WorldSearch::new(e, flags.budget, flags.worlds as u64, flags.net_belief)
        .map_err(|why| anyhow::anyhow!("--net-belief/--budget/--worlds: {why}"))?;
    let agent = jobs::nets::read(path, 0.0)
        .and_then(|a| a.with_world_search(how))
        .map_err(|e| anyhow::anyhow!("--net {path}: {e}"))?;
    agent
        .policy
        .check(&full::spiel::SpielState::new(rules.clone(), 0))
        .map_err(|e| anyhow::anyhow!("--net {path}: {e}"))?;
    Ok(agent)
}

/// The full game's search flags, each checked alone.
#[derive(Clone, Copy, Debug)]
struct FullSearchFlags {
    worlds: u16,
    budget: u64,
    learned: bool,
    belief: engine::Belief,
    shaping: full::Shaping,
    predictor: full::predict::PredictModel,
    /// `--net-belief`: where a network's searches draw their worlds.
    net_belief: full::spiel::GuidedBelief,
}

/// `--shaping` with its parameters, and `--predictor`.
fn shaping_of(args: &FullArgs) -> Result<(full::Shaping, full::predict::PredictModel)> {
    let params = jobs::ShapingParams {
        top_n: args.full.top_n,
        epsilon: args.full.epsilon,
        likely: args.full.likely,
        extend: args.full.extend,
        reduce: args.full.reduce,
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
    let shaping = jobs::shaping_of(&args.full.shaping, &params).map_err(|why| anyhow::anyhow!("--shaping: {why}"))?;
    Ok((shaping, args.full.predictor))
}

/// Seat 0's agent from `--agent` and the search flags, each checked alone
/// (together by [`full::SearchSettings::check`]).
fn full_agent(args: &FullArgs, depth: engine::DepthLimit, s: FullSearchFlags) -> Result<FullAgent> {
    let FullSearchFlags {
        worlds,
        budget,
        learned,
        belief,
        shaping,
        predictor,
        net_belief: _,
    } = s;
    Ok(match args.full.agent {
        PlayerName::Fixed(t) if depth != engine::DepthLimit::Unlimited || budget > 0 || worlds > 0 || learned => {
            bail!(
                "--depth/--budget/--worlds/--eval learned: --agent {} plays a fixed strategy; they go with --agent \
                 mstar, expectimax or ismcts",
                t.name()
            )
        }
        PlayerName::Fixed(t) => FullAgent::Fixed(t),
        PlayerName::Net if depth != engine::DepthLimit::Unlimited || budget > 0 || worlds > 0 || learned => {
            bail!("--depth/--budget/--worlds/--eval learned: --agent net plays a network's policy; it does not search")
        }
        PlayerName::Net => FullAgent::External,
        PlayerName::Search(PlayerEngine::Dominai) => FullAgent::Search(full::SearchSettings {
            engine: PlayerEngine::Dominai,
            depth: full::DEEPEST,
            budget,
            worlds: 0,
            learned,
            belief: engine::Belief::Dominai,
            shaping,
            predictor,
            adaptive: None,
        }),
        PlayerName::Search(e) => FullAgent::Search(full::SearchSettings {
            engine: e,
            depth: full::depth_of(depth),
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
