//! A streamed ZIP archive of STORED (uncompressed) entries, zip64 throughout
//! (docs/api.md, "Folder zip"): each entry is a local header, its
//! bytes as they come (CRC-32 computed on the way), then a zip64 data
//! descriptor with the CRC and the sizes; the central directory and the
//! zip64 end records close the archive. Nothing is ever sought back, so the
//! archive goes out as it is made; what is kept is one small record per
//! entry for the central directory (40 bytes and the entry's name, an
//! `Arc<str>` the caller may share, as `service::zip` does with its
//! de-duplication set), never any entry's bytes.
//!
//! Every entry carries a zip64 extended information field (local header and
//! central directory), so that entries and archives past 4 GiB and past
//! 65,535 entries are valid without knowing any size up front.

use bytes::{BufMut, Bytes, BytesMut};
use std::sync::Arc;

const LOCAL_HEADER: u32 = 0x0403_4b50;
const DATA_DESCRIPTOR: u32 = 0x0807_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
const ZIP64_END: u32 = 0x0606_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const END: u32 = 0x0605_4b50;
/// Version 4.5: zip64.
const VERSION: u16 = 45;
/// Made by: Unix (3), version 4.5 (so that the Unix mode below is read).
const MADE_BY: u16 = (3 << 8) | VERSION;
/// Bit 3 (sizes and CRC in the data descriptor) and bit 11 (UTF-8 names).
const FLAGS: u16 = (1 << 3) | (1 << 11);
/// A regular file, rw-r--r--, in the high half of the external attributes.
const FILE_MODE: u32 = 0o100_644 << 16;
const ZIP64_FIELD: u16 = 0x0001;
/// Where a 32-bit field defers to the zip64 one.
const FULL32: u32 = u32::MAX;
const FULL16: u16 = u16::MAX;
/// How much of the central directory is encoded at a time.
const CHUNK: usize = 64 * 1024;

/// One entry as the central directory needs it: 40 bytes on 64-bit, the
/// name shared rather than copied.
#[derive(Debug)]
struct Entry {
    name: Arc<str>,
    dos: (u16, u16),
    crc: u32,
    size: u64,
    offset: u64,
}

/// The entry being written.
#[derive(Debug)]
struct Open {
    entry: Entry,
    hasher: crc32fast::Hasher,
}

/// The archive's writer: it hands out the bytes to send, in order.
#[derive(Debug, Default)]
pub(crate) struct ZipWriter {
    /// Bytes handed out so far.
    offset: u64,
    done: Vec<Entry>,
    open: Option<Open>,
}

impl ZipWriter {
    /// Room for `n` entries' records up front (more may still come).
    pub(crate) fn with_capacity(n: usize) -> ZipWriter {
        ZipWriter {
            done: Vec::with_capacity(n),
            ..ZipWriter::default()
        }
    }

    /// Starts entry `name` (a relative path, `/` between segments) last
    /// modified at `modified_ms` (Unix milliseconds): its local header. An
    /// entry still open is ended first, its data descriptor ahead of the header.
    pub(crate) fn start(&mut self, name: impl Into<Arc<str>>, modified_ms: i64) -> Bytes {
        let name: Arc<str> = name.into();
        let mut out = BytesMut::with_capacity(24 + 30 + name.len() + 20);
        // Counted in `offset` by `end`.
        let ended = self.end();
        out.extend_from_slice(&ended);
        let (time, date) = dos_time(modified_ms);
        let offset = self.offset;
        out.put_u32_le(LOCAL_HEADER);
        out.put_u16_le(VERSION);
        out.put_u16_le(FLAGS);
        out.put_u16_le(0); // stored
        out.put_u16_le(time);
        out.put_u16_le(date);
        out.put_u32_le(0); // CRC-32: in the data descriptor
        out.put_u32_le(FULL32);
        out.put_u32_le(FULL32);
        out.put_u16_le(len16(name.len()));
        out.put_u16_le(20);
        out.extend_from_slice(name.as_bytes());
        // The zip64 field of a local header holds both sizes (0 here: the
        // data descriptor has them).
        out.put_u16_le(ZIP64_FIELD);
        out.put_u16_le(16);
        out.put_u64_le(0);
        out.put_u64_le(0);
        self.offset += (out.len() - ended.len()) as u64;
        self.open = Some(Open {
            entry: Entry {
                name,
                dos: (time, date),
                crc: 0,
                size: 0,
                offset,
            },
            hasher: crc32fast::Hasher::new(),
        });
        out.freeze()
    }

    /// Takes `chunk`, the next bytes of the open entry, which go out as they are.
    pub(crate) fn data(&mut self, chunk: &[u8]) {
        let open = self
            .open
            .as_mut()
            .expect("ZipWriter::data with no entry started");
        open.hasher.update(chunk);
        open.entry.size += chunk.len() as u64;
        self.offset += chunk.len() as u64;
    }

