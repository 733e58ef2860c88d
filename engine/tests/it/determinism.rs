use engine::{
    GameConfig, GameRecord, InfoSource, LocalTable, Move, Observability, PlayerEngine, SearchConfig, Searcher,
    SharedTable, TargetKind, WorldCount, play_game,
};

use crate::thesis;

fn grid(states: impl Iterator<Item = u64> + Clone) -> Vec<GameConfig> {
    let mut out = Vec::new();
    for observability in [Observability::Full, Observability::Partial] {
        for engine in [PlayerEngine::MStar, PlayerEngine::Expectimax] {
            for target in TargetKind::ALL {
                for state in states.clone() {
                    for repeat in 1..=2 {
                        out.push(GameConfig {
                            seed: 2014,
                            starting_state: state,
                            repeat,
                            engine,
                            target,
                            observability,
                        });
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_same_coordinates_give_the_same_record_cold_or_warm() {
    let r = thesis();
    let games = grid((0..4200).step_by(101));
    let mut warm = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    let first: Vec<GameRecord> = games
        .iter()
        .map(|g| play_game(&mut warm, g, InfoSource::Oracle).unwrap())
        .collect();
    // Played again in reverse order on the warm table, and each on a cold table.
    for (g, want) in games.iter().zip(&first).rev() {
        assert_eq!(&play_game(&mut warm, g, InfoSource::Oracle).unwrap(), want, "{g:?}");
    }
    for (g, want) in games.iter().zip(&first).step_by(13) {
        let mut cold = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
        assert_eq!(&play_game(&mut cold, g, InfoSource::Oracle).unwrap(), want, "{g:?}");
    }
}

#[test]
fn one_thread_or_many_give_the_same_records() {
    let r = thesis();
    let config = SearchConfig {
        worlds: WorldCount::Sample(5),
        ..SearchConfig::default()
    };
    let games = grid((0..4200).step_by(61));
    let mut one = Searcher::new(r.clone(), config, LocalTable::new());
    let want: Vec<GameRecord> = games
        .iter()
        .map(|g| play_game(&mut one, g, InfoSource::Oracle).unwrap())
        .collect();
    let shared = SharedTable::new(8);
    let threads = 3;
    let got: Vec<Vec<(usize, GameRecord)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let (r, games, shared) = (&r, &games, &shared);
                scope.spawn(move || {
                    let mut s = Searcher::new(r.clone(), config, shared);
                    games
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == k)
                        .map(|(i, g)| (i, play_game(&mut s, g, InfoSource::Oracle).unwrap()))
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut n = 0;
    for (i, rec) in got.into_iter().flatten() {
        assert_eq!(rec, want[i], "{:?}", games[i]);
        n += 1;
    }
    assert_eq!(n, games.len());
}

fn draws(rec: &GameRecord) -> Vec<u8> {
    rec.moves
        .iter()
        .filter_map(|m| match *m {
            Move::Draw { tile, .. } => Some(tile),
            _ => None,
        })
        .collect()
}

#[test]
fn every_engine_faces_the_same_boneyard_order() {
    let r = thesis();
    let mut s = Searcher::new(r.clone(), SearchConfig::default(), LocalTable::new());
    let mut differ_by_repeat = 0;
    for state in (0..4200).step_by(37) {
        let mut orders: Vec<Vec<u8>> = Vec::new();
        for g in grid(std::iter::once(state)).iter().filter(|g| g.repeat == 1) {
            orders.push(draws(&play_game(&mut s, g, InfoSource::Oracle).unwrap()));
        }
        // Draws come off one shuffled boneyard: each sequence is a prefix of the longest.
        let longest = orders.iter().max_by_key(|o| o.len()).unwrap().clone();
        for o in &orders {
            assert_eq!(&longest[..o.len()], &o[..], "state {state}");
        }
        let g2 = GameConfig {
            repeat: 2,
            ..grid(std::iter::once(state))[0]
        };
        let g1 = GameConfig { repeat: 1, ..g2 };
        let (a, b) = (
            draws(&play_game(&mut s, &g1, InfoSource::Oracle).unwrap()),
            draws(&play_game(&mut s, &g2, InfoSource::Oracle).unwrap()),
        );
        differ_by_repeat += (!a.is_empty() && !b.is_empty() && a[0] != b[0]) as u32;
    }
    assert!(
        differ_by_repeat > 5,
        "repeats should shuffle the boneyard differently ({differ_by_repeat})"
    );
}

#[test]
fn a_capped_table_empties_itself_and_changes_no_result() {
    use engine::{
        GameConfig, InfoSource, LocalTable, Observability, PlayerEngine, Rules, SearchConfig, Searcher, TargetKind,
        ValueStore, play_game,
    };
    let rules = Rules::thesis();
    let mut big = Searcher::new(rules.clone(), SearchConfig::default(), LocalTable::new());
    let mut tiny = Searcher::new(rules.clone(), SearchConfig::default(), LocalTable::with_cap(500));
    let mut most = 0;
    for st in (0..4200).step_by(97) {
        for observability in [Observability::Full, Observability::Partial] {
            let g = GameConfig {
                seed: 3,
                starting_state: st,
                repeat: 1,
                engine: PlayerEngine::MStar,
                target: TargetKind::Scorer,
                observability,
            };
            let a = play_game(&mut big, &g, InfoSource::Bayes).unwrap();
            let b = play_game(&mut tiny, &g, InfoSource::Bayes).unwrap();
            assert_eq!(a, b, "state {st}: the table's cap changed the game");
            most = most.max(tiny.store().len());
            assert!(tiny.store().len() <= 500);
        }
    }
    assert!(
        big.store().len() > 500,
        "the uncapped table outgrew the cap, so the capped one emptied itself"
    );
    assert!(most > 400, "the capped table filled up ({most})");
}

/// Peak resident memory of this process, from /proc.
fn peak_rss_mb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

#[test]
fn a_deep_double_six_search_stays_within_the_table_cap() {
    // One double-6 game, Expectimax 6 turns deep over 8 sampled worlds: its
    // table reached 4 GB when it could grow without bound.
    use engine::{
        DEFAULT_TABLE_CAP, DepthLimit, GameConfig, InfoSource, LocalTable, Observability, PlayerEngine, Rules,
        RulesConfig, SearchConfig, Searcher, TargetKind, ValueStore, WorldCount, play_game,
    };
    let rules = Rules::new(RulesConfig {
        set: 6,
        hand: 7,
        boneyard: 14,
        ..RulesConfig::default()
    })
    .unwrap();
    let config = SearchConfig {
        worlds: WorldCount::Sample(8),
        depth: DepthLimit::Turns(6),
        ..SearchConfig::default()
    };
    let mut s = Searcher::new(rules, config, LocalTable::new());
    let g = GameConfig {
        seed: 1,
        starting_state: 0,
        repeat: 1,
        engine: PlayerEngine::Expectimax,
        target: TargetKind::Scorer,
        observability: Observability::Partial,
    };
    play_game(&mut s, &g, InfoSource::Oracle).unwrap();
    assert!(s.store().len() <= DEFAULT_TABLE_CAP);
    let mb = peak_rss_mb();
    assert!(mb < 1024, "peak RSS {mb} MB");
}
