//! `[images]`: image variants on the CDN (docs/api.md, "Image variants").

use serde::Deserialize;

/// `[images]` as the file has it.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ImagesSection {
    /// Whether `?w=&h=&fit=&format=&q=` on a CDN URL renders a variant.
    pub enabled: Option<bool>,
    /// The most pixels a source may have (read from its header).
    pub max_source_pixels: Option<u64>,
    /// The most distinct variants one file may have.
    pub variants_per_file: Option<u32>,
    /// Renders at once (default: the cores).
    pub concurrency: Option<usize>,
    /// The bytes all renders at once may take, each its estimate from the
    /// source's header (default 512 MiB).
    #[serde(default, deserialize_with = "super::plans::opt_bytes")]
    pub memory: Option<u64>,
}

/// The image settings the server runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Images {
    pub enabled: bool,
    pub max_source_pixels: u64,
    pub variants_per_file: u32,
    pub concurrency: usize,
    pub memory: u64,
}

/// `images.max_source_pixels`: 50 megapixels (a 12 MP phone photo passes, a
/// panorama of 100 MP does not).
pub(crate) const DEFAULT_MAX_SOURCE_PIXELS: u64 = 50_000_000;
/// `images.memory`: what renders take at once (a 12 MP photo's thumbnail
/// takes about 60 MiB, a 50 MP PNG's about 450).
pub(crate) const DEFAULT_IMAGES_MEMORY: u64 = 512 << 20;

/// The least `images.memory` may be: what any render takes beyond its
/// pixels, and a small variant's pixels.
pub(crate) const MIN_MEMORY: u64 = 16 << 20;
/// `images.variants_per_file`.
pub(crate) const DEFAULT_VARIANTS_PER_FILE: u32 = 16;

impl ImagesSection {
    pub(crate) fn resolve(&self) -> Result<Images, String> {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let images = Images {
            enabled: self.enabled.unwrap_or(true),
            max_source_pixels: self.max_source_pixels.unwrap_or(DEFAULT_MAX_SOURCE_PIXELS),
            variants_per_file: self.variants_per_file.unwrap_or(DEFAULT_VARIANTS_PER_FILE),
            concurrency: self.concurrency.unwrap_or(cores),
            memory: self.memory.unwrap_or(DEFAULT_IMAGES_MEMORY),
        };
        if images.memory < MIN_MEMORY {
            return Err(format!(
                "images.memory must be at least {} MiB (what any render takes)",
                MIN_MEMORY >> 20
            ));
        }
        if images.max_source_pixels == 0 {
            return Err("images.max_source_pixels must be at least 1".into());
        }
        if images.variants_per_file == 0 {
            return Err(
                "images.variants_per_file must be at least 1 (images.enabled = false turns variants off)"
                    .into(),
            );
        }
        if !(1..=256).contains(&images.concurrency) {
            return Err("images.concurrency must be from 1 to 256".into());
        }
        Ok(images)
    }
}
