use engine::{Belief, Unseen, WorldCount, Worlds};
use rand_core::SeedableRng;

use crate::{thesis, tiles};

#[test]
fn all_worlds_are_the_splits_in_lexicographic_order() {
    let r = thesis();
    let unseen = tiles(&r, &["00", "01", "02", "03", "22", "23", "33"]);
    let mut w = Worlds::default();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    w.fill(
        &r,
        Unseen {
            tiles: unseen,
            target_size: 3,
            void: 0,
        },
        WorldCount::All,
        Belief::Uniform,
        &mut rng,
    );
    let list = w.as_slice();
    assert_eq!(list.len(), 35);
    assert_eq!(list[0].target, tiles(&r, &["00", "01", "02"]));
    assert_eq!(list[1].target, tiles(&r, &["00", "01", "03"]));
    assert_eq!(list[34].target, tiles(&r, &["22", "23", "33"]));
    let mut seen = std::collections::HashSet::new();
    for world in list {
        assert_eq!(world.target.count_ones(), 3);
        assert_eq!(world.target | world.boneyard, unseen);
        assert_eq!(world.target & world.boneyard, 0);
        assert_eq!(world.weight, 1.0);
        assert!(seen.insert(world.target));
    }
    assert!(list.windows(2).all(|p| {
        let a: Vec<u32> = (0..10).filter(|t| p[0].target >> t & 1 == 1).collect();
        let b: Vec<u32> = (0..10).filter(|t| p[1].target >> t & 1 == 1).collect();
        a < b
    }));
}

#[test]
fn sampled_worlds_are_distinct_reproducible_and_among_all() {
    let r = crate::rules(6, 7, 14);
    let unseen = r.all_tiles() & !0b111_1111;
    let mut all = Worlds::default();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
    // 21 unseen tiles, the target holds 7: 116,280 worlds; sample 50.
    let mut a = Worlds::default();
    a.fill(
        &r,
        Unseen {
            tiles: unseen,
            target_size: 7,
            void: 0,
        },
        WorldCount::Sample(50),
        Belief::Uniform,
        &mut rng,
    );
    let mut b = Worlds::default();
    let mut rng2 = rand_chacha::ChaCha20Rng::seed_from_u64(9);
    b.fill(
        &r,
        Unseen {
            tiles: unseen,
            target_size: 7,
            void: 0,
        },
        WorldCount::Sample(50),
        Belief::Uniform,
        &mut rng2,
    );
    assert_eq!(a.as_slice(), b.as_slice());
    assert_eq!(a.as_slice().len(), 50);
    let targets: std::collections::HashSet<u64> = a.as_slice().iter().map(|w| w.target).collect();
    assert_eq!(targets.len(), 50);
    for w in a.as_slice() {
        assert_eq!(w.target.count_ones(), 7);
        assert_eq!(w.target & !unseen, 0);
    }
    // Asking for more worlds than exist gives all of them.
    let small = tiles(&r, &["00", "01", "02", "03", "04"]);
    all.fill(
        &r,
        Unseen {
            tiles: small,
            target_size: 2,
            void: 0,
        },
        WorldCount::Sample(1000),
        Belief::Uniform,
        &mut rng,
    );
    assert_eq!(all.as_slice().len(), 10);
}
