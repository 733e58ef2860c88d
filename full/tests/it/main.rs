//! The full game's tests: rules and scoring (All Fives, block, team), the
//! searches, beliefs, DominAI and the move predictors.

mod adaptive;
mod alphabeta;
mod belief_prior;
mod beliefs;
mod block_budget;
mod dominai;
mod encode_slice;
mod eval_leaf;
mod external;
mod fives;
mod fives_view;
mod game;
mod guided;
mod open_ismcts;
mod predict;
mod resample;
mod rich_history;
mod thesis;
mod threads;
mod value_leaves;

/// The shipped model files, read once a test.
mod shipped {
    use std::path::Path;
    use std::sync::Arc;

    use full::{FullRules, Preset};

    /// `models/FILE`.
    pub fn model(file: &str) -> Arc<net::Model> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models").join(file);
        Arc::new(net::Model::load(&path).expect("a shipped model"))
    }

    /// Each (preset, file): its rules, the model and its encoding.
    pub fn models(files: &[(Preset, &str)]) -> Vec<(Preset, FullRules, Arc<net::Model>, full::spiel::Encoding)> {
        files
            .iter()
            .map(|&(preset, file)| {
                let m = model(file);
                let encoding = m.meta.encoding.parse().unwrap();
                (preset, FullRules::preset(preset), m, encoding)
            })
            .collect()
    }
}
