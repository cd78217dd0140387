//! Hostile input: bombs, broken files, random bytes; the scaled JPEG decode.

use std::time::{Duration, Instant};

use image::ImageFormat;
use rand::{Rng, SeedableRng};

use super::super::decode::{jpeg_decoder_denominator, jpeg_eighths, Source};
use super::*;

/// A PNG claiming `w`×`h` RGBA: its signature, IHDR, a few bytes of IDAT
/// and IEND.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    png_of_chunks(&ihdr, b"\x78\x9c\x63\x00\x00")
}

/// A PNG file of this IHDR and IDAT (and IEND).
fn png_of_chunks(ihdr: &[u8], idat: &[u8]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [(b"IHDR", ihdr), (b"IDAT", idat), (b"IEND", &[][..])] {
        let mut chunk = kind.to_vec();
        chunk.extend_from_slice(data);
        out.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
        out.extend_from_slice(&chunk);
        out.extend_from_slice(&crc32fast::hash(&chunk).to_be_bytes());
    }
    out
}

#[test]
fn a_bomb_header_is_too_large_at_once() {
    let bomb = png_header(30_000, 30_000);
    assert!(bomb.len() < 64);
    let f = file(&bomb);
    assert_eq!(probe(f.path()).unwrap().width, 30_000);
    let started = Instant::now();
    let e = render(
        f.path(),
        &Transform::default(),
        Output::Webp,
        &Limits::default(),
    );
    assert!(started.elapsed() < Duration::from_millis(200));
    let Err(ImageError::TooLarge { width, height, max }) = e else {
        panic!("{e:?}");
    };
    assert_eq!((width, height, max), (30_000, 30_000, 50_000_000));
    assert!(ImageError::TooLarge { width, height, max }
        .to_string()
        .contains("30000×30000"));
}

/// An AVIF (written by this service) whose `ispe` box is changed to claim
/// 30000×30000: refused from its header, before the AV1 decoder runs.
#[test]
fn an_avif_bomb_header_is_too_large_at_once() {
    let png = encoded(&halves(64, 48), ImageFormat::Png);
    let mut avif = render_bytes(&png, &Transform::default(), Output::Avif).unwrap();
    let at = avif.windows(4).position(|w| w == b"ispe").unwrap();
    avif[at + 8..at + 12].copy_from_slice(&30_000u32.to_be_bytes());
    avif[at + 12..at + 16].copy_from_slice(&30_000u32.to_be_bytes());
    let f = file(&avif);
    assert_eq!(probe(f.path()).unwrap().width, 30_000);
    let e = render(
        f.path(),
        &Transform::default(),
        Output::Webp,
        &Limits::default(),
    );
    let Err(ImageError::TooLarge { width, height, .. }) = e else {
        panic!("{e:?}");
    };
    assert_eq!((width, height), (30_000, 30_000));
    // Under the cap, the header lies about the AV1 frame: refused too.
    let mut liar = avif.clone();
    liar[at + 8..at + 12].copy_from_slice(&640u32.to_be_bytes());
    liar[at + 12..at + 16].copy_from_slice(&480u32.to_be_bytes());
    let small = Limits {
        max_source_pixels: 640 * 480,
        ..Limits::default()
    };
    let e = render(
        file(&liar).path(),
        &Transform::default(),
        Output::Webp,
        &small,
    );
    assert!(e.is_err(), "{e:?}");
}

#[test]
fn a_variant_too_large_to_write_is_refused() {
    let png = encoded(&halves(2, 200), ImageFormat::Png);
    let t = transform(Some(4096), None, Fit::Contain);
    let e = render_bytes(&png, &t, Output::Png).unwrap_err();
    assert!(
        matches!(e, ImageError::OutputTooLarge { width: 4096, .. }) && !e.is_the_sources(),
        "{e:?}"
    );
}

