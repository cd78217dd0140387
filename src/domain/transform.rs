//! Image variant parameters (`?w=&h=&fit=&format=&q=` on a CDN URL, and the
//! `transform` of a signed-URL request): their ranges, defaults and one
//! canonical text, which keys a stored variant and which a signature covers.

use std::fmt;

/// The largest width or height a variant may ask for.
pub const MAX_SIDE: u32 = 4096;
/// The quality when none is given.
pub const DEFAULT_QUALITY: u8 = 80;
/// The query keys that ask for a variant; any other key is not ours.
pub const KEYS: [&str; 5] = ["w", "h", "fit", "format", "q"];

/// How the image is fitted into `w`×`h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fit {
    /// Fills the box, aspect kept, the overflow cropped (centred).
    Cover,
    /// Within the box, aspect kept, letterboxed to exactly the box.
    Contain,
    /// Within the box, aspect kept, never enlarged (the default).
    #[default]
    Inside,
    /// Exactly the box, aspect not kept.
    Fill,
}

/// The format asked for; `Auto` is settled by the request's `Accept`
/// ([`Format::resolve`]) before anything is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// AVIF or WebP when `Accept` allows, else the source's format.
    Auto,
    Webp,
    Avif,
    Jpeg,
    Png,
    /// No format asked for: the source's format (PNG for a GIF).
    #[default]
    Source,
}

/// An image's own format, as read from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    Jpeg,
    Png,
    Webp,
    Gif,
    Avif,
}

/// A format a variant is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Output {
    Webp,
    Avif,
    Jpeg,
    Png,
}

impl Output {
    pub fn name(self) -> &'static str {
        match self {
            Output::Webp => "webp",
            Output::Avif => "avif",
            Output::Jpeg => "jpeg",
            Output::Png => "png",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Output::Webp => "image/webp",
            Output::Avif => "image/avif",
            Output::Jpeg => "image/jpeg",
            Output::Png => "image/png",
        }
    }
}

impl Fit {
    pub fn name(self) -> &'static str {
        match self {
            Fit::Cover => "cover",
            Fit::Contain => "contain",
            Fit::Inside => "inside",
            Fit::Fill => "fill",
        }
    }

    fn parse(s: &str) -> Option<Fit> {
        Some(match s {
            "cover" => Fit::Cover,
            "contain" => Fit::Contain,
            "inside" => Fit::Inside,
            "fill" => Fit::Fill,
            _ => return None,
        })
    }
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Webp => "webp",
            Format::Avif => "avif",
            Format::Jpeg => "jpeg",
            Format::Png => "png",
            Format::Source => "",
        }
    }

    fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "auto" => Format::Auto,
            "webp" => Format::Webp,
            "avif" => Format::Avif,
            "jpeg" | "jpg" => Format::Jpeg,
            "png" => Format::Png,
            _ => return None,
        })
    }

    /// The output for a source of `source` format asked with `accept` (the
    /// request's `Accept` header, if any): `Auto` takes AVIF, then WebP, when
    /// `Accept` names them (not with `q=0`), else the source's own format.
    pub fn resolve(self, source: SourceFormat, accept: Option<&str>) -> Output {
        let own = match source {
            SourceFormat::Jpeg => Output::Jpeg,
            SourceFormat::Png | SourceFormat::Gif => Output::Png,
            SourceFormat::Webp => Output::Webp,
            SourceFormat::Avif => Output::Avif,
        };
        match self {
            Format::Webp => Output::Webp,
            Format::Avif => Output::Avif,
            Format::Jpeg => Output::Jpeg,
            Format::Png => Output::Png,
            Format::Source => own,
            Format::Auto => {
                let accept = accept.unwrap_or("");
                if accepts(accept, "image/avif") {
                    Output::Avif
                } else if accepts(accept, "image/webp") {
                    Output::Webp
                } else {
                    own
                }
            }
        }
    }
}

/// Whether an `Accept` value lists `media` with a quality above zero
/// (`image/*` and `*/*` do not count: browsers send them for every image).
fn accepts(accept: &str, media: &str) -> bool {
    accept.split(',').any(|item| {
        let mut parts = item.split(';');
        let kind = parts.next().unwrap_or("").trim();
        if !kind.eq_ignore_ascii_case(media) {
            return false;
        }
        !parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=")
                .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
        })
    })
}

/// A variant asked for: each parameter checked, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transform {
    pub w: Option<u32>,
    pub h: Option<u32>,
    pub fit: Fit,
    pub format: Format,
    pub q: u8,
}

impl Default for Transform {
    fn default() -> Transform {
        Transform {
            w: None,
            h: None,
            fit: Fit::default(),
            format: Format::default(),
            q: DEFAULT_QUALITY,
        }
    }
}

