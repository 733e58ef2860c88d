//! The state the service, the sweeper and the metrics endpoint share: the
//! store, the configuration, the counters and the results root's marker.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use crate::Config;
use crate::metrics::Metrics;
use crate::store::Store;

/// State shared by the service and the sweeper.
#[derive(Debug)]
pub struct Shared {
    pub store: Mutex<Store>,
    pub config: Config,
    /// Recent (time, games done) samples per experiment, for rates and ETAs.
    pub(crate) samples: Mutex<HashMap<String, VecDeque<(i64, u64)>>>,
    pub metrics: Metrics,
    /// The content of the results root's marker file, which workers must echo.
    pub marker: String,
}

impl Shared {
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}
