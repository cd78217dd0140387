//! Times `dimensions` and `decode` on a large AVIF:
//!
//! ```text
//! cargo run --release -p filestore-avif --example decode_time [FILE.avif]
//! ```
//!
//! Without a file (or when FILE does not exist yet), it first encodes a
//! 4000x3000 (12-megapixel) photo-like image with ravif at speed 10 and,
//! given FILE, saves it there for the next runs. On Linux it then reports
//! the peak resident memory per pixel (the crate documentation's "Limits"):
//! run it on an existing FILE, or the encoder's peak counts too.
#![allow(
    clippy::print_stdout, // an example reports on stdout
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)]

use std::time::{Duration, Instant};

use ravif::{BitDepth, Encoder, Img, RGB8};

fn encode_12_megapixels() -> Vec<u8> {
    let (width, height) = (4000usize, 3000usize);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let pixels: Vec<RGB8> = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let noise = (seed % 24) as usize;
            let wave = ((x as f32 / 97.0).sin() * (y as f32 / 61.0).cos() * 60.0) as i32;
            let r = (x * 200 / width + noise) as i32 + wave;
            let g = (y * 180 / height + noise) as i32 - wave / 2;
            let b = ((x + y) * 120 / (width + height) + 60 + noise) as i32;
            RGB8::new(
                r.clamp(0, 255) as u8,
                g.clamp(0, 255) as u8,
                b.clamp(0, 255) as u8,
            )
        })
        .collect();
    let started = Instant::now();
    let file = Encoder::new()
        .with_quality(80.0)
        .with_speed(10)
        .with_bit_depth(BitDepth::Eight)
        .encode_rgb(Img::new(&pixels[..], width, height))
        .expect("ravif encodes")
        .avif_file;
    println!(
        "encoded {width}x{height} in {:.1} s: {} bytes",
        started.elapsed().as_secs_f64(),
        file.len()
    );
    file
}

/// Linux only: the high-water mark of resident memory after one decode
/// (later ones add the allocator's fragmentation), less the file.
fn report_peak_memory(file_len: usize, width: u32, height: u32) {
    let peak_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
    if let Some(kib) = peak_kib {
        let bytes = (kib * 1024).saturating_sub(file_len as u64);
        println!(
            "peak resident memory of a decode (without the file): {} MiB, {:.1} bytes a pixel",
            bytes >> 20,
            bytes as f64 / (f64::from(width) * f64::from(height))
        );
    }
}

fn main() {
    let path = std::env::args().nth(1);
    let file = if let Some(Ok(file)) = path.as_deref().map(std::fs::read) {
        file
    } else {
        let file = encode_12_megapixels();
        if let Some(path) = &path {
            std::fs::write(path, &file).expect("write the AVIF");
        }
        file
    };
    let started = Instant::now();
    let (width, height) = filestore_avif::dimensions(&file).expect("dimensions");
    println!("dimensions {width}x{height} in {:?}", started.elapsed());

    let mut times: Vec<Duration> = Vec::new();
    for run in 0..5 {
        let started = Instant::now();
        let image = filestore_avif::decode(&file, 50_000_000).expect("decode");
        times.push(started.elapsed());
        assert_eq!((image.width, image.height), (width, height));
        if run == 0 {
            report_peak_memory(file.len(), width, height);
        }
    }
    times.sort();
    println!(
        "decode {width}x{height} ({:.1} MP): min {:.0} ms, median {:.0} ms (5 runs)",
        f64::from(width) * f64::from(height) / 1e6,
        times[0].as_secs_f64() * 1e3,
        times[2].as_secs_f64() * 1e3
    );
}
