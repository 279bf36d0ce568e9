//! Embeds the web UI: the sources under the workspace's `ui/` and the dist files of pinned npm
//! packages (bpmn-js, dmn-js, form-js, htm), into a sorted table of `include_bytes!` in
//! `OUT_DIR/assets.rs`.
//!
//! Each tarball is taken from `ZEST_UI_VENDOR_DIR` (a folder of `<name>-<version>.tgz`), else
//! from the cache under the target directory, else downloaded from the npm registry
//! (`npm_config_registry`, default `https://registry.npmjs.org`); in every case its SHA-512 must
//! be the pinned integrity (as a package-lock holds it), or the build fails.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::{env, fs};

use base64::Engine as _;
use sha2::{Digest, Sha256, Sha512};

/// One pinned npm package and the files of it the UI serves (a path ending in `/` takes the
/// folder). Upgrading one: its version, the registry's `dist.integrity`, and the file names.
struct Package {
    name: &'static str,
    version: &'static str,
    integrity: &'static str,
    files: &'static [&'static str],
}

const PACKAGES: &[Package] = &[
    Package {
        name: "htm",
        version: "3.1.1",
        integrity: "sha512-983Vyg8NwUE7JkZ6NmOqpCZ+sh1bKv2iYTlUkzlWmA5JD2acKoxd4KVxbMmxX/85mtfdnDmTFoNKcg5DGAvxNQ==",
        files: &["preact/standalone.module.js", "LICENSE"],
    },
    Package {
        name: "bpmn-js",
        version: "18.31.1",
        integrity: "sha512-Hc7LzrgwfcBRUAdI/380Q2v1MJ115atGEVGadawLfDbHdo+r+IkmNj8fuYPFmWglUYt1KYIaC46OeX16HGTKQw==",
        files: &[
            "dist/bpmn-navigated-viewer.production.min.js",
            "dist/assets/",
            "LICENSE",
        ],
    },
    Package {
        name: "dmn-js",
        version: "17.10.2",
        integrity: "sha512-AIONwKnrDoIIfVwv7iLmNNLKcF6bcKf1fkoB9euEyhaOTbi6p/InCoVQWitVqCrBXqw3aCpNCuql71xj79penQ==",
        files: &["dist/dmn-viewer.production.min.js", "dist/assets/", "LICENSE"],
    },
    Package {
        name: "@bpmn-io/form-js",
        version: "1.23.0",
        integrity: "sha512-C5IQiejaeBv5rhhpr9DuyCaPcV8iRAhu0kXxA4RoLgp0l4dwOaqLWm1T8Blw99morRlIGadQoQZaVUE9C/pN3w==",
        files: &[
            "dist/form-viewer.umd.js",
            "dist/assets/form-js.css",
            "dist/assets/form-js-base.css",
            "dist/assets/flatpickr/",
            "LICENSE",
        ],
    },
];

/// The most a tarball may hold (the largest is under 2 MB), so a wrong file cannot fill memory.
const MAX_TARBALL: u64 = 64 << 20;

/// One embedded file: its path under the build's prefix, where its bytes are, and its gzip
/// form when that is worth serving.
struct Asset {
    path: String,
    file: PathBuf,
    etag: String,
    gzip: Option<PathBuf>,
}

/// Text compresses (the bundles to a quarter); fonts but woff and woff2 too.
const COMPRESSED: &[&str] = &["js", "css", "svg", "json", "ttf", "eot", "html"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ZEST_UI_VENDOR_DIR");
    println!("cargo:rerun-if-env-changed=npm_config_registry");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let ui = manifest.join("../../ui");
    println!("cargo:rerun-if-changed={}", ui.display());
    let mut assets = Vec::new();
    for package in PACKAGES {
        let tarball = tarball(package, &out);
        assets.extend(extract(package, &tarball, &out.join("vendor")));
    }
    sources(&ui, &ui, &mut assets);
    assets.retain(|a| a.path != "index.html");
    assets.sort_by(|a, b| a.path.cmp(&b.path));
    for a in &mut assets {
        a.gzip = gzip(a, &out.join("gzip"));
    }
    let build = build_id(&assets);
    let index = fs::read_to_string(ui.join("index.html"))
        .unwrap_or_else(|e| panic!("{}: {e}", ui.join("index.html").display()))
        .replace("{{BUILD}}", &format!("/ui/{build}"));
    let index_file = out.join("index.html");
    fs::write(&index_file, &index).expect("OUT_DIR is writable");
    let table = table(&build, &index_file, &digest(index.as_bytes()), &assets);
    fs::write(out.join("assets.rs"), table).expect("OUT_DIR is writable");
}

