//! The experiments page and one experiment's page.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use jobs::layout::Stage;

use super::html::{self, Esc, Html, Nav, html};
use super::{App, blocking, not_found, page_response};
use crate::store::{ExpState, ExperimentRow, TaskState};

/// The experiments listed at most (newest first).
const LIST: usize = 500;
/// Tasks shown on an experiment's page (those in play first).
const TASKS: usize = 100;
/// Live pages refresh this often.
pub(crate) const REFRESH_MS: u32 = 2000;

/// A plural's "s" after `n` things.
fn plural(n: u64) -> Html {
    Html::trusted_static(if n == 1 { "" } else { "s" })
}

/// The stage an experiment is in and its progress: games in the grid
/// stage, tasks in the others.
fn stage_progress(e: &ExperimentRow) -> (String, u64, u64, &'static str) {
    match e.stages.iter().find(|s| s.done < s.total) {
        Some(s) if matches!(Stage::parse(&s.name), Some(Stage::Games | Stage::SelfPlay)) => {
            (s.name.clone(), e.games_done, e.games_total, "games")
        }
        Some(s) => (s.name.clone(), s.done, s.total, "tasks"),
        None => ("done".into(), e.games_done, e.games_total, "games"),
    }
}

/// An experiment's progress as a page shows it: the stage, its bar, the
/// rate and the ETA ("-" once it is not running).
struct Shown {
    stage: Html,
    bar: Html,
    rate: Html,
    eta: Html,
}

fn shown(app: &App, e: &ExperimentRow) -> Shown {
    let (rate, eta) = app.shared.rate_eta(e);
    let (stage, done, total, unit) = stage_progress(e);
    let running = e.state == ExpState::Running;
    Shown {
        stage: Html::text(&stage),
        bar: html::progress(done, total, unit),
        rate: if running {
            html::rate(rate)
        } else {
            Html::trusted_static("-")
        },
        eta: if running {
            html::secs(eta)
        } else {
            Html::trusted_static("-")
        },
    }
}

fn state_badge(s: ExpState) -> Html {
    html!("<span class=\"state s-{0}\">{0}</span>", Esc(s.as_str()))
}

pub(crate) async fn experiments(State(app): State<Arc<App>>) -> Response {
    blocking(move || page_response(experiments_page(&app))).await
}

/// The newest `LIST` experiments, newest first, and how many there are.
fn newest(app: &App) -> (Vec<ExperimentRow>, u64) {
    let store = app.shared.reader();
    let (ids, total) = store.newest_ids(LIST).unwrap_or_default();
    (ids.iter().filter_map(|id| store.experiment(id).ok()).collect(), total)
}

fn experiments_page(app: &App) -> Html {
    let (rows, total) = newest(app);
    let mut b = html!(
        "<h1>Experiments</h1><section id=\"experiments\" data-live><p class=\"muted\">{} experiment{}{}, newest first.</p>",
        html::int(total),
        plural(total),
        if total > LIST as u64 {
            html!(" (the newest {LIST} shown)", LIST = LIST)
        } else {
            Html::new()
        }
    );
    if rows.is_empty() {
        b.push_static("<p>No experiment yet: submit one with <code>muggins submit SPEC.toml</code>.</p></section>");
        return html::page("Experiments", Nav::Experiments, &b, Some(REFRESH_MS));
    }
    b.push_static(
        "<div class=\"scroll\"><table class=\"list\"><thead><tr><th>name</th><th>id</th><th>state</th><th>stage</th>\
         <th>progress</th><th class=\"num\">games/s</th><th class=\"num\">ETA</th><th>started</th><th>finished</th></tr></thead><tbody>\n",
    );
    for e in &rows {
        let sh = shown(app, e);
        let finished = if e.state == ExpState::Running {
            Html::trusted_static("-")
        } else {
            html::time(e.updated_ms)
        };
        b.push(html!(
            "<tr><td><a href=\"/experiments/{id}\">{name}</a></td><td><code>{id}</code></td><td>{state}</td><td>{stage}</td>\
             <td class=\"bar\">{bar}</td><td class=\"num\">{rate}</td><td class=\"num\">{eta}</td><td>{started}</td><td>{finished}</td></tr>\n",
            id = Esc(&e.id),
            name = Esc(&e.name),
            state = state_badge(e.state),
            stage = sh.stage,
            bar = sh.bar,
            rate = sh.rate,
            eta = sh.eta,
            started = html::time(e.created_ms),
            finished = finished,
        ));
        if !e.error.is_empty() {
            b.push(html!(
                "<tr class=\"error-row\"><td colspan=\"9\"><span class=\"bad\">error:</span> {}</td></tr>\n",
                Esc(&e.error)
            ));
        }
    }
    b.push_static("</tbody></table></div></section>");
    html::page("Experiments", Nav::Experiments, &b, Some(REFRESH_MS))
}

