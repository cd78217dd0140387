//! Signed CDN URLs: `?expires=<unix>&signature=<hex HMAC-SHA256>` over the
//! account, the file, the expiry and, for an image variant, its canonical
//! parameters (`Transform::canonical`: a signature for one variant is no
//! signature for another, nor for the original); checked in constant time.

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

impl Signer {
    pub fn new(secret: Secret) -> Signer {
        Signer { secret }
    }

    fn mac(
        &self,
        account_id: &str,
        file_id: &str,
        expires: i64,
        scope: Option<&str>,
    ) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(self.secret.expose().as_bytes())
            .expect("HMAC takes any key length");
        match scope {
            None => mac.update(format!("v1\n{account_id}\n{file_id}\n{expires}").as_bytes()),
            Some(scope) => {
                mac.update(format!("v2\n{account_id}\n{file_id}\n{expires}\n{scope}").as_bytes());
            }
        }
        mac
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
            self.mac(account_id, file_id, expires, scope)
                .finalize()
                .into_bytes(),
        )
    }

    /// Checks a signature in constant time, then its expiry against `now` (unix seconds).
    pub fn verify(
        &self,
        account_id: &str,
        file_id: &str,
        expires: i64,
        scope: Option<&str>,
        signature: &str,
        now: i64,
    ) -> Verdict {
        let Ok(given) = hex::decode(signature) else {
            return Verdict::Invalid;
        };
        let expected = self
            .mac(account_id, file_id, expires, scope)
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
