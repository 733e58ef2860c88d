//! The network-guided search (`full::spiel::guided_decide`, a net agent's
//! `simulations`): on the shipped block and team networks, every decision
//! is legal, the root's visits add up to the simulations, and a decision is
//! a function of the model, the state, the seat's view and the stream.

use std::sync::Arc;

use full::spiel::{
    ALPHAZERO_NOISE, Guided, GuidedBelief, GuidedTree, NetPolicy, PolicyError, SpielState, guided_decide,
};
use full::{FullRules, Preset};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::shipped::model;

/// The shipped block and team networks, with their rules and encodings.
fn shipped() -> Vec<(Preset, FullRules, Arc<net::Model>, full::spiel::Encoding)> {
    crate::shipped::models(&[
        (Preset::Block, "train-block.safetensors"),
        (Preset::Team, "train-team.safetensors"),
    ])
}

/// A hand dealt from `seed`, then `plays` random plays.
fn state(rules: &FullRules, seed: u64, plays: usize) -> SpielState {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut s = SpielState::new(rules.clone(), 0);
    while s.current_player() == full::spiel::CHANCE {
        s.apply_chance(&mut rng).unwrap();
    }
    for _ in 0..plays {
        if s.is_terminal() {
            break;
        }
        let legal = s.legal_actions();
        s.apply(legal[engine::seed::below_u32(&mut rng, legal.len() as u32) as usize])
            .unwrap();
    }
    s
}

#[test]
fn guided_decisions_are_legal_visit_counted_and_repeatable() {
    for (preset, rules, m, encoding) in shipped() {
        let mut tree = GuidedTree::default();
        let mut visits = Vec::new();
        for (k, plays) in [0usize, 3, 6, 9].into_iter().enumerate() {
            let s = state(&rules, 40 + k as u64, plays);
            if s.is_terminal() {
                continue;
            }
            let p = s.current_player() as u8;
            let legal = s.legal_actions();
            let decide = |tree: &mut GuidedTree, seed: u64| {
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                let how = Guided {
                    belief: GuidedBelief::Constraints,
                    simulations: 200,
                    noise: None,
                    adaptive: false,
                };
                guided_decide(tree, &m, encoding, &s, p, how, &mut rng).unwrap()
            };
            let a = decide(&mut tree, 7);
            assert!(legal.contains(&a), "{preset:?}: {a} is not among {legal:?}");
            tree.root_visits(&legal, &mut visits);
            if legal.len() > 1 {
                assert_eq!(
                    visits.iter().sum::<u32>(),
                    200,
                    "{preset:?}: every simulation passes a root play"
                );
                let most = *visits.iter().max().unwrap();
                assert_eq!(visits[legal.iter().position(|&x| x == a).unwrap()], most);
            }
            // The same stream, a tree that held another search: the same play.
            let _ = decide(&mut tree, 8);
            assert_eq!(decide(&mut tree, 7), a);
        }
    }
}

#[test]
fn a_net_policy_with_simulations_searches_and_refuses_too_many() {
    let rules = FullRules::preset(Preset::Block);
    let m = model("train-block.safetensors");
    let plain = NetPolicy::new(m.clone(), "train-block.safetensors", 0.0).unwrap();
    assert_eq!(
        plain.clone().with_simulations(2_000_000).unwrap_err(),
        PolicyError::Simulations(2_000_000)
    );
    let guided = plain.with_simulations(300).unwrap();
    assert!(guided.name().contains("300 guided simulations"), "{}", guided.name());
    let s = state(&rules, 5, 2);
    let p = s.current_player() as u8;
    let mut a = ChaCha20Rng::seed_from_u64(1);
    let mut b = ChaCha20Rng::seed_from_u64(1);
    let first = guided.decide(&s, p, &mut a).unwrap();
    assert_eq!(guided.decide(&s, p, &mut b).unwrap(), first);
    assert!(s.legal_actions().contains(&first));
}

/// Root noise (self-play's exploration): still a legal play, the same for a
/// stream, and it moves the search: over several streams the root's visits
/// differ from the noiseless search's on the same streams.
#[test]
fn root_noise_is_repeatable_and_moves_the_search() {
    let rules = FullRules::preset(Preset::Team);
    let m = model("train-team.safetensors");
    let encoding = m.meta.encoding.parse().unwrap();
    let s = state(&rules, 11, 4);
    let p = s.current_player() as u8;
    let legal = s.legal_actions();
    assert!(legal.len() > 1);
    let mut tree = GuidedTree::default();
    let mut run = |noise, seed| {
        let how = Guided {
            belief: GuidedBelief::Constraints,
            simulations: 100,
            noise,
            adaptive: false,
        };
        let a = guided_decide(
            &mut tree,
            &m,
            encoding,
            &s,
            p,
            how,
            &mut ChaCha20Rng::seed_from_u64(seed),
        )
        .unwrap();
        let mut visits = Vec::new();
        tree.root_visits(&legal, &mut visits);
        (a, visits)
    };
    let mut moved = 0;
    for seed in 0..6 {
        let noisy = run(Some(ALPHAZERO_NOISE), seed);
        assert!(legal.contains(&noisy.0));
        assert_eq!(run(Some(ALPHAZERO_NOISE), seed), noisy);
        moved += usize::from(run(None, seed).1 != noisy.1);
    }
    assert!(
        moved >= 4,
        "the noise changed the root's visits in {moved} of 6 searches"
    );
}

