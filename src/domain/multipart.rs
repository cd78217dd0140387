//! The rules of S3 multipart uploads (CONTRACT §18, "Multipart"): which part
//! numbers exist, what a CompleteMultipartUpload may list, and the ETag of
//! the object it makes. Pure: the service streams, the store keeps rows.

use md5::Digest as _;

/// The lowest and highest part numbers.
pub const FIRST_PART: u32 = 1;
pub const LAST_PART: u32 = 10_000;

/// Every part but the last is at least this large when completed.
pub const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;

/// The largest part S3 takes (5 GiB).
pub const MAX_PART_SIZE: u64 = 5 * 1024 * 1024 * 1024;

/// How long an upload lives with no new part before the collector aborts it.
pub const IDLE_MS: i64 = 24 * 3600 * 1000;

/// How long a completed upload is remembered, so that a repeated Complete
/// answers the same result.
pub const COMPLETED_KEPT_MS: i64 = 3600 * 1000;

/// Whether `n` is a part number.
pub fn valid_part_number(n: u32) -> bool {
    (FIRST_PART..=LAST_PART).contains(&n)
}

/// A part as stored: its number, size and hex MD5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPart {
    pub number: u32,
    pub size: u64,
    pub md5: String,
}

/// Why a Complete's list of parts is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListRefusal {
    /// Empty, or numbers not strictly ascending.
    Order,
    /// A part not uploaded, or whose ETag is not its MD5.
    Part(u32),
    /// A part other than the last under [`MIN_PART_SIZE`].
    TooSmall(u32),
}

/// An ETag as a client sends it back: quotes and case do not matter.
pub fn normalized_etag(etag: &str) -> String {
    etag.trim().trim_matches('"').to_ascii_lowercase()
}

/// The parts `listed` (number, ETag as sent) chooses among `stored`
/// (ascending by number), in order; else why not: an order that is not
/// strictly ascending first (S3 checks it first), then a missing or
/// mismatched part, then a part too small.
pub fn choose<'a>(
    listed: &[(u32, String)],
    stored: &'a [StoredPart],
) -> Result<Vec<&'a StoredPart>, ListRefusal> {
    if listed.is_empty() || listed.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(ListRefusal::Order);
    }
    let mut chosen = Vec::with_capacity(listed.len());
    for (number, etag) in listed {
        let part = stored
            .binary_search_by_key(number, |p| p.number)
            .ok()
            .map(|i| &stored[i])
            .filter(|p| p.md5 == normalized_etag(etag))
            .ok_or(ListRefusal::Part(*number))?;
        chosen.push(part);
    }
    let last = chosen.len() - 1;
    if let Some(small) = chosen[..last].iter().find(|p| p.size < MIN_PART_SIZE) {
        return Err(ListRefusal::TooSmall(small.number));
    }
    Ok(chosen)
}

/// The ETag of the object made of `parts` (hex MD5s, in order), unquoted:
/// the hex MD5 of their binary MD5s, `-` and how many.
pub fn object_etag<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = md5::Md5::new();
    let mut n = 0usize;
    for md5 in parts {
        h.update(hex::decode(md5).unwrap_or_default());
        n += 1;
    }
    format!("{}-{n}", hex::encode(h.finalize()))
}

/// What a Complete chose, as the completed upload keeps it: a repeated
/// Complete with the same list gets the same answer.
pub fn completion_record<'a>(parts: impl IntoIterator<Item = &'a StoredPart>) -> String {
    parts
        .into_iter()
        .map(|p| format!("{}:{}", p.number, p.md5))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether `listed` (as a Complete sends it) is what `record` kept.
pub fn same_completion(listed: &[(u32, String)], record: &str) -> bool {
    let sent = listed
        .iter()
        .map(|(n, etag)| format!("{n}:{}", normalized_etag(etag)))
        .collect::<Vec<_>>()
        .join(",");
    sent == record
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(number: u32, size: u64, md5: &str) -> StoredPart {
        StoredPart {
            number,
            size,
            md5: md5.into(),
        }
    }

    fn listed(items: &[(u32, &str)]) -> Vec<(u32, String)> {
        items.iter().map(|(n, e)| (*n, (*e).to_string())).collect()
    }

    #[test]
    fn a_list_must_ascend_name_stored_parts_and_keep_all_but_the_last_large() {
        let big = MIN_PART_SIZE;
        let stored = [part(1, big, "aa"), part(2, 1, "bb"), part(3, 1, "cc")];
        let ok = choose(&listed(&[(1, "\"AA\""), (3, "cc")]), &stored).unwrap();
        assert_eq!(ok.iter().map(|p| p.number).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(
            choose(&listed(&[(3, "cc"), (1, "aa")]), &stored),
            Err(ListRefusal::Order)
        );
        assert_eq!(
            choose(&listed(&[(1, "aa"), (1, "aa")]), &stored),
            Err(ListRefusal::Order)
        );
        assert_eq!(choose(&[], &stored), Err(ListRefusal::Order));
        assert_eq!(
            choose(&listed(&[(1, "aa"), (4, "dd")]), &stored),
            Err(ListRefusal::Part(4))
        );
        assert_eq!(
            choose(&listed(&[(1, "ab")]), &stored),
            Err(ListRefusal::Part(1))
        );
        assert_eq!(
            choose(&listed(&[(2, "bb"), (3, "cc")]), &stored),
            Err(ListRefusal::TooSmall(2))
        );
    }

    #[test]
    fn the_etag_is_the_md5_of_the_binary_md5s_and_the_count() {
        // md5("") and md5("a"), as S3 computes a two-part ETag.
        let e = "d41d8cd98f00b204e9800998ecf8427e";
        let a = "0cc175b9c0f1b6a831c399e269772661";
        let mut bin = hex::decode(e).unwrap();
        bin.extend(hex::decode(a).unwrap());
        let expected = format!("{}-2", hex::encode(md5::Md5::digest(&bin)));
        assert_eq!(object_etag([e, a]), expected);
    }

    #[test]
    fn a_repeated_complete_is_recognized_whatever_the_quotes() {
        let parts = [part(1, 9, "aa"), part(2, 1, "bb")];
        let record = completion_record(parts.iter());
        assert_eq!(record, "1:aa,2:bb");
        assert!(same_completion(
            &listed(&[(1, "\"aa\""), (2, "BB")]),
            &record
        ));
        assert!(!same_completion(&listed(&[(1, "aa")]), &record));
        assert!(valid_part_number(1) && valid_part_number(10_000));
        assert!(!valid_part_number(0) && !valid_part_number(10_001));
    }
}
