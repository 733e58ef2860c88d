//! `muggins fit-predict`: fits the opponent-move predictors of the search's
//! shaping (naive Bayes, the DBN, the logit; docs/prediction.md) on seeded
//! hands, writes them as an artifact (JSON; its SHA-256 is its identity) and
//! prints their held-out top-N curves, log loss and seed 004's confidence
//! contours. The shipped `jobs/predictors/fives-double6.json` is this
//! command's output at its defaults.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use full::predict::{PredictTraining, Predictors, TOP_N, confidence_nodes, default_predict_training};

#[derive(Debug, Args)]
pub struct FitPredictArgs {
    /// Hands per strategy to fit on (a further fifth is held out).
    #[arg(long, default_value_t = default_predict_training().hands)]
    pub hands: u64,
    /// The hands' seed.
    #[arg(long, default_value_t = default_predict_training().seed)]
    pub seed: u64,
    /// Seats at the table (All Fives, double-6): 2 to 4 (4 plays in partnerships).
    #[arg(long, default_value_t = default_predict_training().seats)]
    pub seats: u8,
    /// Where to write the artifact (default: the evaluation only).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: FitPredictArgs) -> Result<()> {
    if !(2..=4).contains(&args.seats) {
        bail!("--seats {}: All Fives is played by 2 to 4 seats", args.seats);
    }
    if args.hands == 0 || args.hands > 1_000_000 {
        bail!("--hands {}: give 1 to 1,000,000 hands a strategy", args.hands);
    }
    let training = PredictTraining {
        seed: args.seed,
        hands: args.hands,
        seats: args.seats,
    };
    let (set, json) = jobs::predictors::fit(&training)?;
    if let Some(path) = &args.out {
        std::fs::write(path, &json).with_context(|| format!("writing --out {}", path.display()))?;
        println!("wrote {} ({})", path.display(), jobs::evals::eval_hash(&json));
    }
    print!("{}", evaluation_text(&set));
    Ok(())
}

/// The held-out evaluation as text: top-N and log loss per model and
/// strategy, then the confidence contours.
pub fn evaluation_text(set: &Predictors) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let t = &set.training;
    let _ = writeln!(
        s,
        "held-out plays ({} + {} hands a strategy, seed {}, {} seats; the other seats play at random)",
        t.hands,
        t.hands.div_ceil(5),
        t.seed,
        t.seats
    );
    let _ = write!(s, "{:<12} {:<9} {:>9} {:>6}", "model", "target", "decisions", "plays");
    for n in 1..=TOP_N {
        let _ = write!(s, " {:>6}", format!("top-{n}"));
    }
    let _ = writeln!(s, " {:>9}", "log loss");
    for p in &set.holdout {
        let _ = write!(
            s,
            "{:<12} {:<9} {:>9} {:>6.2}",
            p.model, p.target, p.decisions, p.mean_plays
        );
        for v in &p.top_n {
            let _ = write!(s, " {:>5.1}%", 100.0 * v);
        }
        let _ = writeln!(s, " {:>9.4}", p.log_loss);
    }
    let _ = writeln!(
        s,
        "\nconfidence contours (seed 004): plays kept per opponent node (N) and nodes to reach a depth\n\
         while every actual opponent play stays searched with probability p, against a full search\n\
         (branching: the agent's mean plays x min(N, the opponent's); 2-ply steps)"
    );
    let _ = writeln!(
        s,
        "{:<12} {:<9} {:>5} {:>5} {:>3} {:>14} {:>14}",
        "model", "target", "depth", "p", "N", "nodes", "full search"
    );
    for p in &set.holdout {
        for depth in [4u32, 8] {
            for conf in [0.5, 0.9] {
                match confidence_nodes(&p.top_n, p.mean_plays, p.mean_plays, depth, conf) {
                    Some((n, nodes, full)) => {
                        let _ = writeln!(
                            s,
                            "{:<12} {:<9} {:>5} {:>5} {:>3} {:>14.0} {:>14.0}",
                            p.model, p.target, depth, conf, n, nodes, full
                        );
                    }
                    None => {
                        let _ = writeln!(
                            s,
                            "{:<12} {:<9} {:>5} {:>5} {:>3} {:>14} {:>14}",
                            p.model, p.target, depth, conf, "-", "not reached", "-"
                        );
                    }
                }
            }
        }
    }
    s
}