/// `adaptive`: the play is the whole budget's from the same stream, in
/// fewer simulations over the positions of a few hands, and the policy
/// alone refuses it.
#[test]
fn an_adaptive_search_plays_the_whole_budgets_play_in_fewer_simulations() {
    let (mut full_sims, mut adaptive_sims, mut positions) = (0u32, 0u32, 0);
    for (preset, rules, m, encoding) in shipped() {
        let mut tree = GuidedTree::default();
        for seed in 0..6u64 {
            for plays in [0usize, 2, 4, 6, 8] {
                let s = state(&rules, 100 + seed, plays);
                if s.is_terminal() || s.legal_actions().len() < 2 {
                    continue;
                }
                let p = s.current_player() as u8;
                let legal = s.legal_actions();
                let mut run = |adaptive| {
                    let how = Guided {
                        belief: GuidedBelief::Constraints,
                        simulations: 200,
                        noise: None,
                        adaptive,
                    };
                    let mut rng = ChaCha20Rng::seed_from_u64(seed * 31 + plays as u64);
                    let a = guided_decide(&mut tree, &m, encoding, &s, p, how, &mut rng).unwrap();
                    let mut visits = Vec::new();
                    tree.root_visits(&legal, &mut visits);
                    (a, visits.iter().sum::<u32>())
                };
                let (whole, n_whole) = run(false);
                let (early, n_early) = run(true);
                assert_eq!(early, whole, "{preset:?} seed {seed} after {plays} plays");
                assert_eq!(n_whole, 200);
                assert!(n_early <= 200);
                full_sims += n_whole;
                adaptive_sims += n_early;
                positions += 1;
            }
        }
    }
    eprintln!("adaptive {adaptive_sims} of {full_sims} simulations over {positions} positions");
    assert!(positions >= 20, "{positions} positions");
    assert!(
        adaptive_sims < full_sims * 9 / 10,
        "adaptive {adaptive_sims} of {full_sims} simulations over {positions} positions"
    );
    let plain = NetPolicy::new(model("train-block.safetensors"), "train-block.safetensors", 0.0).unwrap();
    assert_eq!(
        plain.clone().with_adaptive(true).unwrap_err(),
        PolicyError::AdaptiveWithoutSearch
    );
    let guided = plain.with_simulations(100).unwrap().with_adaptive(true).unwrap();
    assert!(guided.name().contains("adaptive"), "{}", guided.name());
}

/// `belief = "policy"`: the worlds come from a pool weighted by the
/// likelihood of the other seats' plays under the network's policy; its
/// decisions are legal, repeatable from the stream, and the pool's
/// effective sample size is below its size once others have played.
/// `head` needs a belief head; neither is taken without simulations.
#[test]
fn guided_decisions_from_a_policy_weighted_pool() {
    for (preset, rules, m, encoding) in shipped() {
        let mut tree = GuidedTree::default();
        let s = state(&rules, 77, 5);
        assert!(s.current_player() >= 0, "{preset:?}: a seat to act");
        let p = s.current_player() as u8;
        let how = Guided {
            belief: GuidedBelief::Policy,
            simulations: 150,
            noise: None,
            adaptive: false,
        };
        let decide = |tree: &mut GuidedTree| {
            let mut rng = ChaCha20Rng::seed_from_u64(5);
            guided_decide(tree, &m, encoding, &s, p, how, &mut rng).unwrap()
        };
        let a = decide(&mut tree);
        assert!(s.legal_actions().contains(&a), "{preset:?}");
        let ess = tree.belief_ess().expect("a pool");
        assert!(ess > 1.0 && ess < 150.0, "{preset:?}: effective sample size {ess}");
        assert_eq!(decide(&mut GuidedTree::default()), a, "{preset:?}");
    }
    let plain = NetPolicy::new(model("train-block.safetensors"), "train-block.safetensors", 0.0).unwrap();
    assert_eq!(
        plain.clone().with_belief(GuidedBelief::Policy).unwrap_err(),
        PolicyError::BeliefWithoutSearch("policy")
    );
    let searched = plain.with_simulations(100).unwrap();
    let e = searched.clone().with_belief(GuidedBelief::Head).unwrap_err();
    assert!(
        e.to_string()
            .contains("train-block.safetensors: belief = \"head\", and it has no belief head"),
        "{e}"
    );
    let policy = searched.with_belief(GuidedBelief::Policy).unwrap();
    assert!(policy.name().contains("policy worlds"), "{}", policy.name());
    assert_eq!("policy".parse::<GuidedBelief>(), Ok(GuidedBelief::Policy));
    assert!(
        "model"
            .parse::<GuidedBelief>()
            .unwrap_err()
            .contains("\"constraints\", \"head\" or \"policy\"")
    );
}
