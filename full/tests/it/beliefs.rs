//! Beliefs over hidden tiles: the exact `constraints` distribution against
//! brute-force enumeration, its sampler against the exact distribution, and
//! the `model` belief's weights.

use engine::seed::{below, keyed_rng};
use engine::{ActionList, Belief, TargetKind};
use full::{
    BONEYARD, Constraints, FivesPosition, FullConfig, FullRules, FullTarget, HOLDERS, Marginals, Observation, Opening,
    Seen, WorldSampler, WorldSource, model_weight, random_deal, scores, tiles_of as bits,
};
use rand_chacha::ChaCha20Rng;

fn rules(set: u8, seats: u8) -> FullRules {
    let mut c = FullConfig::all_fives(seats);
    c.set = set;
    c.teams = seats == 4;
    c.hand = match (set, seats) {
        (3, 2) => 3,
        (3, _) => 2,
        (4, 2) => 5,
        (4, _) => 3,
        (_, 2) => 7,
        (_, 3) => 5,
        _ => 7,
    };
    FullRules::new(c).expect("valid rules")
}

/// A random hand played `plies` steps in (draws and passes included), then
/// on to the next decision (a mover with a play), with what every seat has
/// seen; `None` if it ended first.
fn prefix(rules: &FullRules, seed: u64, plies: u64) -> Option<(FivesPosition, Seen)> {
    let mut rng = keyed_rng(seed, plies, 0, b"testblf1", 0);
    let hands = random_deal(rules, &mut rng);
    let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    let mut seen = Seen::default();
    let mut list = ActionList::default();
    let mut step = 0;
    loop {
        if pos.end.is_some() {
            return None;
        }
        let stuck = !pos.can_play(rules, pos.mover);
        if step >= plies && !stuck {
            break;
        }
        step += 1;
        if stuck {
            seen.stuck(rules, &pos);
            if pos.must_pass(rules) {
                pos.pass(rules);
            } else {
                let tiles: Vec<u8> = bits(pos.boneyard).collect();
                let seat = pos.mover;
                pos.draw(tiles[below(&mut rng, tiles.len() as u64) as usize]);
                seen.drew(seat);
            }
            continue;
        }
        pos.actions(rules, &mut list);
        // Mostly the heaviest play, so that seats run out of suits.
        let i = if below(&mut rng, 4) == 0 {
            below(&mut rng, list.len() as u64) as usize
        } else {
            0
        };
        let a = list.as_slice()[i];
        seen.played(&pos, a);
        pos.play(rules, a);
    }
    pos.end.is_none().then_some((pos, seen))
}

fn observe(rules: &FullRules, pos: &FivesPosition, seen: &Seen, seat: u8) -> Observation {
    let (void, pips) = seen.voids();
    Observation::new(rules, pos, seat, &void, &pips)
}

/// Every assignment of the hidden tiles that agrees with `obs`, by brute force.
fn enumerate(obs: &Observation) -> Vec<[u8; 64]> {
    fn rec(tiles: &[u8], obs: &Observation, room: &mut [u8; HOLDERS], at: &mut [u8; 64], out: &mut Vec<[u8; 64]>) {
        let Some((&t, rest)) = tiles.split_first() else {
            out.push(*at);
            return;
        };
        for h in 0..HOLDERS {
            if room[h] > 0 && obs.void[h] >> t & 1 == 0 {
                room[h] -= 1;
                at[t as usize] = h as u8;
                rec(rest, obs, room, at, out);
                room[h] += 1;
            }
        }
        at[t as usize] = u8::MAX;
    }
    let tiles: Vec<u8> = bits(obs.hidden).collect();
    let mut out = Vec::new();
    rec(&tiles, obs, &mut obs.size.clone(), &mut [u8::MAX; 64], &mut out);
    out
}

#[test]
fn the_true_deal_always_agrees_with_the_voids() {
    for (set, seats) in [(6, 2), (6, 3), (6, 4), (4, 2), (9, 4)] {
        let r = rules(set, seats);
        let mut voids = 0;
        for seed in 0..400u64 {
            let Some((pos, seen)) = prefix(&r, seed, seed % 40) else {
                continue;
            };
            let (void, _) = seen.voids();
            // (The mover may hold the tile it just drew: only the others'
            // voids hold at its decision.)
            for s in (0..seats as usize).filter(|&s| s != pos.mover as usize) {
                assert_eq!(
                    pos.hands[s] & void[s],
                    0,
                    "double-{set}, {seats} seats, seed {seed}, seat {s}"
                );
                voids += (void[s] != 0) as u32;
            }
            let obs = observe(&r, &pos, &seen, pos.mover);
            assert!(Constraints::new(&obs).count() > 0);
        }
        assert!(voids > 20, "double-{set}, {seats} seats: {voids} voids seen");
    }
}

