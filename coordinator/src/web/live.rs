//! The report of a running experiment, built from its done games shards
//! (`analysis::build_live`) in a thread of its own, so that no page waits
//! on Parquet: a page shows the latest build and asks for a new one when
//! shards were done since, at most once every ten times the last build
//! took (and 2 s apart), so building takes at most a tenth of a core. At most `KEEP` experiments' reports are kept (the least recently
//! shown go).

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::shared::Shared;
use crate::store::ExperimentRow;

/// A built report: its files (`report.md`, the CSVs and SVGs) and how many
/// done shards it read.
#[derive(Debug)]
pub(crate) struct Built {
    pub files: Vec<(&'static str, String)>,
    pub shards: usize,
    pub at_ms: i64,
}

type Outcome = Result<Built, String>;

#[derive(Debug)]
struct Entry {
    built: Option<Arc<Built>>,
    error: Option<String>,
    /// The done shards (how many, the last) the last build started from.
    asked: Option<(usize, u64)>,
    started: Instant,
    took: Duration,
    /// The build in flight.
    building: Option<Receiver<Outcome>>,
    shown: Instant,
}

impl Entry {
    fn new() -> Entry {
        Entry {
            built: None,
            error: None,
            asked: None,
            started: Instant::now(),
            took: Duration::ZERO,
            building: None,
            shown: Instant::now(),
        }
    }

    fn store(&mut self, outcome: Outcome) {
        self.building = None;
        self.took = self.started.elapsed();
        match outcome {
            Ok(b) => {
                self.built = Some(Arc::new(b));
                self.error = None;
            }
            Err(m) => self.error = Some(m),
        }
    }

    /// Stores the build in flight's outcome if it has come.
    fn collect(&mut self) {
        let outcome = match self.building.as_ref().map(Receiver::try_recv) {
            Some(Ok(o)) => o,
            Some(Err(TryRecvError::Disconnected)) => Err("the live report's builder stopped".to_string()),
            _ => return,
        };
        self.store(outcome);
    }
}

/// Experiments' live reports.
#[derive(Debug, Default)]
pub(crate) struct LiveReports {
    entries: Mutex<HashMap<String, Entry>>,
}

const KEEP: usize = 16;
/// A first build is waited for this long before the page goes without it.
const FIRST_WAIT: Duration = Duration::from_millis(250);

impl LiveReports {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The latest live report of `e` (and the last build's error), starting
    /// a new build when shards were done since the last and it is due.
    pub fn get(&self, shared: &Arc<Shared>, e: &ExperimentRow) -> (Option<Arc<Built>>, Option<String>) {
        let key = shared.reader().done_shards_key(&e.id).unwrap_or_default();
        let first = {
            let mut all = self.lock();
            if all.len() >= KEEP
                && !all.contains_key(&e.id)
                && let Some(oldest) = all.iter().min_by_key(|(_, v)| v.shown).map(|(k, _)| k.clone())
            {
                all.remove(&oldest);
            }
            let entry = all.entry(e.id.clone()).or_insert_with(Entry::new);
            entry.shown = Instant::now();
            entry.collect();
            let due = entry.started.elapsed() >= (entry.took * 10).max(Duration::from_secs(2));
            let start =
                key.0 > 0 && entry.building.is_none() && entry.asked != Some(key) && (entry.asked.is_none() || due);
            if start {
                let (tx, rx) = std::sync::mpsc::channel();
                let (shared, e) = (Arc::clone(shared), e.clone());
                let spawned = std::thread::Builder::new().name("live-report".into()).spawn(move || {
                    let _ = tx.send(build(&shared, &e));
                });
                if spawned.is_ok() {
                    entry.asked = Some(key);
                    entry.started = Instant::now();
                    entry.building = Some(rx);
                }
            }
            start && entry.built.is_none()
        };
        if first {
            // A first build is worth a short wait: the page then has it.
            let deadline = Instant::now() + FIRST_WAIT;
            while Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
                let mut all = self.lock();
                if let Some(entry) = all.get_mut(&e.id) {
                    entry.collect();
                    if entry.building.is_none() {
                        break;
                    }
                }
            }
        }
        let all = self.lock();
        all.get(&e.id)
            .map_or((None, None), |v| (v.built.clone(), v.error.clone()))
    }

    /// A file of `id`'s latest live report.
    pub fn file(&self, id: &str, name: &str) -> Option<String> {
        let all = self.lock();
        let built = all.get(id)?.built.as_ref()?;
        built
            .files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, body)| body.clone())
    }
}

/// Builds `e`'s report from its done shards.
fn build(shared: &Shared, e: &ExperimentRow) -> Result<Built, String> {
    let spec = jobs::Spec::from_toml(&e.spec_toml).map_err(|err| err.to_string())?;
    let (done, chunks) = {
        let store = shared.reader();
        let done = store.done_shards(&e.id).map_err(|err| err.to_string())?;
        (done, store.worker_chunks(&e.id).map_err(|err| err.to_string())?)
    };
    let workers = serde_json::to_vec(&serde_json::json!({ "chunks": chunks })).map_err(|err| err.to_string())?;
    let dir = shared.config.results.join(&e.output);
    let report = analysis::build_live(&dir, &spec, &done, Some(&workers)).map_err(|err| err.to_string())?;
    Ok(Built {
        files: analysis::report_files(&report),
        shards: done.len(),
        at_ms: crate::store::now_ms(),
    })
}
