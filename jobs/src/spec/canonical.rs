//! The spec's canonical JSON, its hash and the experiment id.
//!
//! Written by hand, key by key and variant by variant, so that renaming a
//! Rust field or variant never changes an experiment's hash (and id);
//! `jobs/tests/it/hash.rs` pins the shipped specs' hashes.

use engine::{Belief, Blocked, DepthLimit, Lead, Observability, PlayerEngine, TargetKind, WorldCount};
use full::{FivesBlocked, FivesLead, FullTarget};
use sha2::{Digest, Sha256};

use super::{Spec, StateSet};

impl Spec {
    /// The spec in canonical JSON (what the hash covers).
    ///
    /// Written by hand, key by key and variant by variant, so that renaming a
    /// Rust field or variant never changes an experiment's hash (and id);
    /// `jobs/tests/it/hash.rs` pins it.
    pub fn canonical_json(&self) -> String {
        use std::fmt::Write;
        let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let list = |items: Vec<String>| format!("[{}]", items.join(","));
        let names = |items: Vec<&str>| list(items.into_iter().map(text).collect());
        let g = &self.grid;
        let c = &self.classifier;
        let observability = |o: &Observability| match o {
            Observability::Full => "full",
            Observability::Partial => "partial",
        };
        let target = |t: &FullTarget| match t {
            FullTarget::Thesis(TargetKind::Random) => "random",
            FullTarget::Thesis(TargetKind::Scorer) => "scorer",
            FullTarget::Thesis(TargetKind::Defender) => "defender",
            FullTarget::Heaviest => "heaviest",
            FullTarget::Searcher => "searcher",
        };
        let player_engine = |e: &PlayerEngine| e.name();
        let states = match &g.starting_states {
            StateSet::Range { first, last } => format!("{{\"first\":{first},\"last\":{last}}}"),
            StateSet::List(v) => list(v.iter().map(u64::to_string).collect()),
            StateSet::Spread { count, .. } => format!("{{\"spread\":{count}}}"),
        };
        let worlds = match self.search.worlds {
            WorldCount::All => text("All"),
            WorldCount::Sample(k) => format!("{{\"Sample\":{k}}}"),
        };
        // The thesis's one belief as it always was; a list (a factor) or a
        // full game's beliefs by name (the full game's `uniform` ignores
        // voids since the beliefs came, so its experiments got new ids).
        let variant = |b: &Belief| match b {
            Belief::Uniform => "Uniform",
            Belief::Constraints => "Constraints",
            Belief::Dominai => "Dominai",
            Belief::Model => "Model",
        };
        let belief = match (&self.full, g.belief.as_slice()) {
            (None, [one]) => text(variant(one)),
            _ => names(g.belief.iter().map(|b| b.name()).collect()),
        };
        let depth = match self.search.depth {
            DepthLimit::Unlimited => text("Unlimited"),
            DepthLimit::Turns(d) => format!("{{\"Turns\":{d}}}"),
        };
        let rules = self.canonical_rules();
        // Present only with a rules factor, so that the specs before it keep their hashes.
        let rule_sets = if self.rule_sets.is_empty() {
            String::new()
        } else {
            super::rulesets::canonical(&self.rule_sets, |k| format!("{{{}}}", full_knobs(k)))
        };
        let full_search = self.canonical_full_search();
        // Present only when on, so that the specs written before it keep their hashes.
        let output = if self.output_moves {
            ",\"output\":{\"moves\":true}"
        } else {
            ""
        };
        // Present only with named agents, so that the specs before them keep their hashes.
        let pool = self.pool.as_ref().map_or(String::new(), |p| {
            let table_mb = self.full.as_ref().map_or(full::DEFAULT_TABLE_MB, |f| f.search.table_mb);
            p.canonical(self.stop.as_ref(), table_mb)
        });
        let mut out = String::new();
        let _ = write!(
            out,
            "{{\"name\":{},\"seed\":{},\"output\":{},\
             \"rules\":{},\
             \"grid\":{{\"information_source\":{},\"observability\":{},\"target\":{},\"starting_states\":{},\
             \"engine\":{},\"repeats\":{}}},\
             \"search\":{{\"worlds\":{},\"belief\":{},\"depth\":{}{full_search}}},\
             \"classifier\":{{\"kind\":{},\"samples\":{},\"compare_samples\":{},\"folds\":{},\"holdout\":{}}},\
             \"shard_games\":{}{output}{pool}{rule_sets}}}",
            text(&self.name),
            self.seed,
            text(&self.output),
            rules,
            names(g.information_source.iter().map(|s| s.name()).collect()),
            names(g.observability.iter().map(observability).collect()),
            names(g.target.iter().map(target).collect()),
            states,
            names(g.engine.iter().map(player_engine).collect()),
            g.repeats,
            worlds,
            belief,
            depth,
            text(&c.kind),
            c.samples,
            list(c.compare_samples.iter().map(u64::to_string).collect()),
            c.folds,
            serde_json::to_string(&c.holdout).expect("a finite float serialises"),
            self.shard_games
        );
        out
    }

