use super::answer::*;
use super::child::webp_answer;
use super::*;
use std::os::unix::fs::PermissionsExt;

/// A decoder that is a shell script.
fn script(dir: &Path, body: &str) -> std::path::PathBuf {
    let path = dir.join("decoder");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn refused(answer: Option<Answer>) -> Option<ImageError> {
    match answer {
        Some(Answer::Refused(e)) => Some(e),
        _ => None,
    }
}

/// A decoder that aborts, or never answers, is a refused image, in
/// bounded time; one that answers is read.
#[test]
fn a_decoder_that_dies_or_hangs_is_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("x.avif");
    std::fs::write(&source, b"anything").unwrap();
    let aborts = script(dir.path(), "kill -ABRT $$");
    let webp = Child::Webp {
        shrink: 2,
        pixels: 100,
    };
    let e = run(&aborts, webp, &source, 100, TIMEOUT).err().unwrap();
    assert!(
        matches!(e, ImageError::Corrupt(ref m) if m.contains("WebP decoder failed")),
        "{e:?}"
    );
    // Killed by its filter: the server's failure, not the file's.
    let filtered = script(dir.path(), "kill -SYS $$");
    let e = run(&filtered, webp, &source, 100, TIMEOUT).err().unwrap();
    assert!(
        matches!(e, ImageError::Encode(ref m) if m.contains("stopped")),
        "{e:?}"
    );
    let hangs = script(dir.path(), "exec sleep 30");
    let started = std::time::Instant::now();
    let e = run(
        &hangs,
        Child::Avif,
        &source,
        100,
        Duration::from_millis(300),
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, ImageError::Corrupt(ref m) if m.contains("took more")),
        "{e:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let answers = script(
        dir.path(),
        "printf 'NO\\002\\001\\0\\0\\0\\001\\0\\0\\0big'",
    );
    let e = refused(run(&answers, Child::Avif, &source, 100, TIMEOUT).ok());
    assert!(
        matches!(
            e,
            Some(ImageError::TooLarge {
                width: 1,
                height: 1,
                max: 100
            })
        ),
        "{e:?}"
    );
    // The child's arguments: which decoder, the cap, the shrink.
    let echoes = script(
        dir.path(),
        "printf 'NO\\003\\0\\0\\0\\0\\0\\0\\0\\0%s' \"$*\"",
    );
    match run(&echoes, webp, &source, 100, TIMEOUT) {
        Ok(Answer::Left(args)) => assert_eq!(args, format!("{WEBP_CHILD_ARG} 100 2")),
        _ => panic!("no answer"),
    }
}

#[test]
fn answers_are_read_back_and_broken_ones_are_none() {
    let pixels = Answer::Pixels(Decoded {
        width: 2,
        height: 1,
        has_alpha: false,
        orientation: 6,
        crop: Some([0, 0, 1, 1]),
        pixels: vec![1, 2, 3, 4, 5, 6],
    });
    let ok = encode(pixels);
    let Some(Answer::Pixels(d)) = parse(ok.clone(), 100, 100) else {
        panic!("not read back");
    };
    assert_eq!((d.width, d.height, d.orientation), (2, 1, 6));
    assert_eq!(d.crop, Some([0, 0, 1, 1]));
    assert_eq!(d.pixels, [1, 2, 3, 4, 5, 6]);
    // A pixel short: the child died while writing.
    assert!(parse(ok[..ok.len() - 1].to_vec(), 100, 100).is_none());
    assert!(parse(Vec::new(), 100, 100).is_none());
    let large = ImageError::TooLarge {
        width: 30_000,
        height: 30_000,
        max: 7,
    };
    assert!(matches!(
        refused(parse(encode(Answer::Refused(large)), 100, 100)),
        Some(ImageError::TooLarge {
            width: 30_000,
            height: 30_000,
            max: 100
        })
    ));
    assert!(matches!(
        refused(parse(
            encode(Answer::Refused(ImageError::NotAnImage)),
            100,
            100
        )),
        Some(ImageError::NotAnImage)
    ));
    let corrupt = Answer::Refused(ImageError::Corrupt("bad box".into()));
    assert!(matches!(
        refused(parse(encode(corrupt), 100, 100)),
        Some(ImageError::Corrupt(m)) if m == "bad box"
    ));
    // More pixels than the server expects: not an answer.
    assert!(parse(ok.clone(), 100, 1).is_none());
    // A child writing on past its pixels: no more is read than they
    // take; a header over the cap is read alone; a refusal's message
    // is cut.
    let endless: Vec<u8> = ok.iter().copied().chain(vec![9u8; 1 << 16]).collect();
    assert_eq!(read_answer(&mut endless.as_slice(), 100).unwrap(), ok);
    assert_eq!(read_answer(&mut endless.as_slice(), 1).unwrap().len(), 28);
    let long = encode(Answer::Left("x".repeat(1 << 16)));
    assert_eq!(
        read_answer(&mut long.as_slice(), 100).unwrap().len() as u64,
        28 + MESSAGE_BYTES
    );
    let left = parse(encode(Answer::Left("an animation".into())), 100, 100);
    assert!(matches!(left, Some(Answer::Left(m)) if m == "an animation"));
}

/// The real child: this test's own binary cannot be one, so the
/// integration tests' server (which runs `filestore`) covers it; here
/// the answers libwebp gives, shrunk and refused.
#[test]
fn libwebp_answers_shrunk_pixels_and_refusals() {
    let px: Vec<u8> = (0..40 * 30 * 3)
        .map(|i| u8::try_from(i % 251).unwrap())
        .collect();
    let file = webp::Encoder::from_rgb(&px, 40, 30).encode(90.0).to_vec();
    let Answer::Pixels(d) = webp_answer(&file, 1200, 4) else {
        panic!("not decoded");
    };
    assert_eq!(
        (d.width, d.height, d.has_alpha, d.pixels.len()),
        (10, 8, false, 240)
    );
    let Answer::Refused(e) = webp_answer(&file, 1199, 4) else {
        panic!("not refused");
    };
    assert!(matches!(
        e,
        ImageError::TooLarge {
            width: 40,
            height: 30,
            max: 1199
        }
    ));
    assert!(matches!(
        webp_answer(b"RIFF", 1200, 1),
        Answer::Refused(ImageError::NotAnImage)
    ));
}