#[test]
fn not_images_and_broken_images() {
    let text = b"hello, this is a text file and not an image at all\n";
    for bytes in [&text[..], b"", b"\xFF"] {
        let e = render_bytes(bytes, &Transform::default(), Output::Png).unwrap_err();
        assert!(matches!(e, ImageError::NotAnImage), "{bytes:?}: {e:?}");
        assert!(matches!(
            probe(file(bytes).path()),
            Err(ImageError::NotAnImage)
        ));
    }
    // An AVIF's first bytes, cut inside its ftyp box, and one with no boxes
    // after it.
    for bytes in [
        &b"\0\0\0\x1cftypavif\0\0\0\0mif1avif"[..],
        b"\0\0\0\x18ftypavif\0\0\0\0mif1avif",
    ] {
        let e = render_bytes(bytes, &Transform::default(), Output::Png).unwrap_err();
        assert!(
            matches!(e, ImageError::NotAnImage | ImageError::Corrupt(_)),
            "{e:?}"
        );
    }
    for format in [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ] {
        let whole = encoded(&halves(64, 48), format);
        for cut in [3, 14, 20, 30] {
            let e = render_bytes(&whole[..cut], &Transform::default(), Output::Png).unwrap_err();
            let short_of_magic = cut < 12 && matches!(e, ImageError::NotAnImage);
            assert!(
                short_of_magic || matches!(e, ImageError::Corrupt(_)),
                "{format:?} cut at {cut}: {e:?}"
            );
        }
        let mut garbage = whole.clone();
        garbage[16..].fill(0xAB);
        match render_bytes(&garbage, &Transform::default(), Output::Png) {
            Err(ImageError::Corrupt(_) | ImageError::TooLarge { .. }) => {}
            other => panic!("{format:?}: {other:?}"),
        }
    }
}

#[test]
fn a_big_jpeg_is_decoded_scaled_down() {
    assert_eq!(jpeg_eighths(4000, 3000, 256, 192), 1);
    assert_eq!(jpeg_eighths(4000, 3000, 600, 450), 2);
    // 3/8: 1500 px, enough for 1080 and for 1500 itself, not for 1501.
    assert_eq!(jpeg_eighths(4000, 3000, 1080, 810), 3);
    assert_eq!(jpeg_eighths(4000, 3000, 1500, 1125), 3);
    assert_eq!(jpeg_eighths(4000, 3000, 1501, 1126), 4);
    assert_eq!(jpeg_eighths(4000, 3000, 3000, 2250), 8);
    // Rounded up as the decoders round: 3/8 of 1001 is 375.375, so 376.
    assert_eq!(jpeg_eighths(1001, 1001, 376, 376), 3);
    // Both sides must be covered (cover of a panorama needs its height).
    assert_eq!(jpeg_eighths(4000, 1000, 200, 400), 4);
    // `jpeg-decoder`, for a file `jpeg_dc` leaves to it: 1/2 for 3/8.
    let denominators = [1, 2, 3, 4, 8].map(jpeg_decoder_denominator);
    assert_eq!(denominators, [8, 4, 2, 2, 1]);
    let source = encoded(&halves(1600, 1200), ImageFormat::Jpeg);
    let f = file(&source);
    let header = probe(f.path()).unwrap();
    let opened = Source::open(f.path(), header, &Limits::default()).unwrap();
    let decoded = opened.decode(200, 150).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (200, 150));
    let t = transform(Some(256), None, Fit::Inside);
    let out = render_bytes(&source, &t, Output::Jpeg).unwrap();
    assert_eq!(dimensions(&out, Output::Jpeg), (256, 192));
}