    /// Ends the open entry (if any): its data descriptor (zip64: 8-byte sizes).
    pub(crate) fn end(&mut self) -> Bytes {
        let Some(open) = self.open.take() else {
            return Bytes::new();
        };
        let mut entry = open.entry;
        entry.crc = open.hasher.finalize();
        let mut out = BytesMut::with_capacity(24);
        out.put_u32_le(DATA_DESCRIPTOR);
        out.put_u32_le(entry.crc);
        out.put_u64_le(entry.size);
        out.put_u64_le(entry.size);
        self.offset += out.len() as u64;
        self.done.push(entry);
        out.freeze()
    }

    /// Ends the archive: the open entry's data descriptor, the central
    /// directory and the end records, in chunks of about 64 KiB.
    pub(crate) fn finish(mut self) -> Finish {
        let first = self.end();
        let start = self.offset;
        Finish {
            first: Some(first),
            entries: self.done.into_iter(),
            count: 0,
            cd_start: start,
            offset: start,
            ended: false,
        }
    }
}

/// The closing bytes of an archive, as an iterator of chunks.
#[derive(Debug)]
pub(crate) struct Finish {
    first: Option<Bytes>,
    entries: std::vec::IntoIter<Entry>,
    count: u64,
    cd_start: u64,
    offset: u64,
    ended: bool,
}

impl Iterator for Finish {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if let Some(first) = self.first.take().filter(|b| !b.is_empty()) {
            return Some(first);
        }
        if self.ended {
            return None;
        }
        let mut out = BytesMut::with_capacity(CHUNK + 512);
        while out.len() < CHUNK {
            let Some(e) = self.entries.next() else {
                self.ended = true;
                let cd_size = self.offset + out.len() as u64 - self.cd_start;
                end_records(&mut out, self.count, cd_size, self.cd_start);
                break;
            };
            central_header(&mut out, &e);
            self.count += 1;
        }
        self.offset += out.len() as u64;
        Some(out.freeze())
    }
}

fn central_header(out: &mut BytesMut, e: &Entry) {
    out.put_u32_le(CENTRAL_HEADER);
    out.put_u16_le(MADE_BY);
    out.put_u16_le(VERSION);
    out.put_u16_le(FLAGS);
    out.put_u16_le(0); // stored
    out.put_u16_le(e.dos.0);
    out.put_u16_le(e.dos.1);
    out.put_u32_le(e.crc);
    out.put_u32_le(FULL32);
    out.put_u32_le(FULL32);
    out.put_u16_le(len16(e.name.len()));
    out.put_u16_le(28);
    out.put_u16_le(0); // comment
    out.put_u16_le(0); // disk
    out.put_u16_le(0); // internal attributes
    out.put_u32_le(FILE_MODE);
    out.put_u32_le(FULL32);
    out.extend_from_slice(e.name.as_bytes());
    // In the order of the fields set to FULL32: uncompressed size,
    // compressed size, local header offset.
    out.put_u16_le(ZIP64_FIELD);
    out.put_u16_le(24);
    out.put_u64_le(e.size);
    out.put_u64_le(e.size);
    out.put_u64_le(e.offset);
}

/// The zip64 end of central directory record, its locator, and the classic
/// end record (its fields full where zip64 holds the value).
fn end_records(out: &mut BytesMut, count: u64, cd_size: u64, cd_start: u64) {
    let zip64_end = cd_start + cd_size;
    out.put_u32_le(ZIP64_END);
    out.put_u64_le(44); // what follows this field
    out.put_u16_le(MADE_BY);
    out.put_u16_le(VERSION);
    out.put_u32_le(0); // this disk
    out.put_u32_le(0); // the central directory's disk
    out.put_u64_le(count);
    out.put_u64_le(count);
    out.put_u64_le(cd_size);
    out.put_u64_le(cd_start);
    out.put_u32_le(ZIP64_LOCATOR);
    out.put_u32_le(0);
    out.put_u64_le(zip64_end);
    out.put_u32_le(1); // disks
    out.put_u32_le(END);
    out.put_u16_le(0);
    out.put_u16_le(0);
    let count16 = u16::try_from(count).unwrap_or(FULL16);
    out.put_u16_le(count16);
    out.put_u16_le(count16);
    out.put_u32_le(u32::try_from(cd_size).unwrap_or(FULL32));
    out.put_u32_le(u32::try_from(cd_start).unwrap_or(FULL32));
    out.put_u16_le(0); // comment
}

/// A name's length as its 16-bit field (names are far shorter: a folder is
/// at most 255 bytes and a file name too).
fn len16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(FULL16)
}

