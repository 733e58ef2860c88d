//! Integration tests of the search core (one test binary, one module per area).

mod board;
mod deals;
mod determinism;
mod features;
mod games;
mod pruning;
mod rules;
mod search;
mod worlds;

use engine::{Deal, Rules, RulesConfig};

/// The thesis rules.
pub fn thesis() -> Rules {
    Rules::thesis()
}

/// A rule set from its parts, which must be valid.
pub fn rules(set: u8, hand: u8, boneyard: u8) -> Rules {
    Rules::new(RulesConfig {
        set,
        hand,
        boneyard,
        ..RulesConfig::default()
    })
    .expect("valid rules")
}

/// A tile set from names such as ["00", "13"].
pub fn tiles(rules: &Rules, names: &[&str]) -> u64 {
    names
        .iter()
        .map(|n| {
            let b = n.as_bytes();
            let t = rules.tile_index(b[0] - b'0', b[1] - b'0').expect("a tile of the set");
            1u64 << t
        })
        .fold(0, |a, b| a | b)
}

pub fn deal(rules: &Rules, state: u64) -> Deal {
    Deal::from_index(rules, state).expect("state in range")
}