#[test]
fn random_bytes_after_a_magic_number_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let limits = Limits {
        max_source_pixels: 1_000_000,
        ..Limits::default()
    };
    let valid: Vec<Vec<u8>> = [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ]
    .into_iter()
    .map(|format| encoded(&halves(32, 24), format))
    .collect();
    let magics: [&[u8]; 5] = [
        b"\xFF\xD8\xFF",
        b"\x89PNG\r\n\x1a\n",
        b"GIF89a",
        b"RIFF\0\0\0\0WEBPVP8 ",
        b"\0\0\0\x1cftypavif",
    ];
    let t = transform(Some(16), Some(16), Fit::Cover);
    for i in 0..2000 {
        let bytes = if i % 2 == 0 {
            let mut bytes = magics[i / 2 % magics.len()].to_vec();
            let len = rng.random_range(0..400);
            bytes.extend((0..len).map(|_| rng.random::<u8>()));
            bytes
        } else {
            let mut bytes = valid[i / 2 % valid.len()].clone();
            for _ in 0..rng.random_range(1..8) {
                let at = rng.random_range(0..bytes.len());
                bytes[at] = rng.random();
            }
            bytes.truncate(rng.random_range(1..=bytes.len()));
            bytes
        };
        let f = file(&bytes);
        if let Err(ImageError::Encode(e)) = render(f.path(), &t, Output::Png, &limits) {
            panic!("case {i}: an internal error for a broken input: {e}");
        }
    }
}

/// A zlib stream of `reps` × 258 + 1 zero bytes in 13 bits per 258: one
/// fixed-Huffman block, a literal 0, then `reps` copies of length 258 at
/// distance 1 (the densest deflate there is, about 1,000:1).
fn zeros_zlib(reps: usize) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        /// `len` bits of `v`, least significant first.
        fn put(&mut self, v: u64, len: u32) {
            self.acc |= v << self.n;
            self.n += len;
            while self.n >= 8 {
                self.out.push((self.acc & 0xFF) as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// A Huffman code, most significant bit first.
        fn code(&mut self, code: u64, len: u32) {
            let reversed = (0..len).fold(0, |r, i| (r << 1) | ((code >> i) & 1));
            self.put(reversed, len);
        }
    }
    let mut b = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // BFINAL
    b.put(1, 2); // fixed Huffman codes
    b.code(0x30, 8); // the literal 0
    for _ in 0..reps {
        b.code(0b1100_0101, 8); // length 258 (code 285)
        b.code(0, 5); // distance 1
    }
    b.code(0, 7); // end of block
    b.put(0, 7);
    let len = reps * 258 + 1;
    let adler = (u32::try_from(len % 65_521).unwrap() << 16) | 1;
    b.out.extend_from_slice(&adler.to_be_bytes());
    b.out
}

/// A 4×4 RGB PNG with an iCCP chunk whose profile inflates to `reps` ×
/// 258 + 1 bytes.
fn png_with_profile(reps: usize) -> Vec<u8> {
    let png = encoded(&halves(4, 4), ImageFormat::Png);
    let mut iccp = b"iCCP".to_vec();
    iccp.extend_from_slice(b"x\0\0");
    iccp.extend_from_slice(&zeros_zlib(reps));
    let mut chunk = u32::try_from(iccp.len() - 4)
        .unwrap()
        .to_be_bytes()
        .to_vec();
    chunk.extend_from_slice(&iccp);
    chunk.extend_from_slice(&crc32fast::hash(&iccp).to_be_bytes());
    // After the signature (8 bytes) and IHDR (25).
    let mut out = png[..33].to_vec();
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&png[33..]);
    out
}

