//! Image variants on the CDN route (`?w=&h=&fit=&format=&q=`): rendering,
//! the stored variants and their lifetime, refusals, private files'
//! signatures, and the render pool. Images are made in the test with the
//! `image` crate and read back with it.

mod budget;
mod children;
mod hot;
mod lifetime;
mod pool;
mod refusals;
mod render;
mod signed;

use crate::common::TestServer;
use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};
use std::io::Cursor;

/// A `w`×`h` picture with detail in it (a gradient and a pattern), so that
/// its encodings are not trivially small.
pub fn picture(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x * 255 / w.max(1)) as u8,
            (y * 255 / h.max(1)) as u8,
            ((x ^ y) & 0xff) as u8,
        ])
    }))
}

/// `img` encoded as `format`.
pub fn encoded(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    match format {
        ImageFormat::Jpeg => DynamicImage::ImageRgb8(img.to_rgb8())
            .write_to(&mut out, format)
            .unwrap(),
        ImageFormat::Gif => DynamicImage::ImageRgba8(img.to_rgba8())
            .write_to(&mut out, format)
            .unwrap(),
        _ => img.write_to(&mut out, format).unwrap(),
    }
    out.into_inner()
}

pub fn png(w: u32, h: u32) -> Vec<u8> {
    encoded(&picture(w, h), ImageFormat::Png)
}

pub fn jpeg(w: u32, h: u32) -> Vec<u8> {
    encoded(&picture(w, h), ImageFormat::Jpeg)
}

/// A GIF of two frames: the first red, the second blue.
pub fn two_frame_gif(w: u32, h: u32) -> Vec<u8> {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame};
    let mut out = Vec::new();
    {
        let mut enc = GifEncoder::new(&mut out);
        for rgba in [[255, 0, 0, 255], [0, 0, 255, 255]] {
            let frame = Frame::from_parts(
                RgbaImage::from_pixel(w, h, image::Rgba(rgba)),
                0,
                0,
                Delay::from_numer_denom_ms(100, 1),
            );
            enc.encode_frame(frame).unwrap();
        }
    }
    out
}

/// `jpeg` with an EXIF segment (APP1) right after SOI carrying `orientation`.
pub fn with_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // count
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xff, 0xe1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// A PNG whose header claims `w`×`h` pixels, with no pixel data at all.
pub fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let crc = crc32fast::hash(&ihdr);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend_from_slice(&13u32.to_be_bytes());
    out.extend_from_slice(&ihdr);
    out.extend_from_slice(&crc.to_be_bytes());
    // An IDAT of a few compressed bytes: what a bomb sends.
    let idat = b"IDAT\x78\x9c\x03\x00\x00\x00\x00\x01";
    out.extend_from_slice(&((idat.len() - 4) as u32).to_be_bytes());
    out.extend_from_slice(idat);
    out.extend_from_slice(&crc32fast::hash(idat).to_be_bytes());
    out
}

/// The dimensions of an encoded image (AVIF read from its `ispe` box).
pub fn dimensions(bytes: &[u8]) -> (u32, u32) {
    if bytes.get(4..12) == Some(b"ftypavif") {
        let at = bytes
            .windows(4)
            .position(|w| w == b"ispe")
            .expect("an AVIF has an ispe box");
        let n = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
        return (n(at + 8), n(at + 12));
    }
    let img = image::load_from_memory(bytes).expect("the variant decodes");
    (img.width(), img.height())
}

/// GET `url` with an `Accept` header (or none): status, headers, body.
pub async fn get(
    srv: &TestServer,
    url: &str,
    accept: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = srv.http.get(url);
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.bytes().await.unwrap().to_vec())
}

/// `url` with `query` appended.
pub fn with(url: &str, query: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{query}")
}
