//! Decoding files written by ravif (the encoder filestore uses), and files
//! assembled here from rav1e frames (subsampled, monochrome, limited range,
//! grids, rotation, sequences), plus hostile input: truncated, garbled,
//! oversized, not AVIF at all.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::many_single_char_names,
    // Box types are written as b"abcd" literals, which are references.
    clippy::trivially_copy_pass_by_ref,
    // rav1e's plane offset type is not re-exported.
    clippy::default_trait_access
)]

use filestore_avif::{decode, dimensions, AvifError, Crop, Image, Mirror};
use rav1e::prelude::{
    ChromaSampling, ColorDescription, ColorPrimaries, Config, EncoderConfig, EncoderStatus,
    MatrixCoefficients, PixelRange, SpeedSettings, TransferCharacteristics,
};
use ravif::{AlphaColorMode, BitDepth, Encoder, Img, RGB8, RGBA8};

const CAP: u64 = 50_000_000;

// ---------------------------------------------------------------------------
// Helpers: encoders and checks

fn encoder() -> Encoder<'static> {
    Encoder::new()
        .with_quality(92.0)
        .with_alpha_quality(92.0)
        .with_speed(10)
        .with_num_threads(Some(1))
}

fn ravif_rgb(
    width: usize,
    height: usize,
    depth: BitDepth,
    px: impl Fn(usize, usize) -> RGB8,
) -> Vec<u8> {
    let pixels: Vec<RGB8> = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| px(x, y))
        .collect();
    encoder()
        .with_bit_depth(depth)
        .encode_rgb(Img::new(&pixels[..], width, height))
        .expect("ravif encodes")
        .avif_file
}

fn ravif_rgba(
    width: usize,
    height: usize,
    mode: AlphaColorMode,
    px: impl Fn(usize, usize) -> RGBA8,
) -> Vec<u8> {
    let pixels: Vec<RGBA8> = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| px(x, y))
        .collect();
    encoder()
        .with_bit_depth(BitDepth::Eight)
        .with_alpha_color_mode(mode)
        .encode_rgba(Img::new(&pixels[..], width, height))
        .expect("ravif encodes")
        .avif_file
}

fn pixel(image: &Image, x: usize, y: usize) -> &[u8] {
    let channels = if image.has_alpha { 4 } else { 3 };
    let start = (y * image.width as usize + x) * channels;
    &image.pixels[start..start + channels]
}

fn assert_near(got: &[u8], want: &[u8], tolerance: u8, at: &str) {
    assert_eq!(got.len(), want.len(), "{at}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.abs_diff(*w) <= tolerance,
            "{at}: got {got:?}, want {want:?} (tolerance {tolerance})"
        );
    }
}

/// Checks every pixel at least `margin` columns away from the column
/// `split` (where two colours meet) against `want(x, y)`.
fn assert_image(
    image: &Image,
    split: usize,
    margin: usize,
    tolerance: u8,
    want: impl Fn(usize, usize) -> Vec<u8>,
) {
    let expected_len =
        image.width as usize * image.height as usize * if image.has_alpha { 4 } else { 3 };
    assert_eq!(image.pixels.len(), expected_len);
    for y in 0..image.height as usize {
        for x in 0..image.width as usize {
            if x + margin > split && x < split + margin {
                continue;
            }
            assert_near(
                pixel(image, x, y),
                &want(x, y),
                tolerance,
                &format!("pixel {x},{y}"),
            );
        }
    }
}

/// Y'CbCr of an RGB colour, the textbook way (independent of the decoder's
/// code): `full` range or limited, at `depth` bits.
fn ycbcr(rgb: [u8; 3], kr: f64, kb: f64, depth: u32, full: bool) -> [u16; 3] {
    let [r, g, b] = rgb.map(|v| f64::from(v) / 255.0);
    let y = kr * r + (1.0 - kr - kb) * g + kb * b;
    let cb = (b - y) / (2.0 * (1.0 - kb));
    let cr = (r - y) / (2.0 * (1.0 - kr));
    let max = f64::from((1u32 << depth) - 1);
    let mid = f64::from(1u32 << (depth - 1));
    let unit = f64::from(1u32 << (depth - 8));
    let (y, cb, cr) = if full {
        (y * max, mid + cb * max, mid + cr * max)
    } else {
        (
            16.0 * unit + 219.0 * unit * y,
            mid + 224.0 * unit * cb,
            mid + 224.0 * unit * cr,
        )
    };
    [y, cb, cr].map(|v| v.round().clamp(0.0, max) as u16)
}

struct Av1Params {
    width: usize,
    height: usize,
    depth: usize,
    sampling: ChromaSampling,
    range: PixelRange,
    /// Colour description written in the AV1 sequence header.
    matrix: Option<MatrixCoefficients>,
}

/// A still AV1 frame from rav1e; `sample(plane, x, y)` gives each plane's
/// sample at the plane's own resolution.
fn av1_still(p: &Av1Params, sample: impl Fn(usize, usize, usize) -> u16) -> Vec<u8> {
    if p.depth == 8 {
        av1_encode::<u8>(p, |plane, x, y| sample(plane, x, y) as u8)
    } else {
        av1_encode::<u16>(p, sample)
    }
}

fn av1_encode<P: rav1e::Pixel>(
    p: &Av1Params,
    sample: impl Fn(usize, usize, usize) -> P,
) -> Vec<u8> {
    let config = Config::new().with_encoder_config(EncoderConfig {
        width: p.width,
        height: p.height,
        bit_depth: p.depth,
        chroma_sampling: p.sampling,
        pixel_range: p.range,
        color_description: p.matrix.map(|matrix_coefficients| ColorDescription {
            color_primaries: ColorPrimaries::BT709,
            transfer_characteristics: TransferCharacteristics::SRGB,
            matrix_coefficients,
        }),
        still_picture: true,
        quantizer: 20,
        min_quantizer: 0,
        speed_settings: SpeedSettings::from_preset(10),
        ..EncoderConfig::default()
    });
    let mut context = config.new_context::<P>().expect("rav1e config");
    let mut frame = context.new_frame();
    for (index, plane) in frame.planes.iter_mut().enumerate() {
        let (w, h) = if index == 0 {
            (p.width, p.height)
        } else {
            let (sx, sy) = match p.sampling {
                ChromaSampling::Cs420 => (1, 1),
                ChromaSampling::Cs422 => (1, 0),
                _ => (0, 0),
            };
            ((p.width + sx) >> sx, (p.height + sy) >> sy)
        };
        let mut slice = plane.mut_slice(Default::default());
        for (y, row) in slice.rows_iter_mut().take(h).enumerate() {
            for (x, v) in row[..w].iter_mut().enumerate() {
                *v = sample(index, x, y);
            }
        }
    }
    context.send_frame(frame).expect("rav1e takes the frame");
    context.flush();
    let mut out = Vec::new();
    loop {
        match context.receive_packet() {
            Ok(mut packet) => out.append(&mut packet.data),
            Err(EncoderStatus::Encoded) => {}
            Err(EncoderStatus::LimitReached) => break,
            Err(e) => panic!("rav1e: {e:?}"),
        }
    }
    out
}