/// The header of a PNG is its IHDR: an ICC profile that inflates to 1 GiB
/// (from a 6.5 MB chunk) is not inflated when it is probed, and a PNG with
/// megabytes of text (an editor's history, a workflow) probes as any
/// other.
#[test]
fn a_pngs_chunks_before_its_pixels_cost_nothing_to_probe() {
    let bomb = file(&png_with_profile((1 << 30) / 258));
    let started = Instant::now();
    assert_eq!(probe(bomb.path()).unwrap().width, 4);
    assert!(started.elapsed() < Duration::from_secs(1), "not inflated");
    let png = encoded(&halves(4, 4), ImageFormat::Png);
    let mut text = b"tEXt".to_vec();
    text.extend_from_slice(b"XML:com.adobe.xmp\0");
    text.resize(text.len() + (5 << 20), b'x');
    let mut with_text = png[..33].to_vec();
    with_text.extend_from_slice(&u32::try_from(text.len() - 4).unwrap().to_be_bytes());
    with_text.extend_from_slice(&text);
    with_text.extend_from_slice(&crc32fast::hash(&text).to_be_bytes());
    with_text.extend_from_slice(&png[33..]);
    let f = file(&with_text);
    assert_eq!(
        (
            probe(f.path()).unwrap().width,
            probe(f.path()).unwrap().height
        ),
        (4, 4)
    );
    let out = render_bytes(&with_text, &Transform::default(), Output::Png).unwrap();
    assert!(!out.is_empty());
    let Err(ImageError::Corrupt(_)) = probe(file(b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDX").path()) else {
        panic!("a PNG without its IHDR first is refused");
    };
}

/// The decode skips the ICC profile too: a PNG whose profile inflates to
/// 1 GiB renders as quickly as any 4×4 PNG (through `image`, the decode
/// inflated it up to the 200 MB pixel budget on every render).
#[test]
fn an_icc_profile_bomb_is_not_inflated_when_decoded() {
    let bomb = png_with_profile((1 << 30) / 258);
    let started = Instant::now();
    let out = render_bytes(&bomb, &Transform::default(), Output::Png).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1), "not inflated");
    let image = image::load_from_memory(&out).unwrap().into_rgb8();
    assert_eq!(image.dimensions(), (4, 4));
    assert_eq!(image.get_pixel(0, 0), &image::Rgb([255, 0, 0]));
}

/// Every PNG layout decodes to its pixels: 16-bit colour and grey with
/// alpha, a palette with transparency, 1-bit grey.
#[test]
fn every_png_layout_decodes_to_its_pixels() {
    use image::{GenericImageView, Pixel};
    let wide = DynamicImage::ImageRgb16(image::ImageBuffer::from_fn(8, 4, |x, _| {
        image::Rgb(if x < 4 {
            [65_535, 0, 0]
        } else {
            [0, 0, 65_535]
        })
    }));
    let grey_alpha = DynamicImage::ImageLumaA16(image::ImageBuffer::from_pixel(
        8,
        4,
        image::LumaA([30_000, 65_535]),
    ));
    let written = |color, depth, data: &[u8], palette: Option<(&[u8], &[u8])>| {
        let mut out = Vec::new();
        let mut e = png::Encoder::new(&mut out, 8, 4);
        e.set_color(color);
        e.set_depth(depth);
        if let Some((plte, trns)) = palette {
            e.set_palette(plte.to_vec());
            e.set_trns(trns.to_vec());
        }
        let mut w = e.write_header().unwrap();
        w.write_image_data(data).unwrap();
        w.finish().unwrap();
        out
    };
    // Palette: entry 0 green and opaque, 1 red and clear; left half 0.
    let indexed = written(
        png::ColorType::Indexed,
        png::BitDepth::Eight,
        &[[0u8; 4], [1u8; 4]].concat().repeat(4),
        Some((&[0, 255, 0, 255, 0, 0], &[255, 0])),
    );
    // 1-bit grey: the left half black, the right white.
    let one_bit = written(
        png::ColorType::Grayscale,
        png::BitDepth::One,
        &[0x0F; 4],
        None,
    );
    for (bytes, left, right) in [
        (
            encoded(&wide, ImageFormat::Png),
            [255, 0, 0, 255],
            [0, 0, 255, 255],
        ),
        (
            encoded(&grey_alpha, ImageFormat::Png),
            [117, 117, 117, 255],
            [117, 117, 117, 255],
        ),
        (indexed, [0, 255, 0, 255], [255, 0, 0, 0]),
        (one_bit, [0, 0, 0, 255], [255, 255, 255, 255]),
    ] {
        let out = render_bytes(&bytes, &Transform::default(), Output::Png).unwrap();
        let image = image::load_from_memory(&out).unwrap();
        assert_eq!(image.dimensions(), (8, 4));
        assert_eq!(image.get_pixel(1, 1).to_rgba().0, left);
        assert_eq!(image.get_pixel(6, 1).to_rgba().0, right);
    }
}

