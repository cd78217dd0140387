//! The AVIF container (ISOBMFF / HEIF, ISO/IEC 14496-12 and 23008-12): the
//! few boxes a still AVIF needs, each read with bounds checks.
//!
//! Memory: every list read from the file (items, locations, extents,
//! references, properties, associations) is capped at [`MAX_ENTRIES`]
//! entries of at most 40 bytes, and every entry costs at least one byte of
//! the input (an extent at least 4 when an item has several), so the parsed
//! boxes take at most a few MiB and a small multiple of the input. An
//! item's data is borrowed from the input, or, when it is split in several
//! extents, copied once into a buffer of at most the size of its source
//! (the file or `idat`): extents adding up to more are refused before
//! anything is allocated. [`Container::item_head`] reads the first bytes of
//! an item (a grid descriptor) without allocating. Lookups by item ID are
//! binary searches (the lists are sorted once, after parsing), so no count
//! in the file makes them quadratic.

use std::borrow::Cow;
use std::ops::Range;

use crate::AvifError;

/// Caps on the lists a file declares (items, extents, properties, ...): far
/// above what any real image holds, low enough to bound memory and time.
const MAX_ENTRIES: usize = 1 << 16;

fn corrupt(what: &str) -> AvifError {
    AvifError::Corrupt(what.to_owned())
}

pub(crate) type FourCc = [u8; 4];

/// A cursor over a byte slice whose reads fail (never panic) past the end.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], AvifError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| corrupt("a box is truncated"))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn rest(&mut self) -> &'a [u8] {
        let out = &self.data[self.pos..];
        self.pos = self.data.len();
        out
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], AvifError> {
        let mut out = [0; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, AvifError> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, AvifError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, AvifError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, AvifError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    fn fourcc(&mut self) -> Result<FourCc, AvifError> {
        self.array()
    }

    /// An unsigned integer of 0, 4 or 8 bytes (iloc's field sizes).
    fn sized(&mut self, size: u8) -> Result<u64, AvifError> {
        match size {
            0 => Ok(0),
            4 => Ok(u64::from(self.u32()?)),
            8 => self.u64(),
            _ => Err(corrupt("iloc field size is not 0, 4 or 8")),
        }
    }

    /// A FullBox's version and flags.
    fn full_box(&mut self) -> Result<(u8, u32), AvifError> {
        let word = self.u32()?;
        Ok(((word >> 24) as u8, word & 0x00ff_ffff))
    }

    /// A 16-bit item ID in version 0 of a box, 32-bit otherwise.
    fn item_id(&mut self, wide: bool) -> Result<u32, AvifError> {
        if wide {
            self.u32()
        } else {
            Ok(u32::from(self.u16()?))
        }
    }

    /// The next child box: its type and payload. `None` at the end.
    pub(crate) fn next_box(&mut self) -> Result<Option<(FourCc, &'a [u8])>, AvifError> {
        if self.remaining() == 0 {
            return Ok(None);
        }
        let size = self.u32()?;
        let kind = self.fourcc()?;
        let payload_len = match size {
            0 => self.remaining(),
            1 => {
                let large = self.u64()?;
                large
                    .checked_sub(16)
                    .and_then(|len| usize::try_from(len).ok())
                    .ok_or_else(|| corrupt("bad box size"))?
            }
            _ => usize::try_from(size)
                .ok()
                .and_then(|size| size.checked_sub(8))
                .ok_or_else(|| corrupt("bad box size"))?,
        };
        let mut payload = self.bytes(payload_len)?;
        if &kind == b"uuid" {
            payload = payload.get(16..).ok_or_else(|| corrupt("bad uuid box"))?;
        }
        Ok(Some((kind, payload)))
    }
}

/// The nclx colour description of a `colr` box (ISO/IEC 23091-4 codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Nclx {
    pub(crate) primaries: u16,
    pub(crate) transfer: u16,
    pub(crate) matrix: u16,
    pub(crate) full_range: bool,
}

