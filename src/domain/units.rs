//! Sizes as people read them, in decimal units as the plans are written
//! (`512 B`, `1.50 MB`): one formatter for the server's messages (the limits
//! of a 413) and the command line (`usage`, progress, summaries).

/// `n` bytes in decimal units: `512 B`, `1.00 kB`, `10.00 MB`, `1.50 GB`.
pub(crate) fn human_bytes(n: u64) -> String {
    const PREFIXES: [&str; 6] = ["k", "M", "G", "T", "P", "E"];
    if n < 1000 {
        return format!("{n} B");
    }
    // A display figure to two decimals: precision beyond 2^53 bytes is not shown.
    #[allow(clippy::cast_precision_loss)]
    let mut value = n as f64;
    let mut prefix = "";
    for p in PREFIXES {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        prefix = p;
    }
    format!("{value:.2} {prefix}B")
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn decimal_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1000), "1.00 kB");
        assert_eq!(human_bytes(800_002), "800.00 kB");
        assert_eq!(human_bytes(1_000_000), "1.00 MB");
        assert_eq!(human_bytes(10_000_000), "10.00 MB");
        assert_eq!(human_bytes(1_500_000_000), "1.50 GB");
        assert_eq!(human_bytes(u64::MAX), "18.45 EB");
    }
}