/// Why parameters were refused; its text is the 400's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Transform {
    /// The variant a query string asks for: None when it names none of
    /// [`KEYS`] (other keys, such as a signature's, are left alone). A key
    /// given twice, an empty value or one out of range is refused.
    pub fn from_query(query: &str) -> Result<Option<Transform>, Refused> {
        let mut seen = [false; KEYS.len()];
        let mut t = Transform::default();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let Some(i) = KEYS.iter().position(|k| *k == key) else {
                continue;
            };
            if std::mem::replace(&mut seen[i], true) {
                return Err(Refused(format!("{key} is given more than once")));
            }
            t.set(&key, &value)?;
        }
        Ok(seen.iter().any(|s| *s).then_some(t))
    }

    /// The `transform` object of a signed-URL request: `w`, `h` and `q`
    /// whole numbers, `fit` and `format` strings, each optional, no other
    /// key; ranges as in a query.
    pub fn from_json(value: &serde_json::Value) -> Result<Transform, Refused> {
        let serde_json::Value::Object(map) = value else {
            return Err(Refused(
                "transform must be an object of w, h, fit, format and q".into(),
            ));
        };
        let mut t = Transform::default();
        for (key, v) in map {
            let whole = super::validate::json_integer(v);
            let text = match (key.as_str(), v) {
                // JSON Schema's integers include 64.0.
                ("w" | "h" | "q", serde_json::Value::Number(_)) if whole.is_some() => {
                    whole.unwrap_or_default().to_string()
                }
                ("fit" | "format", serde_json::Value::String(s)) => s.clone(),
                ("w" | "h" | "q" | "fit" | "format", serde_json::Value::Null) => continue,
                ("w" | "h" | "q", _) => {
                    return Err(Refused(format!(
                        "transform.{key} must be a whole number, not {v}"
                    )))
                }
                ("fit" | "format", _) => {
                    return Err(Refused(format!(
                        "transform.{key} must be a string, not {v}"
                    )))
                }
                _ => {
                    return Err(Refused(format!(
                        "transform has no {key:?}: it takes w, h, fit, format and q"
                    )))
                }
            };
            t.set(key, &text)
                .map_err(|e| Refused(format!("transform.{e}")))?;
        }
        Ok(t)
    }

    /// Sets one parameter from its text, as the query carries it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), Refused> {
        match key {
            "w" => self.w = Some(side("w", value)?),
            "h" => self.h = Some(side("h", value)?),
            "fit" => {
                self.fit = Fit::parse(value).ok_or_else(|| {
                    Refused(format!(
                        "fit must be one of cover, contain, inside, fill, not {value:?}"
                    ))
                })?;
            }
            "format" => {
                self.format = Format::parse(value).ok_or_else(|| {
                    Refused(format!(
                        "format must be one of auto, webp, avif, jpeg, png, not {value:?}"
                    ))
                })?;
            }
            "q" => {
                self.q = digits(value)
                    .filter(|q| (1..=100).contains(q))
                    .and_then(|q| u8::try_from(q).ok())
                    .ok_or_else(|| {
                        Refused(format!(
                            "q must be a whole number from 1 to 100, not {value:?}"
                        ))
                    })?;
            }
            _ => return Err(Refused(format!("unknown image parameter {key:?}"))),
        }
        Ok(())
    }

    /// The canonical text of these parameters (every key, in [`KEYS`]'s
    /// order, defaults written out): what a signature covers.
    pub fn canonical(&self) -> String {
        let side = |s: Option<u32>| s.map(|n| n.to_string()).unwrap_or_default();
        format!(
            "w={}&h={}&fit={}&format={}&q={}",
            side(self.w),
            side(self.h),
            self.fit.name(),
            self.format.name(),
            self.q
        )
    }

    /// The query string a URL carries for these parameters: only those that
    /// differ from the defaults (parsing it gives these parameters back).
    pub fn query(&self) -> String {
        let mut parts = Vec::new();
        if let Some(w) = self.w {
            parts.push(format!("w={w}"));
        }
        if let Some(h) = self.h {
            parts.push(format!("h={h}"));
        }
        if self.fit != Fit::default() {
            parts.push(format!("fit={}", self.fit.name()));
        }
        if self.format != Format::default() {
            parts.push(format!("format={}", self.format.name()));
        }
        if self.q != DEFAULT_QUALITY || parts.is_empty() {
            parts.push(format!("q={}", self.q));
        }
        parts.join("&")
    }

    /// The text that keys a stored variant of one file: the parameters with
    /// the output settled (two requests that render the same bytes share it).
    pub fn variant_key(&self, output: Output) -> String {
        let side = |s: Option<u32>| s.map(|n| n.to_string()).unwrap_or_default();
        // PNG is lossless: `q` changes no byte of it, so it makes no other
        // variant (each would take one of the file's places and its disk).
        // Keyed at the default, the key a PNG variant had before.
        let q = match output {
            Output::Png => DEFAULT_QUALITY,
            _ => self.q,
        };
        format!(
            "{}x{}-{}-q{q}.{}",
            side(self.w),
            side(self.h),
            self.fit.name(),
            output.name()
        )
    }
}

