//! The Prometheus text endpoint: `GET /metrics` on its own port.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::shared::Shared;
use crate::store::now_ms;

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The metrics in Prometheus's text format.
pub fn render(shared: &Shared) -> String {
    let m = &shared.metrics;
    let mut out = String::new();
    let (tasks, experiments, games_done, recent, bad) = {
        let store = shared.reader();
        (
            store.task_counts().unwrap_or_default(),
            store.experiment_counts().unwrap_or_default(),
            store.games_done().unwrap_or(0),
            store.games_done_since(now_ms() - 60_000).unwrap_or(0),
            store.bad_workers().unwrap_or_default(),
        )
    };
    family(
        &mut out,
        "muggins_tasks",
        "gauge",
        "Tasks of all experiments by stage and state (abandoned: unfinished tasks of an experiment that no longer runs).",
    );
    for (stage, state, n) in tasks {
        let _ = writeln!(out, "muggins_tasks{{stage=\"{stage}\",state=\"{state}\"}} {n}");
    }
    family(&mut out, "muggins_experiments", "gauge", "Experiments by state.");
    for (state, n) in experiments {
        let _ = writeln!(out, "muggins_experiments{{state=\"{}\"}} {n}", state.as_str());
    }
    family(
        &mut out,
        "muggins_games_completed",
        "gauge",
        "Games in completed grid and self-play tasks, all experiments.",
    );
    let _ = writeln!(out, "muggins_games_completed {games_done}");
    family(
        &mut out,
        "muggins_games_per_second",
        "gauge",
        "Games completed per second over the last minute.",
    );
    let _ = writeln!(out, "muggins_games_per_second {}", recent as f64 / 60.0);
    family(
        &mut out,
        "muggins_workers_alive",
        "gauge",
        "Workers heard from in the last 60 seconds.",
    );
    let _ = writeln!(out, "muggins_workers_alive {}", m.alive());
    family(
        &mut out,
        "muggins_bad_workers",
        "gauge",
        "Workers a cross-check found wrong (they lease nothing more; their games were played again).",
    );
    let _ = writeln!(out, "muggins_bad_workers {}", bad.len());
    for w in &bad {
        let _ = writeln!(
            out,
            "muggins_bad_worker{{worker=\"{}\"}} 1",
            w.replace(['"', '\\', '\n'], "_")
        );
    }
    for (name, help, c) in [
        (
            "muggins_lease_expiries_total",
            "Tasks leased again because a lease expired.",
            &m.lease_expiries,
        ),
        (
            "muggins_task_retries_total",
            "Failed tasks put back to be tried again.",
            &m.retries,
        ),
        (
            "muggins_tasks_failed_total",
            "Tasks that failed for good.",
            &m.tasks_failed,
        ),
        ("muggins_completions_total", "Completions accepted.", &m.completions),
        (
            "muggins_stale_completions_rejected_total",
            "Completions refused (stale lease or bad report).",
            &m.stale_completions,
        ),
        (
            "muggins_chunks_committed_total",
            "Chunks of games tasks committed with heartbeats.",
            &m.chunks,
        ),
        (
            "muggins_checks_added_total",
            "Cross-check tasks drawn from completed games tasks.",
            &m.checks_added,
        ),
        (
            "muggins_checks_passed_total",
            "Cross-checks whose replay matched.",
            &m.checks_passed,
        ),
        (
            "muggins_checks_failed_total",
            "Cross-checks whose replay differed from the committed checksum (a third worker then decides who is bad).",
            &m.checks_failed,
        ),
        (
            "muggins_unauthenticated_requests_total",
            "Requests refused for a missing or wrong token.",
            &m.unauthenticated,
        ),
    ] {
        family(&mut out, name, "counter", help);
        let _ = writeln!(out, "{name} {}", c.load(Ordering::Relaxed));
    }
    out
}

/// Serves `GET /metrics` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::routing::get;
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let shared = Arc::clone(&shared);
            async move {
                let body = tokio::task::spawn_blocking(move || render(&shared))
                    .await
                    .unwrap_or_default();
                ([("content-type", "text/plain; version=0.0.4")], body)
            }
        }),
    );
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}