/// `GET /api/experiments`: the list as JSON (for scripts; the pages do not
/// need it).
pub(crate) async fn experiments_json(State(app): State<Arc<App>>) -> Response {
    blocking(move || {
        let (rows, _) = newest(&app);
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|e| {
                let (rate, eta) = app.shared.rate_eta(e);
                let (stage, done, total, unit) = stage_progress(e);
                serde_json::json!({
                    "id": e.id, "name": e.name, "state": e.state.as_str(), "stage": stage,
                    "done": done, "total": total, "unit": unit, "games_done": e.games_done,
                    "games_total": e.games_total, "games_per_second": rate, "eta_seconds": eta,
                    "created_unix_ms": e.created_ms, "updated_unix_ms": e.updated_ms, "error": e.error,
                })
            })
            .collect();
        (
            [(header::CONTENT_TYPE, "application/json")],
            serde_json::json!({ "experiments": list }).to_string(),
        )
            .into_response()
    })
    .await
}

pub(crate) async fn experiment(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    blocking(move || {
        let row = app.shared.reader().experiment(&id);
        match row {
            Ok(e) => page_response(experiment_page(&app, &e)),
            Err(_) => not_found(format!("No experiment has the id {id}.")),
        }
    })
    .await
}

fn experiment_page(app: &Arc<App>, e: &ExperimentRow) -> Html {
    let running = e.state == ExpState::Running;
    let mut b = html!(
        "<div id=\"head\" data-live><h1>{name} {state}</h1></div><section id=\"summary\" data-live>{summary}</section>",
        name = Esc(&e.name),
        state = state_badge(e.state),
        summary = summary(app, e),
    );
    b.push(html!(
        "<details class=\"spec\"><summary>Spec <span class=\"muted\">(id <code>{}</code>)</span></summary><pre class=\"toml\">{}</pre></details>",
        Esc(&e.spec_hash),
        html::toml(&e.spec_toml)
    ));
    b.push(html!(
        "<section id=\"report\" data-live>{}</section>",
        report_section(app, e)
    ));
    b.push(html!(
        "<section id=\"tasks\" data-live>{}</section>",
        tasks_section(app, e)
    ));
    b.push(html!(
        "<section id=\"checks\" data-live>{}</section>",
        checks_section(app, e)
    ));
    html::page(&e.name, Nav::Experiments, &b, running.then_some(REFRESH_MS))
}

fn summary(app: &App, e: &ExperimentRow) -> Html {
    let sh = shown(app, e);
    let mut s = html!(
        "<dl class=\"facts\"><dt>id</dt><dd><code>{id}</code></dd><dt>results</dt><dd><code>{out}</code></dd>\
         <dt>stage</dt><dd>{stage}</dd><dt>progress</dt><dd class=\"bar\">{bar}</dd>\
         <dt>games/s</dt><dd class=\"num\">{rate}</dd><dt>ETA</dt><dd class=\"num\">{eta}</dd>\
         <dt>started</dt><dd>{started}</dd><dt>{upd}</dt><dd>{updated}</dd></dl>",
        id = Esc(&e.id),
        out = Esc(&e.output),
        stage = sh.stage,
        bar = sh.bar,
        rate = sh.rate,
        eta = sh.eta,
        started = html::time(e.created_ms),
        upd = Html::trusted_static(if e.state == ExpState::Running {
            "updated"
        } else {
            "finished"
        }),
        updated = html::time(e.updated_ms),
    );
    if !e.error.is_empty() {
        s.push(html!("<p class=\"bad\" role=\"alert\">error: {}</p>", Esc(&e.error)));
    }
    s.push_static(
        "<div class=\"scroll\"><table><thead><tr><th>stage</th><th class=\"num\">tasks</th><th class=\"num\">done</th>\
         <th class=\"num\">running</th><th class=\"num\">failed</th><th>waiting until</th></tr></thead><tbody>",
    );
    for st in &e.stages {
        s.push(html!(
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            Esc(&st.name),
            html::int(st.total),
            html::int(st.done),
            html::int(st.running),
            html::int(st.failed),
            st.waiting_until_ms.map_or(Html::trusted_static("-"), html::time)
        ));
    }
    s.push_static("</tbody></table></div>");
    s
}

