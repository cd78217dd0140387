//! A signed URL's query: only the signature made for it is valid (its hex
//! in any case: it is the same MAC).
#![no_main]
use filestore::testing::domain::secret::Secret;
use filestore::testing::domain::signing::{Signer, Verdict};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, i64, &str)| {
    let (file, sig, expires, account) = input;
    let s = Signer::new(Secret::new("a secret of enough length for the fuzzer"));
    let good = s.sign(account, file, expires, None);
    let verdict = s.verify(account, file, expires, None, sig, i64::MIN);
    let same = sig.to_ascii_lowercase() == good;
    assert_eq!(verdict == Verdict::Valid, same && expires > i64::MIN);
});
