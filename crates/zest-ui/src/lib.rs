//! The web UI (issue 61; `docs/design/ui.md`): the single-page app under the workspace's `ui/`
//! and the pinned bpmn.io bundles, embedded at build time (`build.rs`) and served at Camunda's
//! paths. It knows nothing of the engine: the app reads and acts through the REST API v2 only.
//!
//! - `/` redirects to `/operate`;
//! - `/operate`, `/tasklist` and every path below them answer the app's page (History API
//!   routing: a deep link or a reload lands on the app), `no-cache` with an `ETag`;
//! - `/ui/<build>/<file>` answers an embedded file, `immutable` (the build's digest is in the
//!   path); any other path under `/ui/` is a 404.
//!
//! The router has no fallback, so it merges with the REST API's (which answers the rest).

use axum::extract::Path;
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, LOCATION,
    VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One embedded file, with its gzip form when that is worth serving.
pub struct Asset {
    path: &'static str,
    etag: &'static str,
    bytes: &'static [u8],
    gzip: Option<&'static [u8]>,
}

mod embedded {
    use super::Asset;
    include!(concat!(env!("OUT_DIR"), "/assets.rs"));
}

/// The digest of the embedded files: the app's files are under `/ui/<BUILD>/`.
pub const BUILD: &str = embedded::BUILD;

/// The UI's routes, to merge with the REST API's on the REST port.
pub fn router() -> Router {
    Router::new()
        .route("/", get(|| async { redirect("/operate") }))
        .route("/operate", get(app))
        .route("/operate/", get(app))
        .route("/operate/{*route}", get(app))
        .route("/tasklist", get(app))
        .route("/tasklist/", get(app))
        .route("/tasklist/{*route}", get(app))
        .route("/ui/{*path}", get(asset))
}

fn redirect(to: &'static str) -> Response {
    (
        StatusCode::FOUND,
        [(LOCATION, HeaderValue::from_static(to))],
    )
        .into_response()
}

/// The page's policy: scripts, styles and fonts of this server only (the bpmn.io libraries set
/// inline styles and embed their fonts as `data:`), no framing by other sites.
const CSP: &str = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
                   font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

async fn app(headers: HeaderMap) -> Response {
    let mut response = serve(&embedded::INDEX, &headers, "no-cache");
    response.headers_mut().insert(
        axum::http::header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    response
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    match find(&path) {
        Some(asset) => serve(asset, &headers, "public, max-age=31536000, immutable"),
        None => (
            StatusCode::NOT_FOUND,
            [(CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("no such file: /ui/{path}\n"),
        )
            .into_response(),
    }
}

/// The embedded file at `<BUILD>/<file>` (a path of another build is not found).
fn find(path: &str) -> Option<&'static Asset> {
    let file = path.strip_prefix(BUILD)?.strip_prefix('/')?;
    let assets = embedded::ASSETS;
    let at = assets.binary_search_by(|a| a.path.cmp(file)).ok()?;
    Some(&assets[at])
}

/// The file (gzipped when the client takes gzip and it has that form), or 304 when the client
/// holds it (`If-None-Match` names its ETag, one per form).
fn serve(asset: &'static Asset, headers: &HeaderMap, cache: &'static str) -> Response {
    let gzip = asset.gzip.filter(|_| accepts_gzip(headers));
    let etag = match gzip {
        Some(_) => format!("\"{}-gz\"", asset.etag),
        None => format!("\"{}\"", asset.etag),
    };
    let cached = headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/") == etag
        });
    let common = [
        (ETAG, etag),
        (CACHE_CONTROL, cache.to_string()),
        (
            axum::http::header::X_CONTENT_TYPE_OPTIONS,
            "nosniff".to_string(),
        ),
    ];
    let mut response = if cached {
        (StatusCode::NOT_MODIFIED, common).into_response()
    } else {
        let body = gzip.unwrap_or(asset.bytes);
        (common, [(CONTENT_TYPE, content_type(asset.path))], body).into_response()
    };
    let ok = response.status() == StatusCode::OK;
    let h = response.headers_mut();
    if asset.gzip.is_some() {
        h.insert(VARY, HeaderValue::from_static("accept-encoding"));
    }
    if gzip.is_some() && ok {
        h.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// Whether `Accept-Encoding` takes gzip (named, or `*`, without `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// The content type of the embedded file types, by extension.
fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "eot" => "application/vnd.ms-fontobject",
        "bpmn" | "dmn" | "xml" => "application/xml",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_has_a_known_type_and_the_table_is_sorted() {
        let assets = embedded::ASSETS;
        for a in assets {
            // licences have no extension; everything the browser loads must have its type
            if !a.path.ends_with("LICENSE") {
                assert_ne!(
                    content_type(a.path),
                    "application/octet-stream",
                    "{}",
                    a.path
                );
            }
        }
        assert!(assets.windows(2).all(|w| w[0].path < w[1].path));
        let index = std::str::from_utf8(embedded::INDEX.bytes).expect("utf-8");
        assert!(index.contains(&format!("/ui/{BUILD}/")));
        assert!(!index.contains("{{BUILD}}"));
    }

    #[test]
    fn takes_gzip_unless_refused() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            accepts_gzip(&h)
        };
        assert!(with("gzip, deflate, br, zstd"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(with("*"));
        assert!(!with("gzip;q=0, br"));
        assert!(!with("deflate, br"));
        assert!(!accepts_gzip(&HeaderMap::new()));
        let viewer = find(&format!(
            "{BUILD}/vendor/bpmn-js/dist/bpmn-navigated-viewer.production.min.js"
        ))
        .unwrap();
        let packed = viewer.gzip.expect("the viewer is served gzipped");
        assert!(packed.len() * 2 < viewer.bytes.len());
    }

    #[test]
    fn finds_files_of_this_build_only() {
        let viewer = "vendor/bpmn-js/dist/bpmn-navigated-viewer.production.min.js";
        assert!(find(&format!("{BUILD}/{viewer}")).is_some());
        assert!(find(&format!("000000000000/{viewer}")).is_none());
        assert!(find(&format!("{BUILD}/vendor/bpmn-js/nothing.js")).is_none());
        assert!(find(viewer).is_none());
    }
}