/// Item properties this crate reads; the others are kept by type only.
#[derive(Debug, Clone)]
pub(crate) enum Property<'a> {
    /// `ispe`: the image's width and height.
    Spatial(u32, u32),
    /// `colr` of type nclx.
    Nclx(Nclx),
    /// `colr` of type prof or rICC: an ICC profile.
    Icc(&'a [u8]),
    /// `irot`: quarter turns anticlockwise.
    Rotation(u8),
    /// `imir`: 0 exchanges top and bottom, 1 left and right.
    Mirror(u8),
    /// `auxC`: the auxiliary type URN (without its nul).
    Auxiliary(&'a [u8]),
    /// `clap`: clean aperture, as (numerator, denominator) pairs: width,
    /// height, horizontal and vertical offset of the centre. Boxed, to keep
    /// every property (of which a file may declare many) small.
    CleanAperture(Box<[(i64, i64); 4]>),
    /// `av1C` and `pixi`: read by the decoder itself, or not needed.
    Known,
    /// Anything else (its type), which must not be essential.
    Other(FourCc),
}

impl Property<'_> {
    fn parse(kind: FourCc, payload: &[u8]) -> Result<Property<'_>, AvifError> {
        let mut r = Reader::new(payload);
        Ok(match &kind {
            b"ispe" => {
                r.full_box()?;
                Property::Spatial(r.u32()?, r.u32()?)
            }
            b"colr" => match &r.fourcc()? {
                b"nclx" => Property::Nclx(Nclx {
                    primaries: r.u16()?,
                    transfer: r.u16()?,
                    matrix: r.u16()?,
                    full_range: r.u8()? & 0x80 != 0,
                }),
                b"prof" | b"rICC" => Property::Icc(r.rest()),
                _ => Property::Known,
            },
            b"irot" => Property::Rotation(r.u8()? & 3),
            b"imir" => Property::Mirror(r.u8()? & 1),
            b"clap" => {
                let mut pairs = [(0i64, 0i64); 4];
                for (i, pair) in pairs.iter_mut().enumerate() {
                    let (n, d) = (r.u32()?, r.u32()?);
                    // Width and height are unsigned, the offsets signed.
                    #[allow(clippy::cast_possible_wrap)]
                    let n = if i < 2 {
                        i64::from(n)
                    } else {
                        i64::from(n as i32)
                    };
                    *pair = (n, i64::from(d));
                }
                Property::CleanAperture(Box::new(pairs))
            }
            b"auxC" => {
                r.full_box()?;
                let rest = r.rest();
                let urn = rest.split(|&b| b == 0).next().unwrap_or_default();
                Property::Auxiliary(urn)
            }
            // Read by the decoder (av1C), informative (pixi, pasp, light
            // levels), or for layered images, which are refused anyway when
            // an item holds more than one frame (see the `obu` module).
            b"av1C" | b"pixi" | b"pasp" | b"clli" | b"mdcv" | b"cclv" | b"amve" | b"a1op"
            | b"a1lx" | b"lsel" => Property::Known,
            _ => Property::Other(kind),
        })
    }
}

#[derive(Debug, Clone)]
struct ItemInfo {
    id: u32,
    kind: FourCc,
}

#[derive(Debug, Clone)]
struct Location {
    id: u32,
    construction_method: u8,
    data_reference_index: u16,
    base_offset: u64,
    /// (offset, length); a length of 0 means "to the end".
    extents: Vec<(u64, u64)>,
}

#[derive(Debug, Clone)]
struct Reference {
    kind: FourCc,
    from: u32,
    to: Vec<u32>,
}

/// One item's property: its index into `ipco` (1-based) and essential flag.
#[derive(Debug, Clone, Copy)]
struct Association {
    item: u32,
    index: u16,
    essential: bool,
}

/// The first video track's first sample (an animated AVIF with no primary
/// item), with what its sample entry says.
#[derive(Debug, Clone)]
pub(crate) struct FirstSample<'a> {
    /// The av1C's configOBUs (the sequence header), to put before the sample.
    pub(crate) config_obus: &'a [u8],
    pub(crate) sample: &'a [u8],
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) nclx: Option<Nclx>,
}

/// Where an item's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    File,
    Idat,
}