/// The package's tarball, checked against its integrity: from `ZEST_UI_VENDOR_DIR`, the
/// cache, or the registry (then kept in the cache).
fn tarball(package: &Package, out: &Path) -> Vec<u8> {
    let file = tarball_name(package);
    if let Some(dir) = env::var_os("ZEST_UI_VENDOR_DIR") {
        let path = Path::new(&dir).join(&file);
        let bytes = fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "ZEST_UI_VENDOR_DIR: {}: {e} (it must hold {file}, npm's tarball of {}@{})",
                path.display(),
                package.name,
                package.version
            )
        });
        check(package, &bytes, &path.display().to_string());
        return bytes;
    }
    let cache = cache_dir(out).join(&file);
    if let Ok(bytes) = fs::read(&cache) {
        if integrity(&bytes) == package.integrity {
            return bytes;
        }
    }
    let url = tarball_url(package);
    let bytes = download(&url);
    check(package, &bytes, &url);
    if let Some(dir) = cache.parent() {
        // a cache that cannot be written costs the next build a download, nothing else
        let tmp = dir.join(format!("{file}.{}", std::process::id()));
        if fs::create_dir_all(dir).is_ok() && fs::write(&tmp, &bytes).is_ok() {
            let _ = fs::rename(&tmp, &cache);
        }
    }
    bytes
}

/// npm's file name of a tarball: `form-js-1.23.0.tgz` for `@bpmn-io/form-js`.
fn tarball_name(package: &Package) -> String {
    let base = package.name.rsplit('/').next().unwrap_or(package.name);
    format!("{base}-{}.tgz", package.version)
}

fn tarball_url(package: &Package) -> String {
    let registry = env::var("npm_config_registry")
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "https://registry.npmjs.org".into());
    let registry = registry.trim_end_matches('/');
    format!("{registry}/{}/-/{}", package.name, tarball_name(package))
}

/// `<target>/zest-ui-vendor`: OUT_DIR is `<target>/[<triple>/]<profile>/build/<crate>-<hash>/out`.
fn cache_dir(out: &Path) -> PathBuf {
    let target = out.ancestors().nth(4).unwrap_or(out);
    target.join("zest-ui-vendor")
}

fn download(url: &str) -> Vec<u8> {
    let fail = |e: &dyn std::fmt::Display| -> ! {
        panic!(
            "downloading {url}: {e}\n(zest-ui embeds the web UI's npm packages: let the build reach \
             the npm registry once (npm_config_registry names another), or set ZEST_UI_VENDOR_DIR \
             to a folder of the tarballs)"
        )
    };
    // the system's trust store (as curl and npm), not a compiled-in list
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder().tls_config(tls).build().into();
    let mut response = agent.get(url).call().unwrap_or_else(|e| fail(&e));
    let mut bytes = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(MAX_TARBALL + 1)
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| fail(&e));
    if bytes.len() as u64 > MAX_TARBALL {
        fail(&"larger than 64 MiB");
    }
    bytes
}

fn check(package: &Package, bytes: &[u8], from: &str) {
    let got = integrity(bytes);
    assert!(
        got == package.integrity,
        "{from}: {}@{} has integrity {got}, not the pinned {}",
        package.name,
        package.version,
        package.integrity
    );
}

fn integrity(bytes: &[u8]) -> String {
    let sum = Sha512::digest(bytes);
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(sum.as_slice())
    )
}

