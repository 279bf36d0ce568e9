//! Certificates made at test time (nothing secret is checked in): a CA, and the server
//! certificates it signs for 127.0.0.1 and localhost.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

/// A CA made for the test, and the certificates it signs for 127.0.0.1 and localhost.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        TestCa {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// Writes the CA as `<name>-ca.pem` in `dir`, and returns its path.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(format!("{name}-ca.pem"));
        std::fs::write(&path, &self.pem).unwrap();
        path
    }

    /// A server certificate and its key, written to `cert` and `key`.
    pub fn issue(&self, cert: &Path, key: &Path) {
        let params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        let pair = KeyPair::generate().unwrap();
        let signed = params.signed_by(&pair, &self.issuer).unwrap();
        // written aside and renamed, as certificate managers do, so a reload never reads half
        for (path, text) in [(key, pair.serialize_pem()), (cert, signed.pem())] {
            let partial = path.with_extension("partial");
            std::fs::write(&partial, text).unwrap();
            std::fs::rename(&partial, path).unwrap();
        }
    }
}