#[test]
fn exact_counts_and_marginals_equal_enumeration() {
    let mut compared = 0;
    let mut with_voids = 0;
    for (set, seats) in [(3, 2), (3, 4), (4, 2), (4, 4)] {
        let r = rules(set, seats);
        let mut m: Marginals = [[0.0; HOLDERS]; 64];
        for seed in 0..1500u64 {
            let Some((pos, seen)) = prefix(&r, seed, seed % 16) else {
                continue;
            };
            let obs = observe(&r, &pos, &seen, pos.mover);
            // Keep brute force affordable.
            if obs.hidden.count_ones() > 11 {
                continue;
            }
            let all = enumerate(&obs);
            let mut c = Constraints::new(&obs);
            assert_eq!(c.count(), all.len() as u128, "double-{set}, {seats} seats, seed {seed}");
            c.marginals(&mut m);
            for t in bits(obs.hidden) {
                for h in 0..HOLDERS {
                    let n = all.iter().filter(|a| a[t as usize] == h as u8).count();
                    let want = n as f64 / all.len() as f64;
                    assert!(
                        (m[t as usize][h] - want).abs() < 1e-12,
                        "double-{set}, {seats} seats, seed {seed}: P(tile {t} at {h}) = {} vs {want}",
                        m[t as usize][h]
                    );
                }
            }
            compared += 1;
            with_voids += obs.void.iter().any(|&v| v & obs.hidden != 0) as u32;
        }
    }
    assert!(compared > 2000, "{compared} prefixes compared");
    assert!(with_voids > 300, "{with_voids} prefixes with voids");
}

