//! The workers page: every worker heard from since the coordinator
//! started, the ones that need a look first (found wrong, failing, silent),
//! a page of `PAGE` at a time.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::response::Response;

use super::html::{self, Esc, Html, Nav, html};
use super::{App, blocking, page_response};

const PAGE: usize = 200;
/// A worker silent for longer than this is shown as gone.
const SILENT_MS: i64 = 60_000;

pub(crate) async fn page(State(app): State<Arc<App>>, uri: Uri) -> Response {
    let page_no: usize = uri
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("page=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    blocking(move || page_response(render(&app, page_no))).await
}

fn render(app: &App, page_no: usize) -> Html {
    let (bad, failures) = {
        let store = app.shared.reader();
        (
            store.bad_workers().unwrap_or_default(),
            store.failures_by_worker().unwrap_or_default(),
        )
    };
    let now = crate::store::now_ms();
    let mut workers = app.shared.metrics.workers();
    let is_bad = |w: &str| bad.binary_search_by(|b| b.as_str().cmp(w)).is_ok();
    let fails = |w: &str| failures.get(w).copied().unwrap_or(0);
    workers.sort_by(|(a, ia), (b, ib)| {
        let key = |w: &str, i: &crate::metrics::WorkerInfo| {
            (!is_bad(w), now - i.last_seen_ms <= SILENT_MS, u64::MAX - fails(w))
        };
        key(a, ia).cmp(&key(b, ib)).then_with(|| a.cmp(b))
    });
    let alive = workers
        .iter()
        .filter(|(_, i)| now - i.last_seen_ms <= SILENT_MS)
        .count();
    let busy = workers
        .iter()
        .filter(|(_, i)| i.task.is_some() && now - i.last_seen_ms <= SILENT_MS)
        .count();
    let threads: u64 = workers
        .iter()
        .filter(|(_, i)| now - i.last_seen_ms <= SILENT_MS)
        .map(|(_, i)| u64::from(i.threads))
        .sum();
    let rate: f64 = workers
        .iter()
        .filter(|(_, i)| now - i.last_seen_ms <= SILENT_MS)
        .map(|(_, i)| i.rate())
        .sum();
    let pages = workers.len().div_ceil(PAGE).max(1);
    let page_no = page_no.min(pages);
    let mut b = html!(
        "<h1>Workers</h1><section id=\"workers\" data-live><p>{} heard from in the last minute ({} busy, {} threads, {} games/s); \
         {} since the coordinator started; {} found wrong by a cross-check.</p>",
        html::int(alive as u64),
        html::int(busy as u64),
        html::int(threads),
        html::rate(rate),
        html::int(workers.len() as u64),
        html::int(bad.len() as u64)
    );
    if workers.is_empty() {
        b.push_static("<p>No worker has called in yet: start one with <code>muggins worker --coordinator URL</code>.</p></section>");
        return html::page("Workers", Nav::Workers, &b, Some(super::pages::REFRESH_MS));
    }
    b.push_static(
        "<div class=\"scroll\"><table><thead><tr><th>worker</th><th>host</th><th class=\"num\">threads</th><th>last heartbeat</th>\
         <th>task</th><th class=\"num\">games/s</th><th class=\"num\">games</th><th class=\"num\">failures</th><th>marked bad</th></tr></thead><tbody>\n",
    );
    for (id, w) in workers.iter().skip((page_no - 1) * PAGE).take(PAGE) {
        let silent = now - w.last_seen_ms > SILENT_MS;
        let bad_mark = Html::trusted_static(if is_bad(id) {
            "<span class=\"bad\">yes</span>"
        } else {
            "no"
        });
        b.push(html!(
            "<tr{}><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td>{} ago</td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{bad_mark}</td></tr>\n",
            Html::trusted_static(if silent { " class=\"silent\"" } else { "" }),
            Esc(id),
            Esc(&w.host),
            w.threads,
            html::secs((now - w.last_seen_ms) as f64 / 1000.0),
            w.task
                .as_deref()
                .map_or(Html::trusted_static("-"), |t| html!("<code>{}</code>", Esc(t))),
            html::rate(w.rate()),
            html::int(w.games),
            html::int(fails(id)),
            bad_mark = bad_mark,
        ));
    }
    b.push_static("</tbody></table></div>");
    if pages > 1 {
        b.push_static("<nav class=\"pages\" aria-label=\"pages\">");
        for p in 1..=pages {
            if p == page_no {
                b.push(html!("<span aria-current=\"page\">{p}</span> ", p = p));
            } else {
                b.push(html!("<a href=\"/workers?page={p}\">{p}</a> ", p = p));
            }
        }
        b.push_static("</nav>");
    }
    b.push_static("</section>");
    html::page("Workers", Nav::Workers, &b, Some(super::pages::REFRESH_MS))
}
