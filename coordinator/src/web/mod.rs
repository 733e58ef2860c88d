//! The web view (docs/web.md): read-only pages of the coordinator's
//! experiments, their live progress, report and files, and its workers,
//! served by axum on their own listener (`--web-listen`). Pages are
//! rendered here, on the server; `assets/live.js` only re-fetches a page
//! and swaps its `[data-live]` parts, so the static parts work without
//! JavaScript. Every asset is embedded in the binary.
//!
//! Security: with a token (the coordinator's, or a separate read-only
//! `--web-token`) every request needs it, as `Authorization: Bearer` or
//! as the cookie the login form sets; every string from a spec, a worker or
//! a file is escaped; a Content-Security-Policy allows scripts from this
//! origin only; nothing but the login form takes a POST, and no request
//! changes the coordinator's state.

mod html;
mod live;
mod markdown;
mod pages;
mod results;
mod training;
mod workers;

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use sha2::{Digest, Sha256};

use crate::Token;
use crate::shared::Shared;

/// The state every handler shares.
#[derive(Debug)]
pub(crate) struct App {
    pub shared: Arc<Shared>,
    /// The tokens a viewer may give (the coordinator's and `--web-token`),
    /// each with the value of the cookie it signs in as.
    keys: Vec<(Arc<[u8]>, String)>,
    pub live: live::LiveReports,
}

/// The cookie the login form sets: a digest of the token, never the token.
const COOKIE: &str = "muggins_view";

impl App {
    fn cookie_value(token: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(b"web view cookie\0");
        h.update(token);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether the view accepts a request giving `bearer` (a token) or
    /// `cookie` (the sign-in cookie's value); always when no token is set.
    fn accepts(&self, bearer: Option<&[u8]>, cookie: Option<&[u8]>) -> bool {
        use subtle::ConstantTimeEq;
        self.keys.is_empty()
            || self.keys.iter().any(|(token, value)| {
                let by_bearer = bearer.is_some_and(|b| bool::from(b.ct_eq(token)));
                let by_cookie = cookie.is_some_and(|c| bool::from(c.ct_eq(value.as_bytes())));
                by_bearer || by_cookie
            })
    }

    /// Whether the request carries a token the view accepts.
    fn allowed(&self, headers: &HeaderMap) -> bool {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|c| c.trim().strip_prefix(COOKIE).and_then(|r| r.strip_prefix('=')));
        self.accepts(bearer.map(str::as_bytes), cookie.map(str::as_bytes))
    }
}

/// Headers every response of the view carries.
fn harden(resp: &mut Response) {
    let h = resp.headers_mut();
    h.entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
}

/// Refuses requests without an accepted token (the login page for a
/// browser) and hardens every response.
async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let open = req.uri().path() == "/login" || req.uri().path().starts_with("/assets/");
    let mut resp = if open || app.allowed(req.headers()) {
        next.run(req).await
    } else {
        crate::metrics::Metrics::inc(&app.shared.metrics.unauthenticated);
        let next_path = req.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
        (StatusCode::UNAUTHORIZED, page_response(login_page(&next_path, false))).into_response()
    };
    harden(&mut resp);
    resp
}

pub(crate) fn page_response(page: html::Html) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page.into_string()).into_response()
}

fn login_page(next: &str, wrong: bool) -> html::Html {
    let note = html::Html::trusted_static(if wrong {
        "<p class=\"bad\" role=\"alert\">That token is not accepted.</p>"
    } else {
        ""
    });
    let body = html::html!(
        "<h1>Sign in</h1>{note}<p>This coordinator's web view needs its token (the coordinator's <code>--token</code> \
         or its read-only <code>--web-token</code>).</p>\
         <form method=\"post\" action=\"/login\"><input type=\"hidden\" name=\"next\" value=\"{}\">\
         <label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required autofocus></label> \
         <button type=\"submit\">Sign in</button></form>",
        html::Esc(next),
        note = note,
    );
    html::page("Sign in", html::Nav::None, &body, None)
}

/// Decodes one `application/x-www-form-urlencoded` value.
fn form_value(body: &str, key: &str) -> Option<String> {
    body.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| {
            percent_encoding::percent_decode_str(&v.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

/// `POST /login`: sets the cookie for a right token and goes back to the
/// page asked for (a path on this site only).
async fn login(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let body = String::from_utf8_lossy(&body);
    let token = form_value(&body, "token").unwrap_or_default();
    let next = form_value(&body, "next")
        .filter(|n| n.starts_with('/') && !n.starts_with("//") && !n.contains('\\'))
        .unwrap_or_else(|| "/".into());
    if token.is_empty() || !app.accepts(Some(token.as_bytes()), None) {
        crate::metrics::Metrics::inc(&app.shared.metrics.unauthenticated);
        return (StatusCode::UNAUTHORIZED, page_response(login_page(&next, true))).into_response();
    }
    let cookie = format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        App::cookie_value(token.as_bytes())
    );
    let mut resp = Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(header::LOCATION, next)
        .body(Body::empty())
        .expect("a valid response");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

const STYLE: &str = include_str!("assets/style.css");
const LIVE_JS: &str = include_str!("assets/live.js");

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        body,
    )
        .into_response()
}

/// A page rendered off the async threads (it reads the store and files).
pub(crate) async fn blocking(f: impl FnOnce() -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("the page failed: {e}")).into_response())
}

/// A plain-text error page.
pub(crate) fn not_found(what: String) -> Response {
    let body = html::html!(
        "<h1>Not found</h1><p>{}</p><p><a href=\"/\">All experiments</a></p>",
        html::Esc(&what)
    );
    (
        StatusCode::NOT_FOUND,
        page_response(html::page("Not found", html::Nav::None, &body, None)),
    )
        .into_response()
}

/// The view's routes.
pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(pages::experiments))
        .route("/experiments/{id}", get(pages::experiment))
        .route("/experiments/{id}/live/{name}", get(results::live_file))
        .route("/experiments/{id}/files/{*path}", get(results::file))
        .route("/experiments/{id}/files/", get(results::listing_root))
        .route("/workers", get(workers::page))
        .route("/training", get(training::list))
        .route("/training/{name}", get(training::run))
        .route("/training/{name}/{file}", get(training::file))
        .route("/api/experiments", get(pages::experiments_json))
        .route("/login", post(login))
        .route(
            "/assets/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route(
            "/assets/live.js",
            get(|| async { asset("text/javascript; charset=utf-8", LIVE_JS) }),
        )
        .fallback(|method: Method| async move {
            if method == Method::GET || method == Method::HEAD {
                not_found("There is no such page.".into())
            } else {
                (StatusCode::METHOD_NOT_ALLOWED, "the web view is read-only").into_response()
            }
        })
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

/// Serves the web view on `listener` until `shutdown` resolves. `tokens`:
/// those a viewer may give (none set: the view is open).
pub async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    tokens: Vec<Token>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let keys = tokens
        .iter()
        .filter_map(|t| t.0.clone())
        .map(|t| {
            let cookie = App::cookie_value(&t);
            (t, cookie)
        })
        .collect();
    let app = Arc::new(App {
        shared,
        keys,
        live: live::LiveReports::default(),
    });
    axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown)
        .await
}
