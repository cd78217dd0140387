//! Bucket and key to folder and name (CONTRACT §18): bucket `B` is the
//! account's top-level folder `B`; key `dir/sub/x.txt` of `B` is the file
//! named `x.txt` in folder `B/dir/sub`; a key ending in `/` is a folder
//! marker. Pure rules, unit-tested here.

use crate::domain::validate;
use s3s::{s3_error, S3Error};

/// The most bytes an S3 key holds.
const MAX_KEY: usize = 1024;

/// What a bucket and key name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A file: its folder (the bucket and the key's directories) and name.
    File { folder: String, name: String },
    /// A folder marker: its whole path, ending in `/` (`B/dir/`).
    Marker { path: String },
}

impl Target {
    /// The path as `list_paths` orders it (`folder/name`, or the marker's).
    pub(crate) fn path(&self) -> String {
        match self {
            Target::File { folder, name } => format!("{folder}/{name}"),
            Target::Marker { path } => path.clone(),
        }
    }
}

/// Where `key` of `bucket` lives, or S3's refusal of it: 1–1024 bytes
/// (`KeyTooLongError` past it); no empty, `.` or `..` segment but a
/// marker's trailing one; no control character; segments of at most 255
/// bytes; otherwise as /v1's folders and names (`domain::validate`).
pub(crate) fn target(bucket: &str, key: &str) -> Result<Target, S3Error> {
    if key.is_empty() {
        return Err(invalid("The key must not be empty"));
    }
    if key.len() > MAX_KEY {
        return Err(s3_error!(
            KeyTooLongError,
            "Your key is longer than {MAX_KEY} bytes"
        ));
    }
    let (dirs, name) = match key.strip_suffix('/') {
        Some(dirs) => (dirs, None),
        None => match key.rsplit_once('/') {
            Some((dirs, name)) => (dirs, Some(name)),
            None => ("", Some(key)),
        },
    };
    let mut folder = bucket.to_string();
    if !dirs.is_empty() {
        folder.push('/');
        folder.push_str(dirs);
    }
    if key.starts_with('/') || (key.ends_with('/') && dirs.is_empty()) {
        return Err(invalid("A key's segments must not be empty"));
    }
    let folder = match validate::folder(&folder) {
        Ok(Some(f)) if f == folder => f,
        Ok(_) => return Err(invalid("A key's segments must not be empty")),
        Err(why) => return Err(invalid(&format!("Invalid key: {why}"))),
    };
    match name {
        None => Ok(Target::Marker {
            path: format!("{folder}/"),
        }),
        Some(name) => {
            // The name is kept verbatim: no directory part is stripped
            // (a `\` stays in it).
            if name.contains('\\') {
                // /v1's rule (`validate::file_name`) would cut there.
                check_segment(name)?;
            } else {
                match validate::file_name(name) {
                    Ok(n) if n == name => {}
                    Ok(_) => return Err(invalid("Invalid key")),
                    Err(why) => return Err(invalid(&format!("Invalid key: {why}"))),
                }
            }
            Ok(Target::File {
                folder,
                name: name.to_string(),
            })
        }
    }
}

/// A name holding `\`, checked as a segment (length, control and
/// bidirectional formatting characters).
fn check_segment(name: &str) -> Result<(), S3Error> {
    if name.len() > validate::MAX_SEGMENT {
        return Err(invalid("A key's segment is longer than 255 bytes"));
    }
    if name.chars().any(char::is_control) || validate::bidi(name).is_some() {
        return Err(invalid(
            "Invalid key: a control or bidirectional formatting character",
        ));
    }
    Ok(())
}

/// S3's bucket-name rules: 3–63 characters of `a-z 0-9 . -`, beginning
/// and ending with a letter or digit, no `..`, not an IP address
/// (400 `InvalidBucketName`).
pub(crate) fn bucket_name(name: &str) -> Result<(), S3Error> {
    let b = name.as_bytes();
    let ok = (3..=63).contains(&b.len())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'.' || *c == b'-')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && !name.contains("..")
        && name.parse::<std::net::Ipv4Addr>().is_err();
    if ok {
        Ok(())
    } else {
        Err(s3_error!(
            InvalidBucketName,
            "The specified bucket is not valid."
        ))
    }
}

/// The key of a stored path within `bucket` (None: not in it).
pub(crate) fn key_of<'a>(bucket: &str, path: &'a str) -> Option<&'a str> {
    path.strip_prefix(bucket)?.strip_prefix('/')
}

pub(crate) fn invalid(msg: &str) -> S3Error {
    S3Error::with_message(s3s::S3ErrorCode::InvalidArgument, msg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(folder: &str, name: &str) -> Target {
        Target::File {
            folder: folder.into(),
            name: name.into(),
        }
    }

    #[test]
    fn keys_map_to_the_buckets_folders_and_names() {
        assert_eq!(target("b", "x.txt").unwrap(), file("b", "x.txt"));
        assert_eq!(
            target("b", "dir/sub/x.txt").unwrap(),
            file("b/dir/sub", "x.txt")
        );
        assert_eq!(
            target("b", "dir/sub/").unwrap(),
            Target::Marker {
                path: "b/dir/sub/".into()
            }
        );
        assert_eq!(target("b", "a\\b.txt").unwrap(), file("b", "a\\b.txt"));
        assert_eq!(target("b", "dir/x").unwrap().path(), "b/dir/x");
        assert_eq!(key_of("b", "b/dir/x"), Some("dir/x"));
        assert_eq!(key_of("b", "bb/x"), None);
    }

    #[test]
    fn bucket_names_follow_s3s_rules() {
        for good in ["abc", "my-bucket.2026", &"a".repeat(63)] {
            assert!(bucket_name(good).is_ok(), "{good}");
        }
        for bad in [
            "ab",
            "Abc",
            "a_b",
            "-ab",
            "ab-",
            "a..b",
            "192.168.1.1",
            &"a".repeat(64),
        ] {
            assert_eq!(
                bucket_name(bad).unwrap_err().code().as_str(),
                "InvalidBucketName",
                "{bad}"
            );
        }
    }

    #[test]
    fn keys_s3_refuses_are_refused_with_its_codes() {
        let code = |k: &str| target("b", k).unwrap_err().code().as_str().to_string();
        for bad in [
            "",
            "/x",
            "a//b",
            "./x",
            "a/../b",
            "a/.",
            "..",
            "/",
            "a\u{1}b",
            "a\u{202E}b",
        ] {
            assert_eq!(code(bad), "InvalidArgument", "{bad:?}");
        }
        assert_eq!(code(&"a".repeat(256)), "InvalidArgument");
        assert_eq!(code(&"a/".repeat(513)), "KeyTooLongError");
        assert!(target("b", &format!("{}/x", "a".repeat(255))).is_ok());
    }
}
