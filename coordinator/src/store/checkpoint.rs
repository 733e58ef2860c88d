//! WAL checkpoints off the write path. By default SQLite copies the WAL
//! back into the database file inside the commit that fills it past 1,000
//! pages, and syncs the file there: that writer (a lease, a completion, and
//! every RPC queued behind the store's lock) waits for the copy and the
//! disk. A coordinator instead turns the automatic checkpoint off on its
//! writing connection and runs a passive checkpoint on a connection of its
//! own every `every`: passive checkpoints never wait for or block a writer
//! (WAL lets them run beside one), and a reader only limits how far one
//! gets.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::{Result, Store, StoreError};

/// The background checkpoint thread; dropping it stops the thread.
#[derive(Debug)]
pub struct Checkpointer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Store {
    /// Hands this store's WAL checkpoints to a thread that runs one every
    /// `every` on its own connection to `path` (the file this store opened).
    pub fn checkpoint_in_background(&mut self, path: &Path, every: Duration) -> Result<Checkpointer> {
        let conn = Connection::open(path)
            .map_err(|e| StoreError::Open(format!("state file {} (checkpoints): {e}", path.display())))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        self.conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("state-checkpoint".into())
            .spawn(move || run(&conn, &flag, every))
            .map_err(|e| StoreError::Open(format!("cannot start the checkpoint thread: {e}")))?;
        Ok(Checkpointer {
            stop,
            thread: Some(thread),
        })
    }
}

fn run(conn: &Connection, stop: &(Mutex<bool>, Condvar), every: Duration) {
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
    while !*stopped {
        stopped = wake.wait_timeout(stopped, every).unwrap_or_else(|p| p.into_inner()).0;
        if *stopped {
            break;
        }
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %e, "state file checkpoint failed; the next one tries again");
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        *self.stop.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.stop.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