/// An Adam7-interlaced 16-bit RGBA PNG of `w`×`h` pixels from `pixel`,
/// written by hand (no encoder here interlaces): its seven passes'
/// rows unfiltered, in zlib's stored blocks.
fn interlaced_rgba16(w: u32, h: u32, pixel: impl Fn(u32, u32) -> [u16; 4]) -> Vec<u8> {
    const PASSES: [(u32, u32, u32, u32); 7] = [
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    ];
    let mut raw = Vec::new();
    for (x0, y0, dx, dy) in PASSES {
        if x0 >= w || y0 >= h {
            continue;
        }
        for y in (y0..h).step_by(dy as usize) {
            raw.push(0);
            for x in (x0..w).step_by(dx as usize) {
                for v in pixel(x, y) {
                    raw.extend_from_slice(&v.to_be_bytes());
                }
            }
        }
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = u16::try_from(block.len()).unwrap();
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for byte in &raw {
        a = (a + u32::from(*byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[16, 6, 0, 0, 1]);
    png_of_chunks(&ihdr, &zlib)
}

/// The pixel budget is the source's pixels at 4 bytes each. A 16-bit PNG
/// stored row by row is read a row at a time into 8 bits, so it takes what
/// an 8-bit one takes and renders within the same count; an interlaced one
/// is decoded whole, at 8 bytes a pixel, and is over it (an attack took
/// 550 MB for a 7071×7071 16-bit PNG when every one was decoded whole).
#[test]
fn sixteen_bit_pixels_count_twice_only_when_held_whole() {
    let limits = Limits {
        max_source_pixels: 100,
        ..Limits::default()
    };
    let rgba16 = DynamicImage::ImageRgba16(image::ImageBuffer::from_fn(10, 10, |x, _| {
        image::Rgba([if x < 5 { 65_535 } else { 0 }, 32_896, 0, 65_535])
    }));
    let f = file(&encoded(&rgba16, ImageFormat::Png));
    let out = render(f.path(), &Transform::default(), Output::Png, &limits).unwrap();
    let image = image::load_from_memory(&out.0).unwrap().into_rgba8();
    assert_eq!(image.dimensions(), (10, 10));
    assert_eq!(image.get_pixel(1, 1).0, [255, 128, 0, 255]);
    assert_eq!(image.get_pixel(8, 8).0, [0, 128, 0, 255]);
    let colour = |x: u32, _| [if x < 5 { 65_535 } else { 0 }, 32_896, 0, 65_535];
    let f = file(&interlaced_rgba16(10, 10, colour));
    let e = render(f.path(), &Transform::default(), Output::Png, &limits).unwrap_err();
    assert!(matches!(e, ImageError::TooLarge { .. }), "{e:?}");
}

/// An interlaced PNG (its rows in seven passes) is decoded whole, then
/// resized: the same picture as stored row by row.
#[test]
fn an_interlaced_png_renders_as_its_picture() {
    let colour = |x: u32, y: u32| {
        let v = |n: u32| u16::try_from(n * 65_535 / 63).unwrap();
        [v(x), v(y), 0, 65_535]
    };
    let f = file(&interlaced_rgba16(64, 64, colour));
    let header = probe(f.path()).unwrap();
    assert!(matches!(
        header.layout,
        super::super::layout::Layout::Png {
            interlaced: true,
            ..
        }
    ));
    let t = Transform {
        w: Some(16),
        ..Transform::default()
    };
    let (out, _) = render(f.path(), &t, Output::Png, &Limits::default()).unwrap();
    let got = image::load_from_memory(&out).unwrap().into_rgba8();
    let plain = DynamicImage::ImageRgba16(image::ImageBuffer::from_fn(64, 64, |x, y| {
        image::Rgba(colour(x, y))
    }));
    let f = file(&encoded(&plain, ImageFormat::Png));
    let (out, _) = render(f.path(), &t, Output::Png, &Limits::default()).unwrap();
    let want = image::load_from_memory(&out).unwrap().into_rgba8();
    assert_eq!(got.dimensions(), (16, 16));
    for (g, w) in got.pixels().zip(want.pixels()) {
        for (a, b) in g.0.iter().zip(w.0) {
            assert!(a.abs_diff(b) <= 8, "{g:?} against {w:?}");
        }
    }
}