/// The parsed boxes of an AVIF file, borrowing from it. `items`,
/// `locations` and `associations` are sorted by item ID (stably: for the
/// same ID, file order) once parsed.
pub(crate) struct Container<'a> {
    file: &'a [u8],
    primary: Option<u32>,
    items: Vec<ItemInfo>,
    locations: Vec<Location>,
    /// Extents in `locations`, all together (capped at `MAX_ENTRIES`).
    extent_count: usize,
    idat: Option<&'a [u8]>,
    references: Vec<Reference>,
    properties: Vec<Property<'a>>,
    associations: Vec<Association>,
    moov: Option<&'a [u8]>,
}

fn push_capped<T>(list: &mut Vec<T>, value: T) -> Result<(), AvifError> {
    if list.len() >= MAX_ENTRIES {
        return Err(AvifError::Unsupported(
            "more items, properties or extents than this decoder takes".into(),
        ));
    }
    list.push(value);
    Ok(())
}

impl<'a> Container<'a> {
    /// Reads `ftyp` (which must come first and name the avif or avis
    /// brand), then `meta` and, for sequences, `moov`.
    pub(crate) fn parse(file: &'a [u8]) -> Result<Self, AvifError> {
        let mut top = Reader::new(file);
        let ftyp = match top.next_box() {
            Ok(Some((kind, payload))) if &kind == b"ftyp" => payload,
            _ => return Err(AvifError::NotAvif),
        };
        Self::check_brands(ftyp)?;
        let mut container = Self {
            file,
            primary: None,
            items: Vec::new(),
            locations: Vec::new(),
            extent_count: 0,
            idat: None,
            references: Vec::new(),
            properties: Vec::new(),
            associations: Vec::new(),
            moov: None,
        };
        let mut meta = None;
        // A box cut short at the top level (a truncated mdat) is not fatal
        // here: the extents that point past the end are, when read.
        while let Ok(Some((kind, payload))) = top.next_box() {
            match &kind {
                b"meta" if meta.is_none() => meta = Some(payload),
                b"moov" if container.moov.is_none() => container.moov = Some(payload),
                _ => {}
            }
        }
        match meta {
            Some(meta) => container.parse_meta(meta)?,
            None if container.moov.is_some() => {}
            None => return Err(corrupt("no meta box (truncated file?)")),
        }
        // Stable sorts: the first of duplicate IDs stays first, and an
        // item's associations stay in ipma order.
        container.items.sort_by_key(|i| i.id);
        container.locations.sort_by_key(|l| l.id);
        container.associations.sort_by_key(|a| a.item);
        Ok(container)
    }

    fn check_brands(ftyp: &[u8]) -> Result<(), AvifError> {
        let mut r = Reader::new(ftyp);
        let major = r.fourcc().map_err(|_| AvifError::NotAvif)?;
        r.u32().map_err(|_| AvifError::NotAvif)?;
        let is_avif = |b: &FourCc| b == b"avif" || b == b"avis";
        if is_avif(&major) {
            return Ok(());
        }
        while let Ok(brand) = r.fourcc() {
            if is_avif(&brand) {
                return Ok(());
            }
        }
        Err(AvifError::NotAvif)
    }

    fn parse_meta(&mut self, meta: &'a [u8]) -> Result<(), AvifError> {
        let mut r = Reader::new(meta);
        let (version, _) = r.full_box()?;
        if version != 0 {
            return Err(corrupt("meta box version"));
        }
        let mut handler = None;
        while let Some((kind, payload)) = r.next_box()? {
            match &kind {
                b"hdlr" => {
                    let mut h = Reader::new(payload);
                    h.full_box()?;
                    h.u32()?; // pre_defined
                    handler = Some(h.fourcc()?);
                }
                b"pitm" => {
                    let mut p = Reader::new(payload);
                    let (version, _) = p.full_box()?;
                    self.primary = Some(p.item_id(version > 0)?);
                }
                b"iloc" => self.parse_iloc(payload)?,
                b"iinf" => self.parse_iinf(payload)?,
                b"iref" => self.parse_iref(payload)?,
                b"iprp" => self.parse_iprp(payload)?,
                b"idat" => self.idat = Some(payload),
                _ => {}
            }
        }
        if handler != Some(*b"pict") {
            return Err(corrupt("meta handler is not pict"));
        }
        Ok(())
    }