/// Unpacks the package's listed files into `vendor/<name>/`, each an asset
/// `vendor/<name>/<path>` (`@bpmn-io/form-js` is `form-js`).
fn extract(package: &Package, tarball: &[u8], vendor: &Path) -> Vec<Asset> {
    let short = package.name.rsplit('/').next().unwrap_or(package.name);
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tarball));
    let mut assets = Vec::new();
    let entries = archive.entries().expect("a pinned tarball is a tar.gz");
    for entry in entries {
        let mut entry = entry.expect("a pinned tarball reads");
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .expect("tar paths")
            .to_string_lossy()
            .into_owned();
        let Some(path) = name.strip_prefix("package/") else {
            continue;
        };
        let wanted = package.files.iter().any(|f| {
            if f.ends_with('/') {
                path.starts_with(f)
            } else {
                path == *f
            }
        });
        if !wanted || path.split('/').any(|p| p == ".." || p.is_empty()) {
            continue;
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .expect("a pinned tarball reads");
        let file = vendor.join(short).join(path);
        fs::create_dir_all(file.parent().expect("a file has a folder")).expect("OUT_DIR");
        fs::write(&file, &bytes).expect("OUT_DIR is writable");
        assets.push(Asset {
            path: format!("vendor/{short}/{path}"),
            etag: digest(&bytes),
            file,
            gzip: None,
        });
    }
    for f in package.files.iter().filter(|f| !f.ends_with('/')) {
        let path = format!("vendor/{short}/{f}");
        assert!(
            assets.iter().any(|a| a.path == path),
            "{}@{} has no {f}",
            package.name,
            package.version
        );
    }
    assets
}

/// The files under `ui/` (not hidden ones), each an asset by its path below `ui/`.
fn sources(root: &Path, dir: &Path, assets: &mut Vec<Asset>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.expect("ui/ reads");
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            sources(root, &path, assets);
            continue;
        }
        let rel = path.strip_prefix(root).expect("below ui/");
        let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assets.push(Asset {
            path: rel.to_string_lossy().replace('\\', "/"),
            etag: digest(&bytes),
            file: path.canonicalize().expect("an existing file"),
            gzip: None,
        });
    }
}

/// The file gzipped into `dir`, when its type compresses and it is over 1 KiB and shrinks by a
/// tenth at least.
fn gzip(asset: &Asset, dir: &Path) -> Option<PathBuf> {
    let ext = asset.path.rsplit_once('.').map(|(_, e)| e)?;
    let bytes = fs::read(&asset.file).expect("an embedded file reads");
    if !COMPRESSED.contains(&ext) || bytes.len() < 1024 {
        return None;
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut encoder, &bytes).expect("in memory");
    let packed = encoder.finish().expect("in memory");
    if packed.len() * 10 > bytes.len() * 9 {
        return None;
    }
    let file = dir.join(format!("{}.gz", asset.path));
    fs::create_dir_all(file.parent().expect("a file has a folder")).expect("OUT_DIR");
    fs::write(&file, packed).expect("OUT_DIR is writable");
    Some(file)
}

/// A digest of every embedded file: the app's prefix changes whenever any file does.
fn build_id(assets: &[Asset]) -> String {
    let mut all = String::new();
    for a in assets {
        let _ = writeln!(all, "{} {}", a.path, a.etag);
    }
    digest(all.as_bytes())[..12].to_string()
}

/// The first 16 bytes of the SHA-256, in hex.
fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    sum.iter().take(16).fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn table(build: &str, index: &Path, index_etag: &str, assets: &[Asset]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "pub const BUILD: &str = {build:?};");
    let _ = writeln!(
        t,
        "pub static INDEX: Asset = Asset {{ path: \"index.html\", etag: {index_etag:?}, bytes: include_bytes!({:?}), gzip: None }};",
        index.display().to_string()
    );
    let _ = writeln!(t, "pub static ASSETS: &[Asset] = &[");
    for a in assets {
        let gzip = match &a.gzip {
            Some(f) => format!("Some(include_bytes!({:?}))", f.display().to_string()),
            None => "None".into(),
        };
        let _ = writeln!(
            t,
            "    Asset {{ path: {:?}, etag: {:?}, bytes: include_bytes!({:?}), gzip: {gzip} }},",
            a.path,
            a.etag,
            a.file.display().to_string()
        );
    }
    let _ = writeln!(t, "];");
    t
}