/// MS-DOS time and date (UTC; 1980-01-01 for anything earlier).
fn dos_time(ms: i64) -> (u16, u16) {
    use chrono::{Datelike, Timelike};
    let Some(t) = chrono::DateTime::from_timestamp_millis(ms).filter(|t| t.year() >= 1980) else {
        return (0, (1 << 5) | 1);
    };
    let year = u16::try_from((t.year() - 1980).min(127)).unwrap_or(127);
    let [month, day, hour, minute, second] = [t.month(), t.day(), t.hour(), t.minute(), t.second()]
        .map(|v| u16::try_from(v).unwrap_or(0));
    let time = (hour << 11) | (minute << 5) | (second / 2);
    let date = (year << 9) | (month << 5) | day;
    (time, date)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = ZipWriter::default();
        let mut out = Vec::new();
        for (name, bytes) in files {
            out.extend_from_slice(&w.start(*name, 1_700_000_000_000));
            for chunk in bytes.chunks(3) {
                w.data(chunk);
                out.extend_from_slice(chunk);
            }
        }
        for chunk in w.finish() {
            out.extend_from_slice(&chunk);
        }
        out
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    #[test]
    fn an_archive_ends_with_records_that_point_at_its_central_directory() {
        let zip = archive(&[("a.txt", b"hello"), ("sub/b.bin", b""), ("c", b"1234567")]);
        assert_eq!(u32_at(&zip, 0), LOCAL_HEADER);
        let end = zip.len() - 22;
        assert_eq!(u32_at(&zip, end), END);
        let locator = end - 20;
        assert_eq!(u32_at(&zip, locator), ZIP64_LOCATOR);
        let z64 = usize::try_from(u64_at(&zip, locator + 8)).unwrap();
        assert_eq!(z64, locator - 56);
        assert_eq!(u32_at(&zip, z64), ZIP64_END);
        assert_eq!(u64_at(&zip, z64 + 24), 3);
        let (cd_size, cd_start) = (u64_at(&zip, z64 + 40), u64_at(&zip, z64 + 48));
        assert_eq!(cd_start + cd_size, z64 as u64);
        let mut at = usize::try_from(cd_start).unwrap();
        let mut seen = Vec::new();
        for _ in 0..3 {
            assert_eq!(u32_at(&zip, at), CENTRAL_HEADER);
            let name_len = usize::from(u16::from_le_bytes([zip[at + 28], zip[at + 29]]));
            let name = std::str::from_utf8(&zip[at + 46..at + 46 + name_len]).unwrap();
            let extra = at + 46 + name_len;
            let (size, offset) = (u64_at(&zip, extra + 4), u64_at(&zip, extra + 20));
            let offset = usize::try_from(offset).unwrap();
            assert_eq!(u32_at(&zip, offset), LOCAL_HEADER);
            let data = offset + 30 + name_len + 20;
            let bytes = &zip[data..data + usize::try_from(size).unwrap()];
            assert_eq!(u32_at(&zip, at + 16), crc32fast::hash(bytes));
            let dd = data + bytes.len();
            assert_eq!(u32_at(&zip, dd), DATA_DESCRIPTOR);
            assert_eq!(u64_at(&zip, dd + 8), size);
            seen.push((name.to_string(), bytes.to_vec()));
            at = extra + 28;
        }
        assert_eq!(
            seen,
            [
                ("a.txt".to_string(), b"hello".to_vec()),
                ("sub/b.bin".to_string(), vec![]),
                ("c".to_string(), b"1234567".to_vec()),
            ]
        );
    }

    #[test]
    fn an_empty_archive_is_its_end_records() {
        let zip: Vec<u8> = ZipWriter::default()
            .finish()
            .flat_map(|b| b.to_vec())
            .collect();
        assert_eq!(zip.len(), 56 + 20 + 22);
    }

    #[test]
    fn past_65535_entries_the_counts_are_in_the_zip64_record() {
        let mut w = ZipWriter::default();
        let mut len = 0u64;
        for i in 0..70_000 {
            len += w.start(format!("{i}"), 0).len() as u64;
        }
        let tail: Vec<u8> = w.finish().flat_map(|b| b.to_vec()).collect();
        let end = tail.len() - 22;
        assert_eq!(u32_at(&tail, end), END);
        assert_eq!(&tail[end + 8..end + 12], [0xFF; 4]);
        let z64 = end - 20 - 56;
        assert_eq!(u32_at(&tail, z64), ZIP64_END);
        assert_eq!(u64_at(&tail, z64 + 24), 70_000);
        assert_eq!(u64_at(&tail, z64 + 32), 70_000);
        // The central directory starts right after the last data descriptor.
        assert_eq!(u64_at(&tail, z64 + 48), len + 24);
    }

    #[test]
    fn an_entry_record_is_small_and_shares_its_name() {
        assert_eq!(std::mem::size_of::<Entry>(), 40);
        let name: Arc<str> = Arc::from("sub/a.txt");
        let mut w = ZipWriter::with_capacity(1);
        w.start(name.clone(), 0);
        w.end();
        assert!(Arc::ptr_eq(&w.done[0].name, &name));
    }

    #[test]
    fn dos_times() {
        // 2023-11-14 22:13:20 UTC.
        assert_eq!(
            dos_time(1_700_000_000_000),
            (
                (22 << 11) | (13 << 5) | 0b1010,
                (43 << 9) | (11 << 5) | 0b1110
            )
        );
        assert_eq!(dos_time(0), (0, (1 << 5) | 1));
    }
}