/// A width or height: a whole number from 1 to [`MAX_SIDE`].
fn side(key: &str, value: &str) -> Result<u32, Refused> {
    digits(value)
        .filter(|n| (1..=u64::from(MAX_SIDE)).contains(n))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            Refused(format!(
                "{key} must be a whole number from 1 to {MAX_SIDE}, not {value:?}"
            ))
        })
}

/// Plain ASCII digits (no sign, no space), at most 9 of them.
fn digits(value: &str) -> Option<u64> {
    (!value.is_empty() && value.len() <= 9 && value.bytes().all(|b| b.is_ascii_digit()))
        .then(|| value.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> Result<Option<Transform>, Refused> {
        Transform::from_query(q)
    }

    #[test]
    fn no_image_key_is_no_variant() {
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse("expires=1&signature=ab&v=3"), Ok(None));
    }

    #[test]
    fn defaults_and_values() {
        let t = parse("w=256").unwrap().unwrap();
        assert_eq!(
            t,
            Transform {
                w: Some(256),
                ..Transform::default()
            }
        );
        assert_eq!(t.canonical(), "w=256&h=&fit=inside&format=&q=80");
        let t = parse("h=10&fit=cover&format=auto&q=55&expires=9")
            .unwrap()
            .unwrap();
        assert_eq!(
            (t.w, t.h, t.fit, t.format, t.q),
            (None, Some(10), Fit::Cover, Format::Auto, 55)
        );
        assert_eq!(parse("format=jpg").unwrap().unwrap().format, Format::Jpeg);
        assert_eq!(parse("w=4096&h=1").unwrap().unwrap().w, Some(4096));
    }

    #[test]
    fn refusals_name_the_parameter() {
        for (q, key) in [
            ("w=0", "w"),
            ("w=4097", "w"),
            ("w=", "w"),
            ("w=-1", "w"),
            ("w=+5", "w"),
            ("w=1.5", "w"),
            ("w=99999999999999", "w"),
            ("h=abc", "h"),
            ("fit=stretch", "fit"),
            ("format=gif", "format"),
            ("q=0", "q"),
            ("q=101", "q"),
            ("w=1&w=2", "w"),
        ] {
            let e = parse(q).unwrap_err();
            assert!(e.0.starts_with(key), "{q}: {e}");
        }
    }

    #[test]
    fn query_round_trips() {
        for q in ["w=1", "h=7&fit=fill", "format=auto&q=3", "q=80", "w=5&h=6"] {
            let t = parse(q).unwrap().unwrap();
            assert_eq!(parse(&t.query()).unwrap().unwrap(), t, "{q}");
        }
    }

    #[test]
    fn auto_follows_accept() {
        let a = Format::Auto;
        let chrome = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8";
        assert_eq!(a.resolve(SourceFormat::Jpeg, Some(chrome)), Output::Avif);
        let webp_only = "image/webp,*/*";
        assert_eq!(a.resolve(SourceFormat::Jpeg, Some(webp_only)), Output::Webp);
        assert_eq!(
            a.resolve(SourceFormat::Jpeg, Some("image/avif;q=0, image/webp")),
            Output::Webp
        );
        assert_eq!(a.resolve(SourceFormat::Png, Some("*/*")), Output::Png);
        assert_eq!(a.resolve(SourceFormat::Gif, None), Output::Png);
        assert_eq!(
            Format::Source.resolve(SourceFormat::Webp, Some(chrome)),
            Output::Webp
        );
        assert_eq!(
            Format::Jpeg.resolve(SourceFormat::Png, Some(chrome)),
            Output::Jpeg
        );
    }

    #[test]
    fn json_transforms() {
        let t =
            Transform::from_json(&serde_json::json!({"w": 64, "fit": "cover", "h": null})).unwrap();
        assert_eq!((t.w, t.h, t.fit), (Some(64), None, Fit::Cover));
        for bad in [
            serde_json::json!({"w": "64"}),
            serde_json::json!({"w": 0}),
            serde_json::json!({"w": 1.5}),
            serde_json::json!({"q": -3}),
            serde_json::json!({"fit": 3}),
            serde_json::json!({"width": 3}),
            serde_json::json!([1]),
        ] {
            let e = Transform::from_json(&bad).unwrap_err();
            assert!(e.0.starts_with("transform"), "{bad}: {e}");
        }
    }

    #[test]
    fn variant_keys_differ_by_output() {
        let t = parse("w=9&format=auto").unwrap().unwrap();
        assert_ne!(t.variant_key(Output::Avif), t.variant_key(Output::Webp));
        assert_eq!(t.variant_key(Output::Webp), "9x-inside-q80.webp");
    }

    #[test]
    fn quality_makes_no_other_png() {
        let a = parse("w=9&q=10&format=png").unwrap().unwrap();
        let b = parse("w=9&q=90&format=png").unwrap().unwrap();
        assert_eq!(a.variant_key(Output::Png), "9x-inside-q80.png");
        assert_eq!(a.variant_key(Output::Png), b.variant_key(Output::Png));
        assert_ne!(a.variant_key(Output::Jpeg), b.variant_key(Output::Jpeg));
    }
}
