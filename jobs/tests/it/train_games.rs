//! What a training run's games are: All Fives matches (`train.to`) and
//! the population's `past` networks.

use jobs::train::{TrainSpec, read_train};

use crate::train::{TINY, TINY_FIVES, decided, train};

/// `train.to`: All Fives' self-play, gate and evaluation play matches to
/// that many points (M* in the population, as an anchor and as the search
/// of the searched share, hand after hand); each row's outcome is its
/// side's match return (1 or -1 with two sides); the same networks on 1
/// and 2 threads; a match for block is refused.
#[test]
fn all_fives_trains_on_matches() {
    let text = TINY_FIVES
        .replacen("game = \"all-fives\"", "game = \"all-fives\"\nto = 25", 1)
        .replacen("games = 120\nshard_games = 60", "games = 30\nshard_games = 15", 1)
        .replace("pairs = 20", "pairs = 6");
    let spec = TrainSpec::from_toml(&text).unwrap();
    let one_hand = TrainSpec::from_toml(&text.replacen("\nto = 25", "", 1)).unwrap();
    assert_ne!(spec.id(), one_hand.id());
    assert_eq!(
        TrainSpec::from_toml(&text.replacen("to = 25", "to = 0", 1))
            .unwrap()
            .id(),
        one_hand.id(),
        "to = 0 is one hand, and one-hand specs keep their ids"
    );
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&spec, dir.path(), 2, None).unwrap();
    let rows = read_train(&dir.path().join("gen-001/selfplay/part-00000.parquet")).unwrap();
    assert!(
        rows.iter().all(|r| r.outcome == 1.0 || r.outcome == -1.0),
        "match returns"
    );
    // Later hands' rows see the match's points so far.
    let pieces = spec.state().encoding_pieces(full::spiel::Encoding::Rich);
    let at: usize = pieces
        .iter()
        .take_while(|(name, _)| *name != "totals")
        .map(|(_, shape)| shape.iter().product::<usize>())
        .sum();
    assert!(
        rows.iter().any(|r| r.observation[at] + r.observation[at + 1] > 0.0),
        "a match plays past its first hand"
    );
    let again = tempfile::tempdir().unwrap();
    assert_eq!(
        decided(&train(&spec, again.path(), 1, None).unwrap()),
        decided(&summary)
    );
    for (from, to, want) in [
        ("to = 25", "to = 100001", "train.to = 100001"),
        ("game = \"all-fives\"", "game = \"block\"", "All Fives only"),
    ] {
        let bad = text.replacen(from, to, 1).replacen("mstar:60x2", "random", 9);
        let err = TrainSpec::from_toml(&bad).unwrap_err().to_string();
        assert!(err.contains(want) && err.contains("train.to"), "{to}: {err}");
    }
}

/// `population = ["past"]`: the population's share of games sets the
/// network against one of the run's earlier best networks (the current one
/// in the first generation), whose side writes no rows; the same networks
/// on 1 and 2 threads; `past` is no anchor.
#[test]
fn the_population_s_past_networks_play_a_share_of_self_play() {
    let text = TINY
        .replacen("generations = 2", "generations = 3", 1)
        .replacen(
            "population_share = 0.5",
            "population_share = 0.5\npopulation = [\"past\"]",
            1,
        )
        .replacen("[train.gate]\n", "[train.gate]\nkeep = \"latest\"\n", 1);
    let spec = TrainSpec::from_toml(&text).unwrap();
    assert_eq!(spec.population(), [jobs::train::Fixed::Past]);
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&spec, dir.path(), 2, None).unwrap();
    assert_eq!(summary.generations.len(), 3);
    for g in 1..=3 {
        let rows = read_train(&dir.path().join(format!("gen-00{g}/selfplay/part-00000.parquet"))).unwrap();
        let games: Vec<_> = rows.chunk_by(|a, b| a.game_index == b.game_index).collect();
        let one_sided = games
            .iter()
            .filter(|g| g.iter().all(|r| r.seat % 2 == g[0].seat % 2))
            .count();
        assert!(
            one_sided > games.len() / 5 && one_sided < games.len(),
            "generation {g}: {one_sided} of {} games have one side's rows",
            games.len()
        );
    }
    let again = tempfile::tempdir().unwrap();
    assert_eq!(
        decided(&train(&spec, again.path(), 1, None).unwrap()),
        decided(&summary)
    );
    let err = TrainSpec::from_toml(&text.replacen("\"ismcts:200x4\"", "\"past\"", 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("train.eval.anchors") && err.contains("population only"),
        "{err}"
    );
}
