//! `muggins fit-eval`: fits the full game's learned leaf evaluation by least
//! squares on seeded self-play and writes it as an artifact (JSON; its
//! SHA-256 is its identity). The shipped `jobs/evals/fives-double6.json` is
//! this command's output at its defaults.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use full::{EvalTraining, default_training};

#[derive(Debug, Args)]
pub struct FitEvalArgs {
    /// Self-play hands to fit on (a further fifth is held out).
    #[arg(long, default_value_t = default_training().hands)]
    pub hands: u64,
    /// The self-play's seed.
    #[arg(long, default_value_t = default_training().seed)]
    pub seed: u64,
    /// Seats at the table (All Fives, double-6): 2 to 4 (4 plays in partnerships).
    #[arg(long, default_value_t = default_training().seats)]
    pub seats: u8,
    /// Ridge penalty, in thousandths.
    #[arg(long, default_value_t = default_training().ridge_millis)]
    pub ridge_millis: u32,
    /// Where to write the artifact (default: print it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: FitEvalArgs) -> Result<()> {
    if !(2..=4).contains(&args.seats) {
        bail!("--seats {}: All Fives is played by 2 to 4 seats", args.seats);
    }
    if args.hands == 0 || args.hands > 10_000_000 {
        bail!("--hands {}: give 1 to 10,000,000 hands", args.hands);
    }
    let training = EvalTraining {
        seed: args.seed,
        hands: args.hands,
        seats: args.seats,
        ridge_millis: args.ridge_millis,
    };
    let (eval, json) = jobs::evals::fit_eval(&training)?;
    let hash = jobs::evals::eval_hash(&json);
    match &args.out {
        Some(path) => {
            std::fs::write(path, &json).with_context(|| format!("writing --out {}", path.display()))?;
            eprintln!("wrote {} ({hash})", path.display());
        }
        None => print!("{json}"),
    }
    eprintln!(
        "{} samples; held-out mean squared error of the rest of the hand: {:.1} (score so far: {:.1})",
        eval.samples, eval.holdout_mse, eval.holdout_mse_score
    );
    Ok(())
}
