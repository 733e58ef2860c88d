//! Seed 002's DominAI: its matrices against the exact belief, and its player.

use engine::full::{
    Constraints, DominaiMatrices, FivesPosition, FullAgent, FullConfig, FullEngine, FullRules, FullTarget, HOLDERS,
    Marginals, MatchOptions, Observation, SearchSettings, Seen, hand_decisions, play_match_with, random_deal, scores,
    tiles_of,
};
use engine::seed::keyed_rng;
use engine::{Belief, TargetKind};

/// Decisions of seeded hands played by `defender` in every seat (which
/// runs seats out of suits): the position and what was seen.
fn decisions(rules: &FullRules, hands: u64) -> Vec<(FivesPosition, Seen)> {
    let defender = FullTarget::Thesis(TargetKind::Defender);
    let mut out = Vec::new();
    for d in 0..hands {
        let mut rng = keyed_rng(d, 0, 0, b"testdomi", 0);
        let hands = random_deal(rules, &mut rng);
        out.extend(hand_decisions(rules, hands, defender, &mut rng));
    }
    out
}

#[test]
fn dominai_marginals_are_proper_and_no_better_than_the_exact_ones() {
    for seats in [4u8, 2] {
        let rules = FullRules::new(FullConfig::all_fives(seats)).unwrap();
        let (mut exact_loss, mut dominai_loss, mut mad, mut tv, mut cells, mut tiles, mut n) =
            (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0);
        let (mut e, mut d): (Marginals, Marginals) = ([[0.0; HOLDERS]; 64], [[0.0; HOLDERS]; 64]);
        for (pos, seen) in decisions(&rules, 60) {
            let (v, p) = seen.voids();
            let obs = Observation::new(&rules, &pos, pos.mover, &v, &p);
            Constraints::new(&obs).marginals(&mut e);
            let m = DominaiMatrices::new(&rules, &obs);
            m.marginals(&mut d);
            for t in tiles_of(obs.hidden) {
                let row = &d[t as usize];
                assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9, "a row sums to 1");
                let mut dist = 0.0;
                for h in 0..HOLDERS {
                    assert!((0.0..=1.0 + 1e-12).contains(&row[h]));
                    // Never on a holder that cannot have the tile.
                    if obs.size[h] == 0 || obs.void[h] >> t & 1 == 1 {
                        assert_eq!(row[h], 0.0, "tile {t}, holder {h}");
                    }
                    mad += (row[h] - e[t as usize][h]).abs();
                    dist += (row[h] - e[t as usize][h]).abs();
                    cells += 1.0;
                }
                tv += dist / 2.0;
                tiles += 1.0;
            }
            let truth = obs.holders_in(&pos);
            exact_loss += scores(&obs, &e, &truth).0;
            dominai_loss += scores(&obs, &d, &truth).0;
            n += 1;
        }
        let (exact_loss, dominai_loss) = (exact_loss / n as f64, dominai_loss / n as f64);
        eprintln!(
            "{seats} seats, {n} decisions: log loss exact {exact_loss:.4}, dominai {dominai_loss:.4}; \
             mean |difference| per cell {:.4}, total variation per tile {:.4}",
            mad / cells,
            tv / tiles
        );
        assert!(n > 500);
        assert!(exact_loss <= dominai_loss + 1e-9, "{exact_loss} vs {dominai_loss}");
    }
}

#[test]
fn dominai_passes_its_corrections_to_a_fixpoint() {
    let rules = FullRules::new(FullConfig::all_fives(4)).unwrap();
    let mut corrected = 0;
    for (pos, seen) in decisions(&rules, 40) {
        let (v, p) = seen.voids();
        let obs = Observation::new(&rules, &pos, pos.mover, &v, &p);
        let m = DominaiMatrices::new(&rules, &obs);
        corrected += (m.rounds > 1) as u32;
        for h in 0..HOLDERS {
            if !m.profiled[h] {
                continue;
            }
            // At the fixpoint neither correction has anything left to do.
            let certain: u64 = tiles_of(m.binary[h])
                .filter(|&t| m.accumulated[t as usize] == 1)
                .fold(0, |s, t| s | 1 << t);
            if m.indeterminate[h] == 0 {
                assert_eq!(m.binary[h], certain);
            }
            // The true holder is never ruled out.
            assert_eq!(
                pos.hands.get(h).copied().unwrap_or(pos.boneyard) & obs.hidden & !m.binary[h],
                0
            );
        }
    }
    assert!(corrected > 10, "{corrected} decisions needed a correction");
}

fn dominai() -> FullAgent {
    FullAgent::Search(SearchSettings {
        engine: FullEngine::Dominai,
        depth: 254,
        budget: 20_000,
        worlds: 0,
        learned: false,
        belief: Belief::Dominai,
    })
}

#[test]
fn dominai_plays_partnership_all_fives_reproducibly_and_beats_the_heaviest_tile() {
    let rules = FullRules::new(FullConfig::all_fives(4)).unwrap();
    let heaviest = FullAgent::Fixed(FullTarget::Heaviest);
    let agents = [dominai(), heaviest, dominai(), heaviest];
    let opts = MatchOptions::default();
    let a = play_match_with(&rules, 5, 123_456, 1, &agents, 0, &opts).unwrap();
    assert_eq!(a, play_match_with(&rules, 5, 123_456, 1, &agents, 0, &opts).unwrap());
    assert!(a.hands[0].nodes > 0);
    let (mut won, mut lost, mut n) = (0, 0, 0);
    let deals = engine::full::deal_count(&rules).unwrap();
    for d in 0..100u64 {
        let m = play_match_with(&rules, 5, d * 1_000_003 % deals, 1, &agents, 0, &opts).unwrap();
        won += (m.totals[0] > m.totals[1]) as u32;
        lost += (m.totals[0] < m.totals[1]) as u32;
        n += 1;
    }
    eprintln!("dominai vs heaviest, {n} partnership hands: won {won}, lost {lost}");
    assert!(won > lost, "won {won}, lost {lost}");
}

#[test]
fn dominai_plays_team_hands_from_its_own_hand_and_beats_the_heaviest_tile() {
    use engine::full::{Preset, deal_from_index, play_open_hand};
    let rules = FullRules::preset(Preset::Team);
    let heaviest = FullAgent::Fixed(FullTarget::Heaviest);
    let agents = [dominai(), heaviest, dominai(), heaviest];
    let deals = engine::full::deal_count(&rules).unwrap();
    let (mut won, mut lost, mut nodes) = (0, 0, 0);
    for d in 0..200u64 {
        let hands = deal_from_index(&rules, d * 7_919_001 % deals).unwrap();
        let mut rngs = std::array::from_fn(|s| keyed_rng(1, d, 0, b"testteam", s as u64));
        let h = play_open_hand(&rules, hands, &agents, &mut rngs);
        let mut again = std::array::from_fn(|s| keyed_rng(1, d, 0, b"testteam", s as u64));
        assert_eq!(h, play_open_hand(&rules, hands, &agents, &mut again), "deal {d}");
        won += (h.returns[0] > 0) as u32;
        lost += (h.returns[0] < 0) as u32;
        nodes += h.nodes;
    }
    eprintln!("dominai vs heaviest, 200 team hands: won {won}, lost {lost}, {nodes} nodes");
    assert!(nodes > 0);
    assert!(won > lost, "won {won}, lost {lost}");
}
