//! The training pages: the training runs (`[train]` specs, docs/train.md)
//! under the results root, and one run's progress: its generations table
//! and curve, rebuilt from the summary the run rewrites after each
//! generation (so the page follows a run in progress), with its files.

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use jobs::layout::{BEST_NET, REPORT_MD_FILE, TRAIN_SPEC_FILE};

use super::html::{self, Esc, Html, Nav, html};
use super::{App, blocking, not_found, page_response};

/// Training runs listed at most.
const LIST: usize = 500;

/// The directories directly under the results root that hold a training
/// run, by name (at most [`LIST`]).
fn runs(results: &FsPath) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(results) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .filter(|(name, dir)| plain(name) && dir.join(TRAIN_SPEC_FILE).is_file())
        .collect();
    found.sort();
    found.truncate(LIST);
    found
}

/// Whether `name` may name a run: not hidden, and only letters, digits,
/// `-`, `_` and `.` (nothing that could leave the results root).
fn plain(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// The run named `name` (a plain name of a directory under the results
/// root that holds a training run), or `None`.
fn run_dir(app: &App, name: &str) -> Option<PathBuf> {
    let dir = app.shared.config.results.join(name);
    (plain(name) && dir.join(TRAIN_SPEC_FILE).is_file()).then_some(dir)
}

/// Generations done of those asked, and whether the run has ended (its
/// report written after the last one).
fn progress(dir: &FsPath, spec: &jobs::train::TrainSpec, s: &jobs::train::Summary) -> (u64, u64, bool) {
    let (done, total) = (s.generations.len() as u64, u64::from(spec.train.generations));
    (done, total, done >= total && dir.join(REPORT_MD_FILE).is_file())
}

pub(crate) async fn list(State(app): State<Arc<App>>) -> Response {
    blocking(move || page_response(list_page(&app))).await
}

fn list_page(app: &App) -> Html {
    let found = runs(&app.shared.config.results);
    let mut b = html!(
        "<h1>Training</h1><section id=\"training\" data-live><p class=\"muted\">Training runs (<code>[train]</code> specs) \
         under <code>{}</code>: {}.</p>",
        Esc(&app.shared.config.results.display().to_string()),
        html::int(found.len() as u64)
    );
    if found.is_empty() {
        b.push_static(
            "<p>No training run yet: start one with <code>muggins run jobs/specs/train-block-smoke.toml</code>.</p></section>",
        );
        return html::page("Training", Nav::Training, &b, Some(super::pages::REFRESH_MS));
    }
    b.push_static(
        "<div class=\"scroll\"><table class=\"list\"><thead><tr><th>name</th><th>game</th><th>progress</th>\
         <th>best network</th><th>state</th></tr></thead><tbody>\n",
    );
    for (name, dir) in &found {
        let row = match jobs::train::read_run(dir) {
            Ok(Some((spec, s))) => {
                let (done, total, ended) = progress(dir, &spec, &s);
                html!(
                    "<td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td>",
                    Esc(&spec.train.game),
                    html::progress(done, total, "generations"),
                    Esc(s.best.get(..12).unwrap_or(&s.best)),
                    Html::trusted_static(if ended { "finished" } else { "in progress or stopped" })
                )
            }
            Ok(None) => Html::trusted_static("<td></td><td>starting: no generation yet</td><td></td><td></td>"),
            Err(e) => html!("<td></td><td colspan=\"3\" class=\"bad\">{}</td>", Esc(&e.to_string())),
        };
        b.push(html!(
            "<tr><td><a href=\"/training/{0}\">{0}</a></td>{row}</tr>\n",
            Esc(name),
            row = row
        ));
    }
    b.push_static("</tbody></table></div></section>");
    html::page("Training", Nav::Training, &b, Some(super::pages::REFRESH_MS))
}

pub(crate) async fn run(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    blocking(move || match run_dir(&app, &name) {
        Some(dir) => page_response(run_page(&name, &dir)),
        None => not_found(format!("There is no training run named {name} in the results root.")),
    })
    .await
}

fn run_page(name: &str, dir: &FsPath) -> Html {
    let mut b = html!("<h1>Training: {}</h1><section id=\"run\" data-live>", Esc(name));
    let (summary, live) = match jobs::train::read_run(dir) {
        Ok(Some((spec, s))) => {
            let (done, total, ended) = progress(dir, &spec, &s);
            b.push(html!(
                "<p>{} · {} · best network <code>{}</code> (<a href=\"/training/{name}/{best}\">{best}</a>)</p>",
                html::progress(done, total, "generations"),
                Html::trusted_static(if ended { "finished" } else { "in progress or stopped" }),
                Esc(s.best.get(..12).unwrap_or(&s.best)),
                name = Esc(name),
                best = Esc(BEST_NET),
            ));
            let md = analysis::train_report::markdown(&spec, &s);
            // The page's own heading stands for the report's first line.
            let md = md.split_once('\n').map_or("", |(_, rest)| rest);
            b.push(super::markdown::to_html(md, &format!("/training/{name}/")));
            (true, !ended)
        }
        Ok(None) => {
            b.push_static("<p>Starting: no generation is done yet.</p>");
            (false, true)
        }
        Err(e) => {
            b.push(html!("<p class=\"bad\">{}</p>", Esc(&e.to_string())));
            (false, false)
        }
    };
    if !summary {
        b.push_static("<p><a href=\"/training\">All training runs</a></p>");
    }
    b.push_static("</section>");
    html::page(
        &format!("Training {name}"),
        Nav::Training,
        &b,
        live.then_some(super::pages::REFRESH_MS),
    )
}

/// `curve.svg` (drawn from the summary now) and `best.safetensors`.
pub(crate) async fn file(State(app): State<Arc<App>>, Path((name, file)): Path<(String, String)>) -> Response {
    blocking(move || {
        let Some(dir) = run_dir(&app, &name) else {
            return not_found(format!("There is no training run named {name} in the results root."));
        };
        match file.as_str() {
            "curve.svg" => match jobs::train::read_run(&dir) {
                Ok(Some((_, s))) => {
                    super::results::file_response("curve.svg", analysis::train_report::curve_svg(&s).into_bytes())
                }
                _ => not_found(format!("Training run {name} has no generation yet to plot.")),
            },
            // The best so far: the summary names it among the kept networks
            // (`best.safetensors` is written at the run's end).
            "best.safetensors" => match jobs::train::read_run(&dir) {
                Ok(Some((_, s))) if s.best.chars().all(|c| c.is_ascii_hexdigit()) => {
                    match std::fs::read(dir.join(jobs::layout::net_file(&s.best))) {
                        Ok(bytes) => super::results::file_response(BEST_NET, bytes),
                        Err(_) => not_found(format!("Training run {name} has lost its network {}.", s.best)),
                    }
                }
                _ => not_found(format!("Training run {name} has no best network yet.")),
            },
            _ => not_found(format!(
                "Training run {name} serves curve.svg and best.safetensors, not {file}."
            )),
        }
    })
    .await
}
