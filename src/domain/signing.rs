//! Signed CDN URLs: `?expires=<unix>&signature=<hex HMAC-SHA256>` over the
//! account, the file, the expiry and, for an image variant, its canonical
//! parameters (`Transform::canonical`: a signature for one variant is no
//! signature for another, nor for the original); checked in constant time.
//! A stable link's signature (`/p/<account>/<path>`) covers the path
//! instead of a file ([`Subject::Path`]): it follows whatever is newest
//! there. The two never stand for each other (each its own prefix).

use super::secret::Secret;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

#[derive(Debug, Clone)]
pub struct Signer {
    secret: Secret,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Expired,
    Invalid,
}

/// What a signature covers: a file (by its id) or a path (whatever file is
/// newest there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject<'a> {
    File(&'a str),
    Path(&'a str),
}

impl Signer {
    pub fn new(secret: Secret) -> Signer {
        Signer { secret }
    }

    /// The S3 secret access key of the secret key `key_id` (CONTRACT §18):
    /// derived from the signing secret, so the database alone never
    /// reveals one, and the same on every node. 40 characters, as AWS's.
    pub fn s3_secret(&self, key_id: &str) -> String {
        use base64::Engine as _;
        let mut mac = HmacSha256::new_from_slice(self.secret.expose().as_bytes())
            .expect("HMAC takes any key length");
        mac.update(format!("s3-secret\n{key_id}").as_bytes());
        let bytes = mac.finalize().into_bytes();
        let mut text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes[..30]);
        text.truncate(40);
        text
    }

    fn mac(
        &self,
        account_id: &str,
        subject: Subject<'_>,
        expires: i64,
        scope: Option<&str>,
    ) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(self.secret.expose().as_bytes())
            .expect("HMAC takes any key length");
        // A path holds no control character: the newlines stay separators.
        let (whole, variant, subject) = match subject {
            Subject::File(id) => ("v1", "v2", id),
            Subject::Path(path) => ("p1", "p2", path),
        };
        match scope {
            None => mac.update(format!("{whole}\n{account_id}\n{subject}\n{expires}").as_bytes()),
            Some(scope) => mac.update(
                format!("{variant}\n{account_id}\n{subject}\n{expires}\n{scope}").as_bytes(),
            ),
        }
        mac
    }

    /// The signature of a stable link to `path` until `expires` (of the
    /// file there, or of one variant of it).
    pub fn sign_path(
        &self,
        account_id: &str,
        path: &str,
        expires: i64,
        scope: Option<&str>,
    ) -> String {
        let mac = self.mac(account_id, Subject::Path(path), expires, scope);
        hex::encode(mac.finalize().into_bytes())
    }

    /// The signature of a URL of `file_id` until `expires`, of the file
    /// itself (`scope` None) or of one variant of it.
    pub fn sign(
        &self,
        account_id: &str,
        file_id: &str,
        expires: i64,
        scope: Option<&str>,
    ) -> String {
        hex::encode(
            self.mac(account_id, Subject::File(file_id), expires, scope)
                .finalize()
                .into_bytes(),
        )
    }

    /// Checks a signature of file `file_id` in constant time, then its
    /// expiry against `now` (unix seconds).
    pub fn verify(
        &self,
        account_id: &str,
        file_id: &str,
        expires: i64,
        scope: Option<&str>,
        signature: &str,
        now: i64,
    ) -> Verdict {
        let subject = Subject::File(file_id);
        self.verify_subject(account_id, subject, expires, scope, signature, now)
    }

    /// Checks a signature of `subject` in constant time, then its expiry
    /// against `now` (unix seconds).
    pub fn verify_subject(
        &self,
        account_id: &str,
        subject: Subject<'_>,
        expires: i64,
        scope: Option<&str>,
        signature: &str,
        now: i64,
    ) -> Verdict {
        let Ok(given) = hex::decode(signature) else {
            return Verdict::Invalid;
        };
        let expected = self
            .mac(account_id, subject, expires, scope)
            .finalize()
            .into_bytes();
        if given.len() != expected.len() || !bool::from(expected.as_slice().ct_eq(&given)) {
            return Verdict::Invalid;
        }
        if now >= expires {
            Verdict::Expired
        } else {
            Verdict::Valid
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_has_its_own_stable_s3_secret_of_40_characters() {
        let s = Signer::new(Secret::new("k"));
        let a = s.s3_secret("key_a");
        assert_eq!(a.len(), 40);
        assert_eq!(a, s.s3_secret("key_a"));
        assert_ne!(a, s.s3_secret("key_b"));
        assert_ne!(a, Signer::new(Secret::new("other")).s3_secret("key_a"));
    }

    #[test]
    fn a_paths_signature_is_no_files_and_follows_only_its_path() {
        let s = Signer::new(Secret::new("k"));
        let sig = s.sign_path("acc_1", "a/b.txt", 1000, None);
        let path = |p| Subject::Path(p);
        assert_eq!(
            s.verify_subject("acc_1", path("a/b.txt"), 1000, None, &sig, 999),
            Verdict::Valid
        );
        assert_eq!(
            s.verify_subject("acc_1", path("a/b.txt"), 1000, None, &sig, 1000),
            Verdict::Expired
        );
        for (acc, p) in [("acc_1", "a/c.txt"), ("acc_2", "a/b.txt")] {
            assert_eq!(
                s.verify_subject(acc, path(p), 1000, None, &sig, 1),
                Verdict::Invalid
            );
        }
        assert_eq!(
            s.verify("acc_1", "a/b.txt", 1000, None, &sig, 1),
            Verdict::Invalid
        );
        let file = s.sign("acc_1", "f_1", 1000, None);
        assert_eq!(
            s.verify_subject("acc_1", path("f_1"), 1000, None, &file, 1),
            Verdict::Invalid
        );
        let variant = s.sign_path("acc_1", "a/b.txt", 1000, Some("w=10"));
        assert_eq!(
            s.verify_subject("acc_1", path("a/b.txt"), 1000, None, &variant, 1),
            Verdict::Invalid
        );
    }

    #[test]
    fn sign_verify_tamper_expire() {
        let s = Signer::new(Secret::new("k"));
        let sig = s.sign("acc_1", "f_1", 1000, None);
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, None, &sig, 999),
            Verdict::Valid
        );
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, None, &sig, 1000),
            Verdict::Expired
        );
        assert_eq!(
            s.verify("acc_1", "f_2", 1000, None, &sig, 1),
            Verdict::Invalid
        );
        assert_eq!(
            s.verify("acc_1", "f_1", 1001, None, &sig, 1),
            Verdict::Invalid
        );
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, None, "zz", 1),
            Verdict::Invalid
        );
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, None, &sig[..10], 1),
            Verdict::Invalid
        );
        let other = Signer::new(Secret::new("other"));
        assert_eq!(
            other.verify("acc_1", "f_1", 1000, None, &sig, 1),
            Verdict::Invalid
        );
    }

    #[test]
    fn a_variant_signature_covers_its_parameters_only() {
        let s = Signer::new(Secret::new("k"));
        let w = "w=256&h=&fit=inside&format=&q=80";
        let sig = s.sign("acc_1", "f_1", 1000, Some(w));
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, Some(w), &sig, 1),
            Verdict::Valid
        );
        let other = "w=4096&h=&fit=inside&format=&q=80";
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, Some(other), &sig, 1),
            Verdict::Invalid
        );
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, None, &sig, 1),
            Verdict::Invalid
        );
        let plain = s.sign("acc_1", "f_1", 1000, None);
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, Some(w), &plain, 1),
            Verdict::Invalid
        );
    }
}
