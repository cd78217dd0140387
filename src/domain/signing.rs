//! Signed CDN URLs: `?expires=<unix>&signature=<hex HMAC-SHA256>` over the
//! account, the file and the expiry; checked in constant time.

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

    fn mac(&self, account_id: &str, file_id: &str, expires: i64) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(self.secret.expose().as_bytes())
            .expect("HMAC takes any key length");
        mac.update(format!("v1\n{account_id}\n{file_id}\n{expires}").as_bytes());
        mac
    }

    pub fn sign(&self, account_id: &str, file_id: &str, expires: i64) -> String {
        hex::encode(
            self.mac(account_id, file_id, expires)
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
        signature: &str,
        now: i64,
    ) -> Verdict {
        let Ok(given) = hex::decode(signature) else {
            return Verdict::Invalid;
        };
        let expected = self
            .mac(account_id, file_id, expires)
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
        let sig = s.sign("acc_1", "f_1", 1000);
        assert_eq!(s.verify("acc_1", "f_1", 1000, &sig, 999), Verdict::Valid);
        assert_eq!(s.verify("acc_1", "f_1", 1000, &sig, 1000), Verdict::Expired);
        assert_eq!(s.verify("acc_1", "f_2", 1000, &sig, 1), Verdict::Invalid);
        assert_eq!(s.verify("acc_1", "f_1", 1001, &sig, 1), Verdict::Invalid);
        assert_eq!(s.verify("acc_1", "f_1", 1000, "zz", 1), Verdict::Invalid);
        assert_eq!(
            s.verify("acc_1", "f_1", 1000, &sig[..10], 1),
            Verdict::Invalid
        );
        let other = Signer::new(Secret::new("other"));
        assert_eq!(
            other.verify("acc_1", "f_1", 1000, &sig, 1),
            Verdict::Invalid
        );
    }
}