    fn parse_iloc(&mut self, payload: &'a [u8]) -> Result<(), AvifError> {
        let mut r = Reader::new(payload);
        let (version, _) = r.full_box()?;
        if version > 2 {
            return Err(corrupt("iloc version"));
        }
        let sizes = r.u16()?;
        let offset_size = (sizes >> 12) as u8;
        let length_size = ((sizes >> 8) & 0xf) as u8;
        let base_offset_size = ((sizes >> 4) & 0xf) as u8;
        let index_size = if version > 0 { (sizes & 0xf) as u8 } else { 0 };
        let count = if version < 2 {
            r.u16()?.into()
        } else {
            r.u32()?
        };
        for _ in 0..count {
            let id = r.item_id(version == 2)?;
            let construction_method = if version > 0 {
                (r.u16()? & 0xf) as u8
            } else {
                0
            };
            let data_reference_index = r.u16()?;
            let base_offset = r.sized(base_offset_size)?;
            let extent_count = r.u16()?;
            // With no length field, every extent is "to the end" (and, with
            // no offset field either, costs no byte of the file): more
            // than one is a way to repeat the file, never a real image.
            if length_size == 0 && extent_count > 1 {
                return Err(corrupt(
                    "an item of several extents, each to the end of the file",
                ));
            }
            let mut extents = Vec::new();
            for _ in 0..extent_count {
                if index_size > 0 {
                    r.sized(index_size)?;
                }
                let offset = r.sized(offset_size)?;
                let length = r.sized(length_size)?;
                self.extent_count += 1;
                if self.extent_count > MAX_ENTRIES {
                    return Err(AvifError::Unsupported("too many extents".into()));
                }
                extents.push((offset, length));
            }
            push_capped(
                &mut self.locations,
                Location {
                    id,
                    construction_method,
                    data_reference_index,
                    base_offset,
                    extents,
                },
            )?;
        }
        Ok(())
    }

    fn parse_iinf(&mut self, payload: &'a [u8]) -> Result<(), AvifError> {
        let mut r = Reader::new(payload);
        let (version, _) = r.full_box()?;
        if version == 0 {
            r.u16()?;
        } else {
            r.u32()?;
        }
        while let Some((kind, infe)) = r.next_box()? {
            if &kind != b"infe" {
                continue;
            }
            let mut e = Reader::new(infe);
            let (version, _) = e.full_box()?;
            // Versions 0 and 1 carry no item type: no image item there.
            if version < 2 {
                continue;
            }
            let id = e.item_id(version > 2)?;
            e.u16()?; // item_protection_index
            let kind = e.fourcc()?;
            push_capped(&mut self.items, ItemInfo { id, kind })?;
        }
        Ok(())
    }

    fn parse_iref(&mut self, payload: &'a [u8]) -> Result<(), AvifError> {
        let mut r = Reader::new(payload);
        let (version, _) = r.full_box()?;
        let wide = version > 0;
        while let Some((kind, reference)) = r.next_box()? {
            let mut e = Reader::new(reference);
            let from = e.item_id(wide)?;
            let count = e.u16()?;
            let mut to = Vec::new();
            for _ in 0..count {
                to.push(e.item_id(wide)?);
            }
            push_capped(&mut self.references, Reference { kind, from, to })?;
        }
        Ok(())
    }

