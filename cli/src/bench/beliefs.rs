//! `muggins bench --suite beliefs`: what a belief over the hidden tiles
//! costs at double-6 (docs/beliefs.md). Positions are decisions of seeded
//! hands in which every seat plays the `defender` strategy (which runs
//! seats out of suits, so voids are common); the counts of consistent
//! deals are behaviour checksums, times are medians of `--runs`.

use std::time::Instant;

use anyhow::Result;
use engine::{Belief, TargetKind};
use full::{
    Constraints, FivesPosition, FullConfig, FullRules, FullTarget, HOLDERS, Marginals, Observation, Seen, WorldSampler,
    deal_from_index, hand_decisions,
};

use super::median;

/// Decisions of `hands` seeded hands played by `defender`.
fn decisions(rules: &FullRules, hands: u64) -> Vec<(FivesPosition, Seen)> {
    let defender = FullTarget::Thesis(TargetKind::Defender);
    let deals = full::deal_count(rules).expect("double-6 deals fit");
    let mut out = Vec::new();
    for d in 0..hands {
        let hands = deal_from_index(rules, (d * 2_654_435_761) % deals).expect("a deal index");
        let mut rng = engine::seed::keyed_rng(13, d, 0, b"benchblf", 0);
        out.extend(hand_decisions(rules, hands, defender, &mut rng));
    }
    out
}

pub fn run(runs: usize) -> Result<()> {
    println!(
        "beliefs over the hidden tiles, double-6 All Fives, median of {}, one thread",
        crate::text::plural(runs as u64, "run")
    );
    println!(
        "{:<34} {:>9} {:>14} {:>14} {:>16}",
        "", "positions", "per position", "per second", "consistent deals"
    );
    for seats in [4u8, 2] {
        let rules = FullRules::new(FullConfig::all_fives(seats)).expect("valid rules");
        let positions = decisions(&rules, 40);
        let n = positions.len();
        let observations: Vec<Observation> = positions
            .iter()
            .map(|(pos, seen)| {
                let (v, p) = seen.voids();
                Observation::new(&rules, pos, pos.mover, &v, &p)
            })
            .collect();
        // Counts: the checksum (log2 of the product would lose nothing
        // useful; the sum mod 2^64 is exact and stable).
        let mut c = Constraints::default();
        let checksum = observations.iter().fold(0u64, |acc, o| {
            c.update(o);
            acc.wrapping_add(c.count() as u64)
        });
        let mut m: Marginals = [[0.0; HOLDERS]; 64];
        let mut times = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            for o in &observations {
                c.update(o);
                c.marginals(&mut m);
            }
            times.push(t.elapsed());
        }
        let t = median(times);
        println!(
            "{:<34} {:>9} {:>12.2}us {:>14.0} {:>16}",
            format!("constraints update+marginals, {}", if seats == 4 { "4p" } else { "2p" }),
            n,
            t.as_secs_f64() * 1e6 / n as f64,
            n as f64 / t.as_secs_f64(),
            checksum
        );
        // Exact uniform sampling: 100 worlds per position.
        let mut times = Vec::new();
        let mut rng = engine::seed::keyed_rng(13, 0, 0, b"benchsmp", 0);
        let mut at = [0u8; 64];
        for _ in 0..runs {
            let mut sampled = 0u64;
            let mut elapsed = std::time::Duration::ZERO;
            for o in &observations {
                c.update(o);
                let t = Instant::now();
                for _ in 0..100 {
                    c.sample(&mut rng, &mut at).expect("a consistent deal");
                    sampled += 1;
                }
                elapsed += t.elapsed();
            }
            times.push(elapsed / sampled as u32);
        }
        let t = median(times);
        println!(
            "{:<34} {:>9} {:>12.3}us {:>14.0} {:>16}",
            format!("constraints sample a world, {}", if seats == 4 { "4p" } else { "2p" }),
            n,
            t.as_secs_f64() * 1e6,
            1.0 / t.as_secs_f64(),
            "-"
        );
        // Every belief's preparation for a PIMC decision of 32 worlds.
        let models = [FullTarget::Thesis(TargetKind::Defender); 4];
        for belief in Belief::ALL {
            let mut s = WorldSampler::default();
            let mut worlds = Vec::new();
            let mut times = Vec::new();
            for _ in 0..runs {
                let mut rng = engine::seed::keyed_rng(13, 1, 0, b"benchsmp", 0);
                let t = Instant::now();
                for (pos, seen) in &positions {
                    s.prepare(
                        &rules,
                        pos,
                        seen,
                        full::WorldSource {
                            belief,
                            models: &models,
                            worlds: 32,
                        },
                        &mut rng,
                    );
                    s.worlds(32, &mut rng, &mut worlds);
                }
                times.push(t.elapsed());
            }
            let t = median(times);
            println!(
                "{:<34} {:>9} {:>12.2}us {:>14.0} {:>16}",
                format!(
                    "{} belief, 32 worlds, {}",
                    belief.name(),
                    if seats == 4 { "4p" } else { "2p" }
                ),
                n,
                t.as_secs_f64() * 1e6 / n as f64,
                n as f64 / t.as_secs_f64(),
                "-"
            );
        }
    }
    Ok(())
}
