//! An experiment's files: its results directory browsed (hidden names,
//! links and anything outside it refused), files served with their types
//! under a sandboxing policy, and the live report's files from memory.

use std::path::Path as FsPath;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::html::{self, Esc, Html, Nav, html};
use super::{App, blocking, not_found, page_response};

/// Files larger than this are not served (read them from the results
/// directory itself).
const MAX_SERVED: u64 = 256 << 20;
/// What a file name keeps unescaped in a link.
const NAME: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'.')
    .remove(b'-')
    .remove(b'_');
/// Entries listed at most in one directory.
const MAX_LISTED: usize = 2000;

/// A file's content type, and whether a browser should download it.
fn content_type(name: &str) -> (&'static str, bool) {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("md" | "txt" | "log") => ("text/plain; charset=utf-8", false),
        Some("csv") => ("text/csv; charset=utf-8", false),
        Some("json") => ("application/json", false),
        Some("svg") => ("image/svg+xml", false),
        Some("parquet") => ("application/vnd.apache.parquet", true),
        _ => ("application/octet-stream", true),
    }
}

/// A file's bytes with its type, under a policy that runs nothing in it
/// (an SVG opened by itself included).
pub(crate) fn file_response(name: &str, body: Vec<u8>) -> Response {
    let (kind, download) = content_type(name);
    let mut resp = ([(header::CONTENT_TYPE, kind)], body).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"),
    );
    if download {
        let shown = jobs::layout::plain_name(name);
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{shown}\"")) {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
    }
    resp
}

pub(crate) async fn live_file(State(app): State<Arc<App>>, Path((id, name)): Path<(String, String)>) -> Response {
    match app.live.file(&id, &name) {
        Some(body) => file_response(&name, body.into_bytes()),
        None => not_found(format!("The live report of {id} has no file {name} (yet).")),
    }
}

pub(crate) async fn listing_root(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    blocking(move || serve(&app, &id, "")).await
}

pub(crate) async fn file(State(app): State<Arc<App>>, Path((id, path)): Path<(String, String)>) -> Response {
    blocking(move || serve(&app, &id, &path)).await
}

fn serve(app: &App, id: &str, rel: &str) -> Response {
    let Ok(e) = app.shared.reader().experiment(id) else {
        return not_found(format!("No experiment has the id {id}."));
    };
    let trimmed = rel.trim_end_matches('/');
    if trimmed.split('/').any(|p| p.starts_with('.')) {
        return not_found(format!("{rel} is not an experiment file."));
    }
    let dir = app.shared.config.results.join(&e.output);
    let target = if trimmed.is_empty() {
        Ok(dir.clone())
    } else {
        jobs::layout::confine(&dir, trimmed)
    };
    let Ok(target) = target else {
        return not_found(format!("{rel} is not a file of experiment {id}."));
    };
    let Ok(meta) = std::fs::symlink_metadata(&target) else {
        return not_found(format!("Experiment {id} has no file {rel}."));
    };
    if meta.is_dir() {
        return page_response(listing(&e.id, &e.name, trimmed, &target));
    }
    if !meta.is_file() {
        return not_found(format!("{rel} is not a plain file."));
    }
    if meta.len() > MAX_SERVED {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("{rel} is {} bytes: read it from the results directory", meta.len()),
        )
            .into_response();
    }
    match std::fs::read(&target) {
        Ok(bytes) => file_response(trimmed.rsplit('/').next().unwrap_or(trimmed), bytes),
        Err(err) => not_found(format!("{rel}: {err}")),
    }
}

fn listing(id: &str, name: &str, rel: &str, dir: &FsPath) -> Html {
    let mut entries: Vec<(bool, String, u64)> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|en| {
                    let n = en.file_name().into_string().ok()?;
                    let m = std::fs::symlink_metadata(en.path()).ok()?;
                    (!n.starts_with('.') && (m.is_dir() || m.is_file())).then(|| (!m.is_dir(), n, m.len()))
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    let more = entries.len() > MAX_LISTED;
    entries.truncate(MAX_LISTED);
    let base = if rel.is_empty() {
        format!("/experiments/{id}/files/")
    } else {
        format!("/experiments/{id}/files/{rel}/")
    };
    let mut b = html!(
        "<h1>{}</h1><p><a href=\"/experiments/{}\">back to the experiment</a></p><h2><code>{}/</code></h2>",
        Esc(name),
        Esc(id),
        Esc(if rel.is_empty() { "." } else { rel })
    );
    b.push_static(
        "<div class=\"scroll\"><table><thead><tr><th>name</th><th class=\"num\">bytes</th></tr></thead><tbody>",
    );
    for (file, n, len) in &entries {
        let slash = Html::trusted_static(if *file { "" } else { "/" });
        b.push(html!(
            "<tr><td><a href=\"{}{}{slash}\">{}{slash}</a></td><td class=\"num\">{}</td></tr>",
            Esc(&base),
            Esc(&percent_encoding::utf8_percent_encode(n, NAME).to_string()),
            Esc(n),
            if *file {
                html::int(*len)
            } else {
                Html::trusted_static("-")
            },
            slash = slash,
        ));
    }
    b.push_static("</tbody></table></div>");
    if more {
        b.push(html!(
            "<p class=\"muted\">The first {MAX_LISTED} entries are shown.</p>",
            MAX_LISTED = MAX_LISTED
        ));
    }
    html::page(&format!("{name}: files"), Nav::None, &b, None)
}