/// The upper 0.999 quantile of chi-square with `k` degrees of freedom
/// (Wilson-Hilferty).
fn chi2_999(k: f64) -> f64 {
    let z = 3.090;
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

#[test]
fn sampled_worlds_follow_the_exact_distribution() {
    let mut tested = 0;
    for (set, seats) in [(3, 2), (4, 2), (3, 4), (6, 4)] {
        let r = rules(set, seats);
        for seed in 0..300u64 {
            let Some((pos, seen)) = prefix(&r, seed, 3 + seed % 20) else {
                continue;
            };
            let obs = observe(&r, &pos, &seen, pos.mover);
            if obs.hidden.count_ones() > 10 {
                continue;
            }
            let all = enumerate(&obs);
            if !(3..=60).contains(&all.len()) || !obs.void.iter().any(|&v| v & obs.hidden != 0) {
                continue;
            }
            let mut c = Constraints::new(&obs);
            let mut rng = keyed_rng(seed, 0, 0, b"testchi2", 0);
            let n = 200 * all.len();
            let mut counts = vec![0u64; all.len()];
            let mut at = [0u8; 64];
            for _ in 0..n {
                c.sample(&mut rng, &mut at).expect("a consistent world");
                let i = all
                    .iter()
                    .position(|a| bits(obs.hidden).all(|t| a[t as usize] == at[t as usize]))
                    .expect("every sample agrees with the observation");
                counts[i] += 1;
            }
            let e = n as f64 / all.len() as f64;
            let chi2: f64 = counts.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
            let k = (all.len() - 1) as f64;
            assert!(
                chi2 < chi2_999(k),
                "double-{set}, {seats} seats, seed {seed}: chi2 {chi2:.1} on {k} d.o.f."
            );
            tested += 1;
            if tested >= 40 {
                return;
            }
        }
    }
    panic!("only {tested} small cases found");
}

#[test]
fn a_seeded_sampler_is_reproducible_and_keeps_what_the_seat_holds() {
    let r = rules(6, 4);
    let models = [FullTarget::Searcher; 4];
    for belief in Belief::ALL {
        for seed in 0..30u64 {
            let Some((pos, seen)) = prefix(&r, seed, 4 + seed % 12) else {
                continue;
            };
            let seat = pos.mover;
            let run = |stream: u64| {
                let mut rng: ChaCha20Rng = keyed_rng(seed, stream, 0, b"testsmpl", 0);
                let mut s = WorldSampler::default();
                let source = WorldSource {
                    belief,
                    models: &models,
                    worlds: 8,
                };
                s.prepare(&r, &pos, &seen, source, &mut rng);
                let mut out = Vec::new();
                s.worlds(8, &mut rng, &mut out);
                out
            };
            let a = run(1);
            assert_eq!(a, run(1), "{belief:?}, seed {seed}");
            let union = |p: &FivesPosition| p.hands.iter().fold(p.boneyard, |a, h| a | h);
            let (void, _) = seen.voids();
            for w in &a {
                assert_eq!(w.hands[seat as usize], pos.hands[seat as usize]);
                assert_eq!(w.board, pos.board);
                assert_eq!(union(w), union(&pos));
                for s in 0..4 {
                    assert_eq!(w.hands[s].count_ones(), pos.hands[s].count_ones());
                    if matches!(belief, Belief::Constraints | Belief::Model) && s != seat as usize {
                        assert_eq!(w.hands[s] & void[s], 0, "{belief:?}, seed {seed}");
                    }
                }
                assert_eq!(w.boneyard.count_ones(), pos.boneyard.count_ones());
            }
        }
    }
}

#[test]
fn without_voids_constraints_is_uniform() {
    // No seat has drawn or passed: the exact marginals are the hand sizes'
    // shares, as under `uniform`.
    let r = rules(6, 2);
    let hands = random_deal(&r, &mut keyed_rng(1, 0, 0, b"testunif", 0));
    let pos = FivesPosition::deal(&r, hands, Opening::of(&r, &hands, None));
    let obs = Observation::new(&r, &pos, 0, &[0; 4], &[0; 4]);
    let mut m: Marginals = [[0.0; HOLDERS]; 64];
    Constraints::new(&obs).marginals(&mut m);
    for t in bits(obs.hidden) {
        assert!((m[t as usize][1] - 7.0 / 21.0).abs() < 1e-15);
        assert!((m[t as usize][BONEYARD] - 14.0 / 21.0).abs() < 1e-15);
    }
    // C(21, 7) splits.
    assert_eq!(Constraints::new(&obs).count(), 116_280);
}

#[test]
fn the_model_belief_learns_what_a_scorer_did_not_play() {
    // Two seats: the observer (seat 0) plays at random, seat 1 is a scorer.
    // Over many histories the model belief's marginals place the hidden
    // tiles better than the exact constraints (it also uses the scorer's
    // plays), and the true world always has a positive weight.
    let r = rules(6, 2);
    let scorer = FullTarget::Thesis(TargetKind::Scorer);
    let models = [FullTarget::Searcher, scorer, FullTarget::Searcher, FullTarget::Searcher];
    let (mut model_loss, mut exact_loss, mut n) = (0.0, 0.0, 0);
    let mut m: Marginals = [[0.0; HOLDERS]; 64];
    for seed in 0..150u64 {
        let mut rng = keyed_rng(seed, 0, 0, b"testmodl", 0);
        let hands = random_deal(&r, &mut rng);
        let mut pos = FivesPosition::deal(&r, hands, Opening::of(&r, &hands, None));
        let mut seen = Seen::default();
        let mut list = ActionList::default();
        for _ in 0..(6 + seed % 10) {
            if pos.end.is_some() {
                break;
            }
            if !pos.can_play(&r, pos.mover) {
                seen.stuck(&r, &pos);
                let seat = pos.mover;
                if pos.must_pass(&r) {
                    pos.pass(&r);
                } else {
                    let tiles: Vec<u8> = bits(pos.boneyard).collect();
                    pos.draw(tiles[below(&mut rng, tiles.len() as u64) as usize]);
                    seen.drew(seat);
                }
                continue;
            }
            pos.actions(&r, &mut list);
            let i = if pos.mover == 1 {
                full::fixed_choice(&r, scorer, &pos, list.as_slice()).unwrap()
            } else {
                below(&mut rng, list.len() as u64) as usize
            };
            let a = list.as_slice()[i];
            seen.played(&pos, a);
            pos.play(&r, a);
        }
        if pos.end.is_some() || pos.mover != 0 {
            continue;
        }
        assert!(model_weight(&r, &seen, &pos, 0, &models) > 0.0, "seed {seed}");
        let mut s = WorldSampler::default();
        let source = WorldSource {
            belief: Belief::Model,
            models: &models,
            worlds: 32,
        };
        s.prepare(&r, &pos, &seen, source, &mut rng);
        let ess = s.ess().expect("model reports its effective sample size");
        assert!(ess > 0.0 && ess <= 256.0 + 1e-9, "ess {ess}");
        s.marginals(&mut m);
        let obs = *s.observation();
        let truth = obs.holders_in(&pos);
        model_loss += scores(&obs, &m, &truth).0;
        let source = WorldSource {
            belief: Belief::Constraints,
            models: &models,
            worlds: 32,
        };
        s.prepare(&r, &pos, &seen, source, &mut rng);
        s.marginals(&mut m);
        exact_loss += scores(&obs, &m, &truth).0;
        n += 1;
    }
    assert!(n > 60, "{n} histories");
    let (model_loss, exact_loss) = (model_loss / n as f64, exact_loss / n as f64);
    eprintln!("log loss over {n} scorer histories: model {model_loss:.4}, constraints {exact_loss:.4}");
    assert!(
        model_loss < exact_loss,
        "model {model_loss} vs constraints {exact_loss}"
    );
}