    fn parse_iprp(&mut self, payload: &'a [u8]) -> Result<(), AvifError> {
        let mut r = Reader::new(payload);
        let mut seen_ipco = false;
        while let Some((kind, child)) = r.next_box()? {
            match &kind {
                b"ipco" if !seen_ipco => {
                    seen_ipco = true;
                    let mut c = Reader::new(child);
                    while let Some((kind, property)) = c.next_box()? {
                        let property = Property::parse(kind, property)?;
                        push_capped(&mut self.properties, property)?;
                    }
                }
                b"ipma" => {
                    let mut a = Reader::new(child);
                    let (version, flags) = a.full_box()?;
                    let count = a.u32()?;
                    for _ in 0..count {
                        let item = a.item_id(version > 0)?;
                        let n = a.u8()?;
                        for _ in 0..n {
                            let (essential, index) = if flags & 1 != 0 {
                                let v = a.u16()?;
                                (v & 0x8000 != 0, v & 0x7fff)
                            } else {
                                let v = a.u8()?;
                                (v & 0x80 != 0, u16::from(v & 0x7f))
                            };
                            push_capped(
                                &mut self.associations,
                                Association {
                                    item,
                                    index,
                                    essential,
                                },
                            )?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The primary item's ID.
    pub(crate) fn primary(&self) -> Option<u32> {
        self.primary
    }

    /// An item's type (`av01`, `grid`, ...), if `iinf` lists it.
    pub(crate) fn item_kind(&self, id: u32) -> Option<FourCc> {
        let at = self.items.partition_point(|i| i.id < id);
        self.items.get(at).filter(|i| i.id == id).map(|i| i.kind)
    }

    /// The properties associated with an item, in `ipma` order, with their
    /// essential flag. An index pointing nowhere is an error.
    pub(crate) fn properties(&self, id: u32) -> Result<Vec<(&Property<'a>, bool)>, AvifError> {
        let start = self.associations.partition_point(|a| a.item < id);
        let end = start + self.associations[start..].partition_point(|a| a.item == id);
        self.associations[start..end]
            .iter()
            .filter(|a| a.index != 0)
            .map(|a| {
                self.properties
                    .get(usize::from(a.index) - 1)
                    .map(|p| (p, a.essential))
                    .ok_or_else(|| corrupt("ipma points past ipco"))
            })
            .collect()
    }

    /// The first property of an item matching `pick`.
    pub(crate) fn property<T>(
        &self,
        id: u32,
        pick: impl Fn(&Property<'a>) -> Option<T>,
    ) -> Result<Option<T>, AvifError> {
        Ok(self.properties(id)?.into_iter().find_map(|(p, _)| pick(p)))
    }

    /// Refuses an item with an essential property this decoder would
    /// ignore (HEIF: such an item must not be shown).
    pub(crate) fn check_essentials(&self, id: u32) -> Result<(), AvifError> {
        for (property, essential) in self.properties(id)? {
            if let (Property::Other(kind), true) = (property, essential) {
                return Err(AvifError::Unsupported(format!(
                    "essential property {} is not supported",
                    String::from_utf8_lossy(kind)
                )));
            }
        }
        Ok(())
    }

    /// Items referenced from `from` by a reference of type `kind`, in order.
    pub(crate) fn references_from(&self, from: u32, kind: FourCc) -> Vec<u32> {
        self.references
            .iter()
            .filter(|r| r.from == from && r.kind == kind)
            .flat_map(|r| r.to.iter().copied())
            .collect()
    }

    /// Items with a reference of type `kind` to `to`.
    pub(crate) fn references_to(&self, to: u32, kind: FourCc) -> Vec<u32> {
        self.references
            .iter()
            .filter(|r| r.kind == kind && r.to.contains(&to))
            .map(|r| r.from)
            .collect()
    }

    /// An item's location, with the bytes its extents index (the file or
    /// `idat`).
    fn locate(&self, id: u32) -> Result<(Source, &'a [u8], &Location), AvifError> {
        let at = self.locations.partition_point(|l| l.id < id);
        let location = self
            .locations
            .get(at)
            .filter(|l| l.id == id)
            .ok_or_else(|| corrupt("an item has no location"))?;
        if location.data_reference_index != 0 {
            return Err(AvifError::Unsupported("item data in another file".into()));
        }
        match location.construction_method {
            0 => Ok((Source::File, self.file, location)),
            1 => {
                let idat = self
                    .idat
                    .ok_or_else(|| corrupt("item in idat, but no idat box"))?;
                Ok((Source::Idat, idat, location))
            }
            _ => Err(AvifError::Unsupported(
                "item data built from other items".into(),
            )),
        }
    }

    /// An item's bytes: borrowed when it is one extent, else concatenated
    /// into a buffer of at most the size of its source (extents adding up to
    /// more are refused before anything is allocated).
    pub(crate) fn item_data(&self, id: u32) -> Result<Cow<'a, [u8]>, AvifError> {
        let (_, source, location) = self.locate(id)?;
        let range =
            |extent, several| extent_range(source.len(), location.base_offset, extent, several);
        match location.extents.as_slice() {
            [] => Err(corrupt("an item has no extent")),
            &[one] => Ok(Cow::Borrowed(&source[range(one, false)?])),
            many => {
                let mut total = 0usize;
                for &extent in many {
                    total = total
                        .checked_add(range(extent, true)?.len())
                        .filter(|&total| total <= source.len())
                        .ok_or_else(|| corrupt("an item's extents add up to more than the file"))?;
                }
                let mut out = Vec::new();
                out.try_reserve_exact(total).map_err(|_| {
                    AvifError::Unsupported("not enough memory for an item's data".into())
                })?;
                for &extent in many {
                    out.extend_from_slice(&source[range(extent, true)?]);
                }
                Ok(Cow::Owned(out))
            }
        }
    }

    /// The first bytes of an item (up to `N`: a grid descriptor), copied
    /// from its extents without allocating; with how many there are.
    pub(crate) fn item_head<const N: usize>(&self, id: u32) -> Result<([u8; N], usize), AvifError> {
        let (_, source, location) = self.locate(id)?;
        if location.extents.is_empty() {
            return Err(corrupt("an item has no extent"));
        }
        let several = location.extents.len() > 1;
        let mut head = [0; N];
        let mut filled = 0;
        for &extent in &location.extents {
            if filled == N {
                break;
            }
            let bytes = &source[extent_range(source.len(), location.base_offset, extent, several)?];
            let n = bytes.len().min(N - filled);
            head[filled..filled + n].copy_from_slice(&bytes[..n]);
            filled += n;
        }
        Ok((head, filled))
    }

    /// Refuses items whose data overlap, or the same item listed twice:
    /// each image (each tile of a grid, the alpha) is decoded from bytes of
    /// its own, so the file's size bounds the work of decoding it.
    pub(crate) fn check_disjoint(&self, ids: &[u32]) -> Result<(), AvifError> {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
            return Err(corrupt("an image lists the same item twice"));
        }
        let mut ranges: Vec<(Source, Range<usize>)> = Vec::new();
        for &id in &sorted {
            let (kind, source, location) = self.locate(id)?;
            let several = location.extents.len() > 1;
            for &extent in &location.extents {
                let range = extent_range(source.len(), location.base_offset, extent, several)?;
                if !range.is_empty() {
                    ranges.push((kind, range));
                }
            }
        }
        ranges.sort_unstable_by_key(|(kind, range)| (*kind, range.start));
        if ranges
            .windows(2)
            .any(|pair| pair[0].0 == pair[1].0 && pair[0].1.end > pair[1].1.start)
        {
            return Err(corrupt(
                "images (grid tiles, alpha) or extents overlapping in the file",
            ));
        }
        Ok(())
    }

    /// The first frame of the first AV1 video track (for an image sequence
    /// with no primary item), or `None` when there is no such track.
    pub(crate) fn first_sample(&self) -> Result<Option<FirstSample<'a>>, AvifError> {
        let Some(moov) = self.moov else {
            return Ok(None);
        };
        let mut r = Reader::new(moov);
        while let Some((kind, trak)) = r.next_box()? {
            if &kind != b"trak" {
                continue;
            }
            if let Some(sample) = self.track_first_sample(trak)? {
                return Ok(Some(sample));
            }
        }
        Ok(None)
    }

    fn track_first_sample(&self, trak: &'a [u8]) -> Result<Option<FirstSample<'a>>, AvifError> {
        let Some(mdia) = child(trak, *b"mdia")? else {
            return Ok(None);
        };
        let Some(hdlr) = child(mdia, *b"hdlr")? else {
            return Ok(None);
        };
        let mut h = Reader::new(hdlr);
        h.full_box()?;
        h.u32()?;
        // Colour frames live in a pict (or vide) track; an alpha track is
        // auxv and is skipped.
        if !matches!(&h.fourcc()?, b"pict" | b"vide") {
            return Ok(None);
        }
        let Some(stbl) = child(mdia, *b"minf")?
            .map(|minf| child(minf, *b"stbl"))
            .transpose()?
            .flatten()
        else {
            return Ok(None);
        };
        let Some(stsd) = child(stbl, *b"stsd")? else {
            return Ok(None);
        };
        let mut s = Reader::new(stsd);
        s.full_box()?;
        s.u32()?; // entry_count
        let Some((kind, entry)) = s.next_box()? else {
            return Ok(None);
        };
        if &kind != b"av01" {
            return Ok(None);
        }
        // VisualSampleEntry: 6 reserved, data_reference_index, 16 of
        // pre_defined/reserved, width, height, then 50 more bytes.
        let mut v = Reader::new(entry);
        v.bytes(24)?;
        let width = u32::from(v.u16()?);
        let height = u32::from(v.u16()?);
        v.bytes(50)?;
        let mut config_obus: &[u8] = &[];
        let mut nclx = None;
        while let Some((kind, payload)) = v.next_box()? {
            match &kind {
                b"av1C" => config_obus = payload.get(4..).unwrap_or_default(),
                b"colr" => {
                    if let Property::Nclx(n) = Property::parse(kind, payload)? {
                        nclx = Some(n);
                    }
                }
                _ => {}
            }
        }

        let sample_size = {
            let stsz = child(stbl, *b"stsz")?.ok_or_else(|| corrupt("no stsz"))?;
            let mut z = Reader::new(stsz);
            z.full_box()?;
            let size = z.u32()?;
            let count = z.u32()?;
            if count == 0 {
                return Err(corrupt("the track has no sample"));
            }
            if size == 0 {
                z.u32()?
            } else {
                size
            }
        };
        let chunk_offset = if let Some(stco) = child(stbl, *b"stco")? {
            let mut c = Reader::new(stco);
            c.full_box()?;
            if c.u32()? == 0 {
                return Err(corrupt("the track has no chunk"));
            }
            u64::from(c.u32()?)
        } else if let Some(co64) = child(stbl, *b"co64")? {
            let mut c = Reader::new(co64);
            c.full_box()?;
            if c.u32()? == 0 {
                return Err(corrupt("the track has no chunk"));
            }
            c.u64()?
        } else {
            return Err(corrupt("no chunk offsets"));
        };
        // The first sample is at the start of the first chunk.
        let sample = usize::try_from(chunk_offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(usize::try_from(sample_size).ok()?)?))
            .and_then(|range| self.file.get(range))
            .ok_or_else(|| corrupt("the first frame is past the end of the file (truncated?)"))?;
        Ok(Some(FirstSample {
            config_obus,
            sample,
            width,
            height,
            nclx,
        }))
    }
}

/// The bytes of `source` (of `source_len` bytes) an iloc extent (offset,
/// length) covers from `base`. A length of 0 means "to the end", which
/// only an item's single extent may use.
fn extent_range(
    source_len: usize,
    base: u64,
    (offset, length): (u64, u64),
    several: bool,
) -> Result<Range<usize>, AvifError> {
    let past_the_end = || corrupt("item data is past the end of the file (truncated?)");
    let start = base
        .checked_add(offset)
        .and_then(|s| usize::try_from(s).ok())
        .filter(|&s| s <= source_len)
        .ok_or_else(past_the_end)?;
    let end = match length {
        0 if several => {
            return Err(corrupt(
                "an extent \"to the end of the file\" among several",
            ))
        }
        0 => source_len,
        _ => usize::try_from(length)
            .ok()
            .and_then(|l| start.checked_add(l))
            .filter(|&e| e <= source_len)
            .ok_or_else(past_the_end)?,
    };
    Ok(start..end)
}

/// The payload of the first child box of type `kind`.
fn child(parent: &[u8], kind: FourCc) -> Result<Option<&[u8]>, AvifError> {
    let mut r = Reader::new(parent);
    while let Some((k, payload)) = r.next_box()? {
        if k == kind {
            return Ok(Some(payload));
        }
    }
    Ok(None)
}

/// The `grid` item's descriptor (ISO/IEC 23008-12 ImageGrid).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grid {
    pub(crate) rows: u32,
    pub(crate) columns: u32,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

impl Grid {
    /// The largest descriptor: version, flags, rows, columns, and 32-bit
    /// width and height.
    pub(crate) const MAX_LEN: usize = 12;

    pub(crate) fn parse(data: &[u8]) -> Result<Self, AvifError> {
        let mut r = Reader::new(data);
        if r.u8()? != 0 {
            return Err(AvifError::Unsupported("grid version".into()));
        }
        let flags = r.u8()?;
        let rows = u32::from(r.u8()?) + 1;
        let columns = u32::from(r.u8()?) + 1;
        let (width, height) = if flags & 1 != 0 {
            (r.u32()?, r.u32()?)
        } else {
            (u32::from(r.u16()?), u32::from(r.u16()?))
        };
        if width == 0 || height == 0 {
            return Err(corrupt("empty grid"));
        }
        Ok(Self {
            rows,
            columns,
            width,
            height,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_never_reads_past_the_end() {
        let mut r = Reader::new(&[0, 0, 0, 9, b'f', b'r', b'e', b'e']);
        assert!(r.next_box().is_err());
        let mut r = Reader::new(&[0, 0, 0, 1, b'f', b'r', b'e', b'e', 0, 0, 0, 0, 0, 0, 0, 4]);
        assert!(r.next_box().is_err());
        let mut r = Reader::new(&[0, 0, 0, 8, b'f', b'r', b'e', b'e']);
        assert_eq!(r.next_box().unwrap().unwrap().1.len(), 0);
        assert!(r.next_box().unwrap().is_none());
        assert!(r.u8().is_err());
    }

    fn with_extents(file: &[u8], extents: Vec<(u64, u64)>) -> Container<'_> {
        Container {
            file,
            primary: Some(1),
            items: Vec::new(),
            extent_count: extents.len(),
            locations: vec![Location {
                id: 1,
                construction_method: 0,
                data_reference_index: 0,
                base_offset: 2,
                extents,
            }],
            idat: None,
            references: Vec::new(),
            properties: Vec::new(),
            associations: Vec::new(),
            moov: None,
        }
    }

    #[test]
    fn entries_are_small() {
        // As the module documentation says.
        assert!(std::mem::size_of::<Property<'_>>() <= 24);
        assert!(std::mem::size_of::<Location>() <= 40);
        assert!(std::mem::size_of::<Reference>() <= 40);
        assert!(std::mem::size_of::<ItemInfo>() <= 40);
        assert!(std::mem::size_of::<Association>() <= 40);
    }

    #[test]
    fn item_data_is_bounded_by_its_source() {
        let file: Vec<u8> = (0..100).collect();
        let data = |extents| {
            with_extents(&file, extents)
                .item_data(1)
                .map(Cow::into_owned)
        };
        assert_eq!(data(vec![(0, 3)]).unwrap(), [2, 3, 4]);
        assert_eq!(data(vec![(95, 0)]).unwrap(), [97, 98, 99]);
        assert_eq!(data(vec![(0, 2), (10, 1)]).unwrap(), [2, 3, 12]);
        // Each extent inside, together more than the file: refused before
        // allocating (65,535 of them would ask for 6.5 MB here, 64 GiB
        // over a 1 MiB file).
        let result = data(vec![(0, 98); 65_535]);
        assert!(matches!(result, Err(AvifError::Corrupt(_))), "{result:?}");
        // "To the end" among several, past the end, overflowing.
        for extents in [
            vec![(0, 1), (5, 0)],
            vec![(0, 99)],
            vec![(99, 0)],
            vec![(u64::MAX - 1, 1)],
            vec![(0, u64::MAX)],
            vec![],
        ] {
            assert!(data(extents.clone()).is_err(), "{extents:?}");
        }
        // The head of an item, across its extents, without allocating.
        let container = with_extents(&file, vec![(0, 2), (10, 1), (20, 5)]);
        assert_eq!(container.item_head::<4>(1).unwrap(), ([2, 3, 12, 22], 4));
        assert_eq!(container.item_head::<12>(1).unwrap().1, 8);
        // Disjoint: overlapping extents of one item are refused too.
        assert!(container.check_disjoint(&[1]).is_ok());
        let overlapping = with_extents(&file, vec![(0, 10), (9, 1)]);
        assert!(overlapping.check_disjoint(&[1]).is_err());
        assert!(container.check_disjoint(&[1, 1]).is_err());
    }
}