    /// The thesis's rules as they always were; a full-game preset's knobs
    /// instead, with its match (absent from thesis specs, whose hashes stay).
    fn canonical_rules(&self) -> String {
        let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let r = &self.rules;
        let lead = match r.lead {
            Lead::HighestDouble => "highest-double",
            Lead::Player => "player",
            Lead::Target => "target",
        };
        let blocked = match r.blocked {
            Blocked::Difference => "difference",
            Blocked::None => "none",
        };
        match &self.full {
            None => format!(
                "{{\"set\":{},\"hand\":{},\"boneyard\":{},\"lead\":{},\"blocked\":{}}}",
                r.set,
                r.hand,
                r.boneyard,
                text(lead),
                text(blocked)
            ),
            Some(f) => {
                let to = f.match_to.map_or("null".to_string(), |t| format!("{{\"to\":{t}}}"));
                // Present only when the partner is not the agent itself.
                let partner = f
                    .partner
                    .map_or(String::new(), |p| format!(",\"partner\":{}", text(p.name())));
                format!("{{{}{partner}}},\"match\":{to}", full_knobs(&f.config))
            }
        }
    }

    /// The full game's search settings, each present only when not its
    /// default (so that the specs written before them keep their hashes).
    fn canonical_full_search(&self) -> String {
        use std::fmt::Write;
        let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let list = |items: Vec<String>| format!("[{}]", items.join(","));
        let g = &self.grid;
        let mut full_search = String::new();
        if let Some(f) = &self.full {
            let fs = &f.search;
            if !g.budget.is_empty() {
                let _ = write!(
                    full_search,
                    ",\"budget\":{}",
                    list(g.budget.iter().map(u64::to_string).collect())
                );
            } else if fs.budget > 0 {
                let _ = write!(full_search, ",\"budget\":{}", fs.budget);
            }
            if fs.table_mb != full::DEFAULT_TABLE_MB {
                let _ = write!(full_search, ",\"table_mb\":{}", fs.table_mb);
            }
            if fs.learned {
                let _ = write!(
                    full_search,
                    ",\"evaluation\":{{\"learned\":{}}}",
                    text(crate::evals::shipped_eval_hash())
                );
            }
            if fs.target_depth != full::DEFAULT_TARGET_DEPTH {
                let _ = write!(full_search, ",\"target_depth\":{}", fs.target_depth);
            }
            // Only when set, so specs before it keep their ids.
            full_search.push_str(&super::fields::adaptive_json(fs.adaptive));
            // The shaping's levels with their parameters and the training of
            // the predictors the fit stage makes, when there is more than `none`.
            if g.shaping != [super::ShapingLevel::NONE] {
                let level = |l: &super::ShapingLevel| {
                    let params = match l.shaping {
                        full::Shaping::Prune { top_n, epsilon_ppm } => {
                            format!(",\"top_n\":{top_n},\"epsilon_ppm\":{epsilon_ppm}")
                        }
                        full::Shaping::Asymmetric { likely, extend, reduce } => {
                            format!(",\"likely\":{likely},\"extend\":{extend},\"reduce\":{reduce}")
                        }
                        _ => String::new(),
                    };
                    format!("{{\"level\":{}{params}}}", text(&l.name()))
                };
                let _ = write!(
                    full_search,
                    ",\"shaping\":{}",
                    list(g.shaping.iter().map(level).collect()),
                );
                if let Some(p) = &self.prediction {
                    let _ = write!(
                        full_search,
                        ",\"prediction\":{{\"hands\":{},\"seed\":{},\"seats\":{}}}",
                        p.hands, p.seed, p.seats
                    );
                }
            }
        }
        full_search
    }

    /// SHA-256 of the canonical JSON, in hex.
    pub fn hash(&self) -> String {
        hex(&Sha256::digest(self.canonical_json().as_bytes()))
    }

    /// The experiment id: the name and the first 12 hex digits of the
    /// hash. A name that is not a plain word (the name may be any text)
    /// has each character other than a letter, digit, '-', '_' or '.'
    /// written as '_', so that an id is safe in a URL, a path or a log.
    pub fn id(&self) -> String {
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{name}-{}", &self.hash()[..12])
    }
}

/// A full-game rule set's knobs as JSON members (no braces), in one order.
fn full_knobs(k: &full::FullConfig) -> String {
    let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
    let blocked = match k.blocked {
        FivesBlocked::Opponents => "opponents",
        FivesBlocked::Difference => "difference",
    };
    let lead = match k.lead {
        FivesLead::Winner => "winner",
        FivesLead::HighestDouble => "highest-double",
    };
    format!(
        "\"preset\":{},\"set\":{},\"seats\":{},\"hand\":{},\"teams\":{},\"keep\":{},\"round\":{},\
         \"blocked\":{},\"lead\":{}",
        text(k.preset.name()),
        k.set,
        k.seats,
        k.hand,
        k.teams,
        k.keep,
        k.round,
        text(blocked),
        text(lead)
    )
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
