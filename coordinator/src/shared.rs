//! The state the service, the sweeper and the metrics endpoint share: the
//! store, the configuration, the counters and the results root's marker.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Config;
use crate::metrics::Metrics;
use crate::store::{ExpState, ExperimentRow, Store, now_ms};

/// State shared by the service and the sweeper.
#[derive(Debug)]
pub struct Shared {
    pub store: Mutex<Store>,
    /// A read-only connection to the same state file, for the web view and
    /// the metrics endpoint (never the write path's lock).
    pub reader: Mutex<Store>,
    pub config: Config,
    /// Recent (time, games done) samples per experiment, for rates and ETAs.
    pub(crate) samples: Mutex<HashMap<String, VecDeque<(i64, u64)>>>,
    pub metrics: Metrics,
    /// The content of the results root's marker file, which workers must echo.
    pub marker: String,
    /// Each experiment's parsed spec (a spec never changes under its id), so
    /// that a completion does not parse the TOML again. Bounded: emptied
    /// past [`SPECS_KEPT`] experiments.
    pub(crate) specs: Mutex<HashMap<String, Option<Arc<jobs::Spec>>>>,
}

/// Parsed specs kept at most (running experiments are few).
const SPECS_KEPT: usize = 256;

impl Shared {
    /// An experiment's rate (games a second over the last 30 s) and ETA in
    /// seconds (-1 while nothing has been done; 0 once finished). Each call
    /// adds a sample when the count moved or a second passed.
    pub(crate) fn rate_eta(&self, e: &ExperimentRow) -> (f64, f64) {
        let now = now_ms();
        let mut all = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        let s = all.entry(e.id.clone()).or_default();
        // Games lost (their tasks run again) make the count go back:
        // the rate starts over from here.
        if s.back().is_some_and(|&(_, g)| g > e.games_done) {
            s.clear();
        }
        if s.back().is_none_or(|&(t, g)| g != e.games_done || now - t > 1000) {
            s.push_back((now, e.games_done));
        }
        while s.len() > 2 && now - s[0].0 > 30_000 {
            s.pop_front();
        }
        let (t0, g0) = s[0];
        let dt = (now - t0) as f64 / 1000.0;
        let rate = if dt >= 0.5 {
            e.games_done.saturating_sub(g0) as f64 / dt
        } else {
            0.0
        };
        let left = e.games_total - e.games_done.min(e.games_total);
        let eta = match e.state {
            ExpState::Running if rate > 0.0 => left as f64 / rate,
            ExpState::Running => -1.0,
            _ => 0.0,
        };
        (rate, Self::generations_eta(e, now).map_or(eta, |g| g.max(eta)))
    }

    /// A training run's ETA at the pace of its generations so far (its
    /// games' rate leaves out each generation's fit, gate and anchors):
    /// `None` before a generation is done, or for a grid.
    fn generations_eta(e: &ExperimentRow, now: i64) -> Option<f64> {
        let g = e
            .stages
            .iter()
            .find(|s| s.name == jobs::layout::Stage::Generation.name())?;
        if e.state != ExpState::Running || g.done == 0 {
            return None;
        }
        let each = (now - e.created_ms).max(0) as f64 / 1000.0 / g.done as f64;
        Some(each * g.total.saturating_sub(g.done) as f64)
    }

    /// Experiment `id`'s spec from its TOML, parsed once (`None`: it does
    /// not parse, which a submitted spec always does).
    pub(crate) fn spec(&self, id: &str, toml: &str) -> Option<Arc<jobs::Spec>> {
        let mut specs = self.specs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = specs.get(id) {
            return s.clone();
        }
        if specs.len() >= SPECS_KEPT {
            specs.clear();
        }
        let parsed = jobs::Spec::from_toml(toml).ok().map(Arc::new);
        specs.insert(id.to_string(), parsed.clone());
        parsed
    }

    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The read-only connection: what pages and metrics read.
    pub fn reader(&self) -> MutexGuard<'_, Store> {
        self.reader.lock().unwrap_or_else(|e| e.into_inner())
    }
}