// ---------------------------------------------------------------------------
// A minimal AVIF writer (boxes by hand) for what ravif does not write

fn bx(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut out = ((payload.len() + 8) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(payload);
    out
}

fn full_box(kind: &[u8; 4], version: u8, flags: u32, payload: &[u8]) -> Vec<u8> {
    let mut body = (u32::from(version) << 24 | flags).to_be_bytes().to_vec();
    body.extend_from_slice(payload);
    bx(kind, &body)
}

fn ispe(w: u32, h: u32) -> Vec<u8> {
    full_box(b"ispe", 0, 0, &[w.to_be_bytes(), h.to_be_bytes()].concat())
}

fn nclx(primaries: u16, transfer: u16, matrix: u16, full: bool) -> Vec<u8> {
    let mut p = b"nclx".to_vec();
    for v in [primaries, transfer, matrix] {
        p.extend_from_slice(&v.to_be_bytes());
    }
    p.push(if full { 0x80 } else { 0 });
    bx(b"colr", &p)
}

fn av1c() -> Vec<u8> {
    bx(b"av1C", &[0x81, 0, 0, 0])
}

fn auxc_alpha() -> Vec<u8> {
    full_box(
        b"auxC",
        0,
        0,
        b"urn:mpeg:mpegB:cicp:systems:auxiliary:alpha\0",
    )
}

struct Item {
    id: u16,
    kind: &'static [u8; 4],
    data: Vec<u8>,
    /// In idat (construction method 1) rather than mdat.
    in_idat: bool,
    /// (1-based index into the properties, essential)
    properties: Vec<(u8, bool)>,
    /// iloc extents (offset from the start of the mdat payload or idat,
    /// length) written instead of the one of `data`, which is still stored.
    extents: Vec<(u32, u32)>,
}

impl Item {
    fn new(id: u16, kind: &'static [u8; 4], data: Vec<u8>, properties: &[(u8, bool)]) -> Self {
        Self {
            id,
            kind,
            data,
            in_idat: false,
            properties: properties.to_vec(),
            extents: Vec::new(),
        }
    }
}

fn ftyp(major: &[u8; 4]) -> Vec<u8> {
    let mut p = major.to_vec();
    p.extend_from_slice(&0u32.to_be_bytes());
    for brand in [major, b"mif1", b"miaf"] {
        p.extend_from_slice(brand);
    }
    bx(b"ftyp", &p)
}

fn hdlr(handler: &[u8; 4]) -> Vec<u8> {
    let mut p = 0u32.to_be_bytes().to_vec();
    p.extend_from_slice(handler);
    p.extend_from_slice(&[0; 13]);
    full_box(b"hdlr", 0, 0, &p)
}

fn meta(
    primary: u16,
    items: &[Item],
    properties: &[Vec<u8>],
    refs: &[(&[u8; 4], u16, Vec<u16>)],
    mdat_start: u32,
) -> Vec<u8> {
    let mut iinf = (items.len() as u16).to_be_bytes().to_vec();
    for item in items {
        let mut p = item.id.to_be_bytes().to_vec();
        p.extend_from_slice(&0u16.to_be_bytes());
        p.extend_from_slice(item.kind);
        p.push(0);
        iinf.extend(full_box(b"infe", 2, 0, &p));
    }
    // iloc version 1: 4-byte offsets and lengths, no base offset.
    let mut iloc = vec![0x44, 0x00];
    iloc.extend_from_slice(&(items.len() as u16).to_be_bytes());
    let (mut mdat_offset, mut idat_offset) = (mdat_start, 0u32);
    let mut idat = Vec::new();
    for item in items {
        iloc.extend_from_slice(&item.id.to_be_bytes());
        iloc.extend_from_slice(&u16::from(item.in_idat).to_be_bytes());
        iloc.extend_from_slice(&0u16.to_be_bytes());
        let (base, offset) = if item.in_idat {
            (0, &mut idat_offset)
        } else {
            (mdat_start, &mut mdat_offset)
        };
        let extents = if item.extents.is_empty() {
            vec![(*offset, item.data.len() as u32)]
        } else {
            item.extents.iter().map(|&(o, l)| (base + o, l)).collect()
        };
        iloc.extend_from_slice(&(extents.len() as u16).to_be_bytes());
        for (extent_offset, length) in extents {
            iloc.extend_from_slice(&extent_offset.to_be_bytes());
            iloc.extend_from_slice(&length.to_be_bytes());
        }
        *offset += item.data.len() as u32;
        if item.in_idat {
            idat.extend_from_slice(&item.data);
        }
    }
    let mut ipco = Vec::new();
    for p in properties {
        ipco.extend_from_slice(p);
    }
    let mut ipma = (items.len() as u32).to_be_bytes().to_vec();
    for item in items {
        ipma.extend_from_slice(&item.id.to_be_bytes());
        ipma.push(item.properties.len() as u8);
        for &(index, essential) in &item.properties {
            ipma.push(index | if essential { 0x80 } else { 0 });
        }
    }
    let mut iref = Vec::new();
    for (kind, from, to) in refs {
        let mut p = from.to_be_bytes().to_vec();
        p.extend_from_slice(&(to.len() as u16).to_be_bytes());
        for t in to {
            p.extend_from_slice(&t.to_be_bytes());
        }
        iref.extend(bx(kind, &p));
    }
    let mut body = hdlr(b"pict");
    body.extend(full_box(b"pitm", 0, 0, &primary.to_be_bytes()));
    body.extend(full_box(b"iloc", 1, 0, &iloc));
    body.extend(full_box(b"iinf", 0, 0, &iinf));
    if !refs.is_empty() {
        body.extend(full_box(b"iref", 0, 0, &iref));
    }
    body.extend(bx(
        b"iprp",
        &[bx(b"ipco", &ipco), full_box(b"ipma", 0, 0, &ipma)].concat(),
    ));
    if !idat.is_empty() {
        body.extend(bx(b"idat", &idat));
    }
    full_box(b"meta", 0, 0, &body)
}

/// A whole AVIF: ftyp, meta, mdat (the items not in idat, in order).
fn avif(
    primary: u16,
    items: &[Item],
    properties: &[Vec<u8>],
    refs: &[(&[u8; 4], u16, Vec<u16>)],
) -> Vec<u8> {
    let head = ftyp(b"avif");
    // Offsets have a fixed width: lay meta out once to learn its length.
    let meta_len = meta(primary, items, properties, refs, 0).len();
    let mdat_start = (head.len() + meta_len + 8) as u32;
    let mut mdat = Vec::new();
    for item in items.iter().filter(|i| !i.in_idat) {
        mdat.extend_from_slice(&item.data);
    }
    [
        head,
        meta(primary, items, properties, refs, mdat_start),
        bx(b"mdat", &mdat),
    ]
    .concat()
}

/// One `av01` item with the given properties appended to ispe and av1C.
fn single_item_avif(width: u32, height: u32, obus: Vec<u8>, extra: &[Vec<u8>]) -> Vec<u8> {
    let mut properties = vec![ispe(width, height), av1c()];
    properties.extend(extra.iter().cloned());
    let mut assoc = vec![(1, false), (2, true)];
    for i in 0..extra.len() {
        assoc.push((3 + i as u8, false));
    }
    avif(1, &[Item::new(1, b"av01", obus, &assoc)], &properties, &[])
}

fn grid_descriptor(rows: u8, columns: u8, width: u16, height: u16) -> Vec<u8> {
    let mut d = vec![0, 0, rows - 1, columns - 1];
    d.extend_from_slice(&width.to_be_bytes());
    d.extend_from_slice(&height.to_be_bytes());
    d
}

const RED: [u8; 3] = [220, 30, 40];
const BLUE: [u8; 3] = [30, 60, 210];
const GREEN: [u8; 3] = [40, 200, 60];
const GREY: [u8; 3] = [128, 128, 128];

fn solid_obus(width: usize, height: usize, rgb: [u8; 3]) -> Vec<u8> {
    let yuv = ycbcr(rgb, 0.2126, 0.0722, 8, true);
    av1_still(
        &Av1Params {
            width,
            height,
            depth: 8,
            sampling: ChromaSampling::Cs444,
            range: PixelRange::Full,
            matrix: Some(MatrixCoefficients::BT709),
        },
        |plane, _, _| yuv[plane],
    )
}

fn mono_obus(width: usize, height: usize, value: u8) -> Vec<u8> {
    av1_still(
        &Av1Params {
            width,
            height,
            depth: 8,
            sampling: ChromaSampling::Cs400,
            range: PixelRange::Full,
            matrix: None,
        },
        |_, _, _| u16::from(value),
    )
}

/// A 2x2 grid of 64x64 tiles (red, blue / green, grey) cropped to 120x100,
/// turned a quarter anticlockwise and mirrored left-right, with an alpha
/// grid (255, 128 / 64, 0) when `with_alpha`.
fn grid_avif(with_alpha: bool) -> Vec<u8> {
    let tiles = [RED, BLUE, GREEN, GREY].map(|c| solid_obus(64, 64, c));
    // Properties: 1 ispe grid, 2 ispe tile, 3 av1C, 4 colr, 5 irot, 6 imir, 7 auxC
    let properties = vec![
        ispe(120, 100),
        ispe(64, 64),
        av1c(),
        nclx(1, 13, 1, true),
        bx(b"irot", &[1]),
        bx(b"imir", &[1]),
        auxc_alpha(),
    ];
    let mut grid = Item::new(
        1,
        b"grid",
        grid_descriptor(2, 2, 120, 100),
        &[(1, false), (4, false), (5, true), (6, true)],
    );
    grid.in_idat = true;
    let mut items = vec![grid];
    for (i, obus) in tiles.into_iter().enumerate() {
        items.push(Item::new(
            2 + i as u16,
            b"av01",
            obus,
            &[(2, false), (3, true)],
        ));
    }
    let mut refs = vec![(b"dimg", 1, vec![2, 3, 4, 5])];
    if with_alpha {
        let mut alpha_grid = Item::new(
            10,
            b"grid",
            grid_descriptor(2, 2, 120, 100),
            &[(1, false), (7, true)],
        );
        alpha_grid.in_idat = true;
        items.push(alpha_grid);
        for (i, value) in [255, 128, 64, 0].into_iter().enumerate() {
            items.push(Item::new(
                11 + i as u16,
                b"av01",
                mono_obus(64, 64, value),
                &[(2, false), (3, true)],
            ));
        }
        refs.push((b"dimg", 10, vec![11, 12, 13, 14]));
        refs.push((b"auxl", 10, vec![1]));
    }
    avif(1, &items, &properties, &refs)
}

/// The `ispe` payload offsets (width at +4) of a file, in order.
fn ispe_offsets(file: &[u8]) -> Vec<usize> {
    file.windows(4)
        .enumerate()
        .filter(|(_, w)| w == b"ispe")
        .map(|(i, _)| i + 4)
        .collect()
}

fn set_ispe(file: &mut [u8], at: usize, width: u32, height: u32) {
    file[at + 4..at + 8].copy_from_slice(&width.to_be_bytes());
    file[at + 8..at + 12].copy_from_slice(&height.to_be_bytes());
}

// ---------------------------------------------------------------------------
// Files from ravif

#[test]
fn solid_colour_8_bit() {
    let file = ravif_rgb(64, 48, BitDepth::Eight, |_, _| RGB8::new(200, 80, 30));
    assert_eq!(dimensions(&file).unwrap(), (64, 48));
    let image = decode(&file, CAP).unwrap();
    assert_eq!(
        (image.width, image.height, image.has_alpha),
        (64, 48, false)
    );
    assert_eq!(
        (image.rotation, image.mirror, image.exif_orientation()),
        (0, None, 1)
    );
    assert_image(&image, 0, 0, 6, |_, _| vec![200, 80, 30]);
}

#[test]
fn two_colours_8_and_10_bit() {
    for depth in [BitDepth::Eight, BitDepth::Ten] {
        let file = ravif_rgb(128, 64, depth, |x, _| {
            if x < 64 {
                RGB8::new(230, 20, 20)
            } else {
                RGB8::new(20, 40, 220)
            }
        });
        let image = decode(&file, CAP).unwrap();
        assert_eq!((image.width, image.height), (128, 64));
        assert_image(&image, 64, 6, 10, |x, _| {
            if x < 64 {
                vec![230, 20, 20]
            } else {
                vec![20, 40, 220]
            }
        });
    }
}

#[test]
fn alpha() {
    // (ravif 0.13's AlphaColorMode::Premultiplied writes wrong colours: it
    // divides by alpha and zeroes opaque pixels. Premultiplied files are
    // assembled below instead.)
    for (mode, tolerance) in [
        (AlphaColorMode::UnassociatedDirty, 8),
        (AlphaColorMode::UnassociatedClean, 8),
    ] {
        let file = ravif_rgba(96, 64, mode, |x, _| {
            if x < 48 {
                RGBA8::new(40, 180, 90, 255)
            } else {
                RGBA8::new(200, 100, 50, 128)
            }
        });
        assert_eq!(dimensions(&file).unwrap(), (96, 64));
        let image = decode(&file, CAP).unwrap();
        assert!(image.has_alpha, "{mode:?}");
        assert_image(&image, 48, 6, tolerance, |x, _| {
            if x < 48 {
                vec![40, 180, 90, 255]
            } else {
                vec![200, 100, 50, 128]
            }
        });
    }
}

#[test]
fn too_large_is_refused_before_decoding() {
    let file = ravif_rgb(64, 64, BitDepth::Eight, |_, _| RGB8::new(1, 2, 3));
    assert_eq!(
        decode(&file, 64 * 64 - 1),
        Err(AvifError::TooLarge {
            width: 64,
            height: 64
        })
    );
    assert!(decode(&file, 64 * 64).is_ok());
    assert!(matches!(decode(&file, 0), Err(AvifError::TooLarge { .. })));

    // A header claiming 30000x30000 (the AV1 data is still 64x64).
    let mut huge = file.clone();
    let at = ispe_offsets(&huge)[0];
    set_ispe(&mut huge, at, 30_000, 30_000);
    assert_eq!(dimensions(&huge).unwrap(), (30_000, 30_000));
    assert_eq!(
        decode(&huge, CAP),
        Err(AvifError::TooLarge {
            width: 30_000,
            height: 30_000
        })
    );
    // Under a cap that allows it, the mismatch with the frame is corrupt.
    assert!(matches!(
        decode(&huge, u64::MAX),
        Err(AvifError::Corrupt(_))
    ));

    // A small ispe over a larger AV1 sequence header: the header is checked.
    let mut lying = file;
    set_ispe(&mut lying, at, 8, 8);
    assert_eq!(
        decode(&lying, 100),
        Err(AvifError::TooLarge {
            width: 64,
            height: 64
        })
    );
}

#[test]
fn not_avif() {
    for data in [
        &b""[..],
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
        b"GIF89a",
        &[0u8; 64],
        &[0xff; 7],
    ] {
        assert_eq!(decode(data, CAP), Err(AvifError::NotAvif));
        assert_eq!(dimensions(data), Err(AvifError::NotAvif));
    }
    // A HEIF file of another brand (HEVC).
    let mut heic = bx(b"ftyp", b"heic\0\0\0\0mif1heic");
    heic.extend(bx(b"mdat", b""));
    assert_eq!(decode(&heic, CAP), Err(AvifError::NotAvif));
}

#[test]
fn truncated_files_fail_cleanly() {
    let file = ravif_rgba(40, 30, AlphaColorMode::UnassociatedDirty, |x, y| {
        RGBA8::new(x as u8 * 6, y as u8 * 8, 100, 200)
    });
    assert!(decode(&file, CAP).is_ok());
    for len in 0..file.len() {
        let cut = &file[..len];
        let _ = dimensions(cut);
        assert!(
            decode(cut, CAP).is_err(),
            "decoded a file cut at {len} of {}",
            file.len()
        );
    }
}

/// xorshift, for reproducible garbling.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn garbled_files_never_panic() {
    // `decode` turns a panic of its own code into an error: record any, so
    // that this test still fails on one.
    static PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
        default_hook(info);
    }));
    let sources = [
        ravif_rgba(48, 32, AlphaColorMode::UnassociatedDirty, |x, y| {
            RGBA8::new(x as u8 * 5, y as u8 * 7, 90, (x * y) as u8)
        }),
        grid_avif(true),
    ];
    // AVIF_FUZZ_ROUNDS=20000 (in release) for a longer run.
    let rounds = std::env::var("AVIF_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for source in &sources {
        for round in 0..rounds {
            let mut data = source.clone();
            let flips = 1 + rng.below(8);
            for _ in 0..flips {
                let at = rng.below(data.len());
                // Mostly the container (the first bytes), sometimes anywhere.
                let at = if round % 3 == 0 {
                    at
                } else {
                    at % 400.min(data.len())
                };
                data[at] = match rng.below(4) {
                    0 => 0,
                    1 => 0xff,
                    2 => data[at] ^ (1 << rng.below(8)),
                    _ => rng.next() as u8,
                };
            }
            let _ = dimensions(&data);
            let decoded = decode(&data, 1_000_000);
            assert!(
                !PANICKED.load(std::sync::atomic::Ordering::SeqCst),
                "panicked on round {round}"
            );
            if let Ok(image) = decoded {
                let channels = if image.has_alpha { 4 } else { 3 };
                assert_eq!(
                    image.pixels.len(),
                    image.width as usize * image.height as usize * channels
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Files assembled from rav1e frames

#[test]
fn subsampled_limited_range_bt709() {
    // Left red, right blue, meeting on an even column; 4:2:0 and 4:2:2.
    for (sampling, depth) in [
        (ChromaSampling::Cs420, 8),
        (ChromaSampling::Cs422, 10),
        (ChromaSampling::Cs420, 12),
    ] {
        let (sx, sy) = match sampling {
            ChromaSampling::Cs420 => (1, 1),
            _ => (1, 0),
        };
        let left = ycbcr(RED, 0.2126, 0.0722, depth, false);
        let right = ycbcr(BLUE, 0.2126, 0.0722, depth, false);
        let obus = av1_still(
            &Av1Params {
                width: 96,
                height: 50,
                depth: depth as usize,
                sampling,
                range: PixelRange::Limited,
                matrix: Some(MatrixCoefficients::BT709),
            },
            |plane, x, _| {
                let x = if plane == 0 { x } else { x << sx };
                let _ = sy;
                if x < 48 {
                    left[plane]
                } else {
                    right[plane]
                }
            },
        );
        let expect = |x: usize, _| if x < 48 { RED.to_vec() } else { BLUE.to_vec() };
        // With the colour in an nclx colr box, and (the same) only in the
        // AV1 sequence header.
        for extra in [vec![nclx(1, 13, 1, false)], vec![]] {
            let file = single_item_avif(96, 50, obus.clone(), &extra);
            let image = decode(&file, CAP).unwrap();
            assert_image(&image, 48, 6, 10, expect);
        }
    }
}

#[test]
fn matrix_from_nclx_wins_over_the_sequence_header() {
    // Samples made with BT.2020, full range; the sequence header says
    // BT.709 limited, the colr box says BT.2020 full: the box applies.
    let yuv = ycbcr(GREEN, 0.2627, 0.0593, 10, true);
    let obus = av1_still(
        &Av1Params {
            width: 64,
            height: 64,
            depth: 10,
            sampling: ChromaSampling::Cs444,
            range: PixelRange::Limited,
            matrix: Some(MatrixCoefficients::BT709),
        },
        |plane, _, _| yuv[plane],
    );
    let file = single_item_avif(64, 64, obus, &[nclx(9, 16, 9, true)]);
    let image = decode(&file, CAP).unwrap();
    assert_image(&image, 0, 0, 6, |_, _| GREEN.to_vec());
}

#[test]
fn premultiplied_alpha() {
    // (200, 100, 50) at alpha 128, stored premultiplied: (100, 50, 25).
    let colour = solid_obus(64, 64, [100, 50, 25]);
    let alpha = mono_obus(64, 64, 128);
    for prem in [true, false] {
        let mut refs = vec![(b"auxl", 2, vec![1])];
        if prem {
            refs.push((b"prem", 1, vec![2]));
        }
        let file = avif(
            1,
            &[
                Item::new(
                    1,
                    b"av01",
                    colour.clone(),
                    &[(1, false), (2, true), (3, false)],
                ),
                Item::new(
                    2,
                    b"av01",
                    alpha.clone(),
                    &[(1, false), (2, true), (4, true)],
                ),
            ],
            &[ispe(64, 64), av1c(), nclx(1, 13, 1, true), auxc_alpha()],
            &refs,
        );
        let image = decode(&file, CAP).unwrap();
        assert!(image.has_alpha);
        let want = if prem {
            [200, 100, 50, 128]
        } else {
            [100, 50, 25, 128]
        };
        assert_image(&image, 0, 0, 8, |_, _| want.to_vec());
    }
}

#[test]
fn monochrome() {
    let obus = av1_still(
        &Av1Params {
            width: 80,
            height: 40,
            depth: 8,
            sampling: ChromaSampling::Cs400,
            range: PixelRange::Full,
            matrix: None,
        },
        |_, x, _| if x < 40 { 30 } else { 220 },
    );
    let image = decode(&single_item_avif(80, 40, obus, &[]), CAP).unwrap();
    assert!(!image.has_alpha);
    assert_image(&image, 40, 6, 4, |x, _| {
        if x < 40 {
            vec![30; 3]
        } else {
            vec![220; 3]
        }
    });
}

#[test]
fn grid_with_rotation_mirror_and_alpha() {
    for with_alpha in [false, true] {
        let file = grid_avif(with_alpha);
        assert_eq!(dimensions(&file).unwrap(), (120, 100));
        let image = decode(&file, CAP).unwrap();
        assert_eq!(
            (image.width, image.height, image.has_alpha),
            (120, 100, with_alpha)
        );
        assert_eq!((image.rotation, image.mirror), (1, Some(Mirror::LeftRight)));
        assert_eq!(image.crop, None);
        assert_eq!(image.exif_orientation(), 7);
        for (x, y, rgb, a) in [
            (10, 10, RED, 255),
            (100, 10, BLUE, 128),
            (10, 90, GREEN, 64),
            (119, 99, GREY, 0),
        ] {
            let mut want = rgb.to_vec();
            if with_alpha {
                want.push(a);
            }
            assert_near(
                pixel(&image, x, y),
                &want,
                6,
                &format!("grid pixel {x},{y}"),
            );
        }
        // Tiles refused when the cap is under one tile.
        assert!(matches!(
            decode(&file, 64 * 64 - 1),
            Err(AvifError::TooLarge { .. })
        ));
    }
}

#[test]
fn grid_errors() {
    let tiles = [RED, BLUE].map(|c| solid_obus(64, 64, c));
    let build = |descriptor: Vec<u8>, refs: Vec<u16>| {
        let mut items = vec![Item::new(1, b"grid", descriptor, &[(1, false)])];
        for (i, obus) in tiles.iter().enumerate() {
            items.push(Item::new(
                2 + i as u16,
                b"av01",
                obus.clone(),
                &[(2, false)],
            ));
        }
        avif(
            1,
            &items,
            &[ispe(100, 64), ispe(64, 64)],
            &[(b"dimg", 1, refs)],
        )
    };
    assert!(decode(&build(grid_descriptor(1, 2, 100, 64), vec![2, 3]), CAP).is_ok());
    // Too few tiles for the grid.
    assert!(matches!(
        decode(&build(grid_descriptor(1, 2, 100, 64), vec![2]), CAP),
        Err(AvifError::Corrupt(_))
    ));
    // Grid size differs from ispe.
    assert!(matches!(
        decode(&build(grid_descriptor(1, 2, 128, 64), vec![2, 3]), CAP),
        Err(AvifError::Corrupt(_))
    ));
    // A grid as its own tile.
    assert!(matches!(
        decode(&build(grid_descriptor(1, 2, 100, 64), vec![1, 1]), CAP),
        Err(AvifError::Unsupported(_))
    ));
}

#[test]
fn clean_aperture_is_reported() {
    // 50x40 centred in 64x64, marked essential as MIAF wants.
    let mut clap = Vec::new();
    for v in [50u32, 1, 40, 1, 0, 1, 0, 1] {
        clap.extend_from_slice(&v.to_be_bytes());
    }
    let file = avif(
        1,
        &[Item::new(
            1,
            b"av01",
            solid_obus(64, 64, RED),
            &[(1, false), (2, true), (3, true)],
        )],
        &[ispe(64, 64), av1c(), bx(b"clap", &clap)],
        &[],
    );
    let image = decode(&file, CAP).unwrap();
    assert_eq!((image.width, image.height), (64, 64));
    assert_eq!(
        image.crop,
        Some(Crop {
            x: 7,
            y: 12,
            width: 50,
            height: 40
        })
    );
}

#[test]
fn unknown_essential_property_is_refused() {
    let obus = solid_obus(64, 64, RED);
    let file = avif(
        1,
        &[Item::new(
            1,
            b"av01",
            obus.clone(),
            &[(1, false), (2, true)],
        )],
        &[ispe(64, 64), bx(b"zzzz", &[1, 2, 3])],
        &[],
    );
    assert!(matches!(decode(&file, CAP), Err(AvifError::Unsupported(_))));
    // Not essential: ignored.
    let file = avif(
        1,
        &[Item::new(1, b"av01", obus, &[(1, false), (2, false)])],
        &[ispe(64, 64), bx(b"zzzz", &[1, 2, 3])],
        &[],
    );
    assert!(decode(&file, CAP).is_ok());
}

/// An image sequence with no primary item: one track, one sample.
fn sequence_avif(obus: &[u8], width: u16, height: u16) -> Vec<u8> {
    let mut entry = vec![0; 6];
    entry.extend_from_slice(&1u16.to_be_bytes()); // data_reference_index
    entry.extend_from_slice(&[0; 16]);
    entry.extend_from_slice(&width.to_be_bytes());
    entry.extend_from_slice(&height.to_be_bytes());
    entry.extend_from_slice(&[0; 50]);
    entry.extend(av1c());
    entry.extend(nclx(1, 13, 1, true));
    let stsd = full_box(
        b"stsd",
        0,
        0,
        &[1u32.to_be_bytes().to_vec(), bx(b"av01", &entry)].concat(),
    );
    let stsz = full_box(
        b"stsz",
        0,
        0,
        &[
            0u32.to_be_bytes(),
            1u32.to_be_bytes(),
            (obus.len() as u32).to_be_bytes(),
        ]
        .concat(),
    );
    let build = |offset: u32| {
        let stco = full_box(
            b"stco",
            0,
            0,
            &[1u32.to_be_bytes(), offset.to_be_bytes()].concat(),
        );
        let stbl = bx(b"stbl", &[stsd.clone(), stsz.clone(), stco].concat());
        let mdia = bx(b"mdia", &[hdlr(b"pict"), bx(b"minf", &stbl)].concat());
        let moov = bx(b"moov", &bx(b"trak", &mdia));
        [ftyp(b"avis"), full_box(b"meta", 0, 0, &hdlr(b"pict")), moov].concat()
    };
    let head_len = build(0).len();
    [build((head_len + 8) as u32), bx(b"mdat", obus)].concat()
}

#[test]
fn sequence_first_frame() {
    let file = sequence_avif(&solid_obus(64, 48, GREEN), 64, 48);
    assert_eq!(dimensions(&file).unwrap(), (64, 48));
    let image = decode(&file, CAP).unwrap();
    assert_eq!(
        (image.width, image.height, image.has_alpha),
        (64, 48, false)
    );
    assert_image(&image, 0, 0, 6, |_, _| GREEN.to_vec());
    assert!(matches!(
        decode(&file, 100),
        Err(AvifError::TooLarge { .. })
    ));
}

// ---------------------------------------------------------------------------
// Hostile files that would cost memory or time out of proportion to their
// size: each must be refused quickly.

/// Refusals must not wait for a decode (debug build, shared machine).
const QUICK: std::time::Duration = std::time::Duration::from_secs(1);

/// `decode`'s result and how long it took.
fn timed_decode(file: &[u8], cap: u64) -> (Result<Image, AvifError>, std::time::Duration) {
    let started = std::time::Instant::now();
    let result = decode(file, cap);
    (result, started.elapsed())
}

/// A file whose one `av01` item (64x64 by its ispe) has `count` extents,
/// each written as `extent` with the iloc field sizes `sizes` (offset size
/// in the high nibble, length size in the low one), over an mdat of
/// `mdat_len` zero bytes.
fn many_extents_file(sizes: u8, extent: &[u8], count: u16, mdat_len: usize) -> Vec<u8> {
    let mut iloc = vec![sizes, 0x00];
    iloc.extend_from_slice(&1u16.to_be_bytes()); // item count
    iloc.extend_from_slice(&1u16.to_be_bytes()); // item ID
    iloc.extend_from_slice(&0u16.to_be_bytes()); // construction method
    iloc.extend_from_slice(&0u16.to_be_bytes()); // data reference index
    iloc.extend_from_slice(&count.to_be_bytes());
    for _ in 0..count {
        iloc.extend_from_slice(extent);
    }
    let mut infe = 1u16.to_be_bytes().to_vec();
    infe.extend_from_slice(&0u16.to_be_bytes());
    infe.extend_from_slice(b"av01\0");
    let iinf = full_box(
        b"iinf",
        0,
        0,
        &[1u16.to_be_bytes().to_vec(), full_box(b"infe", 2, 0, &infe)].concat(),
    );
    let ipma = full_box(b"ipma", 0, 0, &[0, 0, 0, 1, 0, 1, 2, 1, 0x82]);
    let iprp = bx(
        b"iprp",
        &[bx(b"ipco", &[ispe(64, 64), av1c()].concat()), ipma].concat(),
    );
    let meta = full_box(
        b"meta",
        0,
        0,
        &[
            hdlr(b"pict"),
            full_box(b"pitm", 0, 0, &1u16.to_be_bytes()),
            full_box(b"iloc", 1, 0, &iloc),
            iinf,
            iprp,
        ]
        .concat(),
    );
    [ftyp(b"avif"), meta, bx(b"mdat", &vec![0; mdat_len])].concat()
}

#[test]
fn extents_repeating_the_file_are_refused_quickly() {
    const MIB: usize = 1 << 20;
    // 65,535 extents of no bytes in the file (offset and length fields of
    // size 0): each one "the whole file", 64 GiB together.
    let file = many_extents_file(0x00, &[], 65_535, MIB);
    assert!(file.len() < MIB + 1024);
    let (result, took) = timed_decode(&file, CAP);
    assert!(matches!(result, Err(AvifError::Corrupt(_))), "{result:?}");
    assert!(took < QUICK, "{took:?}");
    assert!(matches!(dimensions(&file), Err(AvifError::Corrupt(_))));

    // The same with 4-byte fields, each extent 1 MiB of the file: refused
    // when the item is read, before anything is allocated; `dimensions`
    // reads no item data.
    let extent = [0u32.to_be_bytes(), (MIB as u32).to_be_bytes()].concat();
    let file = many_extents_file(0x44, &extent, 65_535, MIB);
    let (result, took) = timed_decode(&file, CAP);
    assert!(matches!(result, Err(AvifError::Corrupt(_))), "{result:?}");
    assert!(took < QUICK, "{took:?}");
    assert_eq!(dimensions(&file), Ok((64, 64)));

    // "To the end" (length 0) is only for an item of one extent.
    let extent = [0u32.to_be_bytes(), 0u32.to_be_bytes()].concat();
    let file = many_extents_file(0x44, &extent, 2, 1024);
    assert!(matches!(decode(&file, CAP), Err(AvifError::Corrupt(_))));
}

#[test]
fn dimensions_reads_only_boxes() {
    // A grid (no ispe) whose descriptor item declares extents adding up to
    // more than idat holds: reading its data is refused, but its size is
    // in its first bytes, which is all `dimensions` (and `decode`) read.
    let tiles = [RED, BLUE, GREEN, GREY].map(|c| solid_obus(64, 64, c));
    let mut grid = Item::new(1, b"grid", grid_descriptor(2, 2, 120, 100), &[]);
    grid.in_idat = true;
    grid.extents = vec![(0, 8), (0, 8)];
    let mut items = vec![grid];
    for (i, obus) in tiles.into_iter().enumerate() {
        items.push(Item::new(
            2 + i as u16,
            b"av01",
            obus,
            &[(1, false), (2, true)],
        ));
    }
    let file = avif(
        1,
        &items,
        &[ispe(64, 64), av1c()],
        &[(b"dimg", 1, vec![2, 3, 4, 5])],
    );
    assert_eq!(dimensions(&file), Ok((120, 100)));
    let image = decode(&file, CAP).unwrap();
    assert_near(pixel(&image, 100, 90), &GREY, 6, "grid pixel");
}

/// The OBUs of a low-overhead AV1 stream (all with size fields, as rav1e
/// writes them): (type, the whole OBU).
fn split_obus(mut data: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let header_len = 1 + usize::from(data[0] & 4 != 0);
        assert!(data[0] & 2 != 0, "rav1e writes OBU sizes");
        let (mut size, mut at) = (0usize, header_len);
        loop {
            let byte = data[at];
            size |= usize::from(byte & 0x7f) << (7 * (at - header_len));
            at += 1;
            if byte & 0x80 == 0 {
                break;
            }
        }
        out.push(((data[0] >> 3) & 0x0f, data[..at + size].to_vec()));
        data = &data[at + size..];
    }
    out
}

#[test]
fn av1_data_of_more_than_one_frame_is_refused() {
    let obus = solid_obus(64, 64, RED);
    let units = split_obus(&obus);
    let of_type = |kind: u8| {
        units
            .iter()
            .find(|(t, _)| *t == kind)
            .map(|(_, obu)| obu.clone())
            .expect("rav1e writes it")
    };
    let (sequence, frame) = (of_type(1), of_type(6));
    // Sequence header and frame alone: the image.
    let one = [&sequence[..], &frame].concat();
    let image = decode(&single_item_avif(64, 64, one, &[]), CAP).unwrap();
    assert_near(pixel(&image, 10, 10), &RED, 6, "pixel");

    // The frame twice (as hidden frames before a shown one would be), or
    // many times: refused before rav1d sees it.
    for copies in [2, 100] {
        let mut many = sequence.clone();
        for _ in 0..copies {
            many.extend_from_slice(&frame);
        }
        let file = single_item_avif(64, 64, many.clone(), &[]);
        let (result, took) = timed_decode(&file, CAP);
        assert!(
            matches!(result, Err(AvifError::Unsupported(_))),
            "{result:?}"
        );
        assert!(took < QUICK, "{took:?}");
        assert_eq!(dimensions(&file), Ok((64, 64)));
        // The first frame of a sequence, likewise.
        let file = sequence_avif(&many, 64, 64);
        assert!(matches!(decode(&file, CAP), Err(AvifError::Unsupported(_))));
    }

    // An OBU whose size runs past the item's end.
    let mut cut = [&sequence[..], &frame].concat();
    cut.pop();
    assert!(matches!(
        decode(&single_item_avif(64, 64, cut, &[]), CAP),
        Err(AvifError::Corrupt(_))
    ));
    // A sequence header without a size field runs to the end: it swallows
    // the frame, and there is none left.
    let mut unsized_sequence = sequence[0..1].to_vec();
    unsized_sequence[0] &= !2;
    unsized_sequence.extend_from_slice(&sequence[2..]);
    assert!(sequence[1] < 0x80, "a one-byte size");
    let file = single_item_avif(64, 64, [&unsized_sequence[..], &frame].concat(), &[]);
    assert!(matches!(decode(&file, CAP), Err(AvifError::Corrupt(_))));
}

/// A tile's data, and the iloc extents to write instead (see `Item`).
type Tile = (Vec<u8>, Vec<(u32, u32)>);

/// A 2x2 grid (ispe `width` x `height`) of four 64x64 tiles, items 2 to 5,
/// whose data are `tiles` (empty for a tile given `extents` instead).
fn grid_of_tiles(width: u32, height: u32, tiles: Vec<Tile>) -> Vec<u8> {
    let mut grid = Item::new(
        1,
        b"grid",
        grid_descriptor(2, 2, width as u16, height as u16),
        &[(1, false)],
    );
    grid.in_idat = true;
    let mut items = vec![grid];
    for (i, (data, extents)) in tiles.into_iter().enumerate() {
        let mut tile = Item::new(2 + i as u16, b"av01", data, &[(2, false), (3, true)]);
        tile.extents = extents;
        items.push(tile);
    }
    avif(
        1,
        &items,
        &[ispe(width, height), ispe(64, 64), av1c()],
        &[(b"dimg", 1, vec![2, 3, 4, 5])],
    )
}

#[test]
fn images_sharing_data_are_refused() {
    let red = solid_obus(64, 64, RED);
    let len = red.len() as u32;
    // Four tiles, all pointing at the first one's bytes.
    let mut tiles = vec![(red.clone(), Vec::new())];
    tiles.extend((0..3).map(|_| (Vec::new(), vec![(0, len)])));
    let file = grid_of_tiles(120, 100, tiles);
    let (result, took) = timed_decode(&file, CAP);
    assert!(matches!(result, Err(AvifError::Corrupt(_))), "{result:?}");
    assert!(took < QUICK, "{took:?}");
    // Overlapping only in part.
    let mut tiles = vec![(red.clone(), Vec::new())];
    tiles.extend((0..3).map(|i| (Vec::new(), vec![(i + 1, len - i - 1)])));
    let file = grid_of_tiles(120, 100, tiles);
    assert!(matches!(decode(&file, CAP), Err(AvifError::Corrupt(_))));
    // Each tile its own bytes: fine.
    let file = grid_of_tiles(
        120,
        100,
        (0..4).map(|_| (red.clone(), Vec::new())).collect(),
    );
    assert!(decode(&file, CAP).is_ok());

    // The same tile four times.
    let mut file = grid_of_tiles(
        120,
        100,
        (0..4).map(|_| (red.clone(), Vec::new())).collect(),
    );
    let dimg = file.windows(4).position(|w| w == b"dimg").unwrap();
    for i in 0..4 {
        file[dimg + 8 + 2 * i..dimg + 10 + 2 * i].copy_from_slice(&2u16.to_be_bytes());
    }
    assert!(matches!(decode(&file, CAP), Err(AvifError::Corrupt(_))));

    // An alpha item on the colour's bytes.
    let mut alpha = Item::new(2, b"av01", Vec::new(), &[(1, false), (2, true), (3, true)]);
    alpha.extents = vec![(0, len)];
    let file = avif(
        1,
        &[
            Item::new(1, b"av01", red.clone(), &[(1, false), (2, true)]),
            alpha,
        ],
        &[ispe(64, 64), av1c(), auxc_alpha()],
        &[(b"auxl", 2, vec![1])],
    );
    assert!(matches!(decode(&file, CAP), Err(AvifError::Corrupt(_))));
}

#[test]
fn grid_tiles_count_against_the_cap_together() {
    // Four 64x64 tiles (16,384 pixels) for a 65x65 image (4,225).
    let tiles = [RED, BLUE, GREEN, GREY].map(|c| (solid_obus(64, 64, c), Vec::new()));
    let file = grid_of_tiles(65, 65, tiles.to_vec());
    let (result, took) = timed_decode(&file, 10_000);
    assert_eq!(
        result,
        Err(AvifError::TooLarge {
            width: 128,
            height: 128
        })
    );
    assert!(took < QUICK, "{took:?}");
    let image = decode(&file, 128 * 128).unwrap();
    assert_eq!((image.width, image.height), (65, 65));
    assert_near(pixel(&image, 64, 64), &GREY, 6, "grid pixel");
}

/// Bits written most significant first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    bits: usize,
}

impl BitWriter {
    fn put(&mut self, value: u32, bits: u32) {
        for i in (0..bits).rev() {
            if self.bits.is_multiple_of(8) {
                self.bytes.push(0);
            }
            let bit = ((value >> i) & 1) as u8;
            *self.bytes.last_mut().unwrap() |= bit << (7 - self.bits % 8);
            self.bits += 1;
        }
    }
}

/// An AV1 sequence header OBU for still pictures of `width` x `height`:
/// 12-bit 4:4:4 (profile 2) when `deep`, else 8-bit 4:2:0 (profile 0).
fn sequence_header_obu(width: u32, height: u32, deep: bool) -> Vec<u8> {
    let mut b = BitWriter::default();
    b.put(if deep { 2 } else { 0 }, 3); // seq_profile
    b.put(1, 1); // still_picture
    b.put(1, 1); // reduced_still_picture_header
    b.put(31, 5); // seq_level_idx: no level
    b.put(15, 4); // frame_width_bits_minus_1
    b.put(15, 4); // frame_height_bits_minus_1
    b.put(width - 1, 16);
    b.put(height - 1, 16);
    b.put(0, 3); // 128x128 superblocks, filter intra, intra edge filter
    b.put(0, 3); // superres, cdef, restoration
    b.put(u32::from(deep), 1); // high_bitdepth
    if deep {
        b.put(1, 1); // twelve_bit
    }
    b.put(0, 1); // mono_chrome
    b.put(0, 1); // color_description_present_flag
    b.put(1, 1); // color_range
    if deep {
        b.put(0, 1); // subsampling_x: 0, so 4:4:4
    } else {
        b.put(0, 2); // chroma_sample_position
    }
    b.put(0, 1); // separate_uv_delta_q
    b.put(0, 1); // film_grain_params_present
    b.put(1, 1); // trailing one bit
    let payload = b.bytes;
    [vec![1 << 3 | 2, payload.len() as u8], payload].concat()
}

#[test]
fn deep_4_4_4_near_the_cap_is_refused_for_memory() {
    // 4096x4096 under a cap of exactly that: 12-bit 4:4:4 would take rav1d
    // about 24 bytes a pixel, over the budget; 8-bit 4:2:0 fits. (The frame
    // is a stub: the refusal comes first.)
    let (side, cap) = (4096, 4096 * 4096);
    let frame = vec![6 << 3 | 2, 4, 0, 0, 0, 0];
    let deep = [sequence_header_obu(side, side, true), frame.clone()].concat();
    let file = single_item_avif(side, side, deep, &[]);
    let (result, took) = timed_decode(&file, cap);
    assert_eq!(
        result,
        Err(AvifError::TooLarge {
            width: side,
            height: side
        })
    );
    assert!(took < QUICK, "{took:?}");
    let light = [sequence_header_obu(side, side, false), frame].concat();
    let file = single_item_avif(side, side, light, &[]);
    let (result, took) = timed_decode(&file, cap);
    assert!(matches!(result, Err(AvifError::Corrupt(_))), "{result:?}");
    assert!(took < QUICK, "{took:?}");
}