/// The report: the finished one from its files, else the live one built
/// from the shards done so far.
fn report_section(app: &Arc<App>, e: &ExperimentRow) -> Html {
    let files = format!("/experiments/{}/files/", e.id);
    if jobs::train::is_train_spec(&e.spec_toml) {
        // A training run's report, curves and networks are its training page's.
        return html!(
            "<h2>Report</h2><p class=\"links\">A training run: its generations, curves and networks are on \
             <a href=\"/training/{name}\">its training page</a> · <a href=\"{f}\">its files</a></p>",
            name = Esc(&e.output),
            f = Esc(&files),
        );
    }
    if e.state == ExpState::Succeeded {
        let dir = app.shared.config.results.join(&e.output);
        return match std::fs::read_to_string(dir.join(jobs::layout::REPORT_MD)) {
            Ok(md) => html!(
                "<h2>Report</h2><p class=\"links\"><a href=\"{f}{md_path}\">report.md</a> · <a href=\"{f}{report_dir}/\">the report's files (CSV, SVG, JSON)</a> · \
                 <a href=\"{f}{games}/\">the Parquet partitions</a></p><article class=\"report\">{}</article>",
                super::markdown::to_html(&md, &format!("{files}{}/", jobs::layout::REPORT_DIR)),
                f = Esc(&files),
                md_path = Esc(jobs::layout::REPORT_MD),
                report_dir = Esc(jobs::layout::REPORT_DIR),
                games = Esc(jobs::layout::GAMES_DIR),
            ),
            Err(err) => html!(
                "<h2>Report</h2><p class=\"bad\">The report is not readable: {}</p>",
                Esc(&format!("{}: {err}", dir.join(jobs::layout::REPORT_MD).display()))
            ),
        };
    }
    let (built, error) = app.live.get(&app.shared, e);
    let mut s = Html::trusted_static("<h2>Report so far</h2>");
    if let Some(err) = error {
        s.push(html!(
            "<p class=\"bad\">The live report could not be built: {}</p>",
            Esc(&err)
        ));
    }
    match built {
        Some(b) => {
            let md = b
                .files
                .iter()
                .find(|(n, _)| *n == jobs::layout::REPORT_MD_FILE)
                .map_or("", |(_, m)| m);
            s.push(html!(
                "<p class=\"muted\">From the {} games shard{} done by {} (it is rebuilt as shards finish). \
                 With agents: the pairings, the Bradley-Terry ratings and the SPRT's LLR against its bounds.</p>\
                 <article class=\"report\">{}</article>",
                b.shards,
                plural(b.shards as u64),
                html::time(b.at_ms),
                super::markdown::to_html(md, &format!("/experiments/{}/live/", e.id)),
            ));
        }
        None => s.push_static("<p class=\"muted\">The report appears here once a games shard is done.</p>"),
    }
    s
}

fn tasks_section(app: &App, e: &ExperimentRow) -> Html {
    let (tasks, total) = app.shared.reader().tasks_view(&e.id, None, TASKS).unwrap_or_default();
    let now = crate::store::now_ms();
    let mut s = html!(
        "<h2>Tasks</h2><p class=\"muted\">{} task{}{}: those in play first, then the most recently done.</p>",
        html::int(total),
        plural(total),
        if total > TASKS as u64 {
            html!(", {TASKS} shown", TASKS = TASKS)
        } else {
            Html::new()
        }
    );
    s.push_static(
        "<div class=\"scroll\"><table><thead><tr><th>task</th><th>stage</th><th>state</th><th>worker</th>\
         <th class=\"num\">attempts</th><th class=\"num\">lease expires in</th><th>games</th></tr></thead><tbody>\n",
    );
    for t in &tasks {
        let expires = match (t.state, t.lease_expires_ms) {
            (TaskState::Leased, Some(ms)) => html::secs((ms - now) as f64 / 1000.0),
            _ => Html::trusted_static("-"),
        };
        let games = if t.games > 0 {
            html::progress(t.games_done.min(t.games), t.games, "games")
        } else {
            Html::trusted_static("-")
        };
        s.push(html!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"bar\">{}</td></tr>\n",
            Esc(&t.task_id),
            Esc(&t.stage),
            Esc(t.state.as_str()),
            Esc(t.worker.as_deref().unwrap_or("-")),
            t.attempts,
            expires,
            games
        ));
        if t.state == TaskState::Failed
            && let Some(err) = &t.error
        {
            s.push(html!(
                "<tr class=\"error-row\"><td colspan=\"7\">{}</td></tr>",
                Esc(err)
            ));
        }
    }
    s.push_static("</tbody></table></div>");
    s
}

fn checks_section(app: &App, e: &ExperimentRow) -> Html {
    let (checks, total) = app
        .shared
        .reader()
        .tasks_view(&e.id, Some(Stage::Check), TASKS)
        .unwrap_or_default();
    let mut s = html!(
        "<h2>Cross-checks</h2><p>{} passed, {} failed{}.</p>",
        html::int(e.checks_passed),
        html::int(e.checks_failed),
        if total > 0 {
            html!(" ({} check tasks)", html::int(total))
        } else {
            Html::new()
        }
    );
    if e.bad_workers.is_empty() {
        s.push_static("<p>No worker was found wrong.</p>");
    } else {
        s.push_static("<p class=\"bad\">Workers found wrong (their games were played again): ");
        let names = e.bad_workers.iter().map(|w| html!("<code>{}</code>", Esc(w)));
        s.push(Html::join(names, ", "));
        s.push_static("</p>");
    }
    let done: Vec<_> = checks.iter().filter(|t| t.state == TaskState::Done).collect();
    if !done.is_empty() {
        s.push_static("<div class=\"scroll\"><table><thead><tr><th>check</th><th>replayed by</th><th>verdict</th></tr></thead><tbody>");
        for t in done {
            let verdict = match &t.error {
                None => Html::trusted_static("<span class=\"good\">matched</span>"),
                Some(err) => html!("<span class=\"bad\">{}</span>", Esc(err)),
            };
            s.push(html!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{verdict}</td></tr>",
                Esc(&t.task_id),
                Esc(t.worker.as_deref().unwrap_or("-")),
                verdict = verdict,
            ));
        }
        s.push_static("</tbody></table></div>");
    }
    s
}
