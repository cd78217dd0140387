//! rclone (provider `Other`) through the door: `copy`, `lsf`, `check`
//! (sizes and MD5s: the ETags), `sync`, `delete`, and a copy back.

use super::harness::{bytes, tools, Door};

fn lines(out: &str) -> Vec<String> {
    let mut v: Vec<String> = out.lines().map(String::from).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rclone_copy_lsf_check_sync_delete() {
    if !tools(
        "rclone_copy_lsf_check_sync_delete",
        &[&["rclone", "version"]],
    ) {
        return;
    }
    let door = Door::start("rclone_copy_lsf_check_sync_delete").await;
    door.bucket("photos");
    let mut names = Vec::new();
    for i in 0..10u64 {
        let rel = format!(
            "{}/p{i}.{}",
            ["a", "b/c"][i as usize % 2],
            ["jpg", "txt"][i as usize % 3 % 2]
        );
        door.write(
            &format!("src/{rel}"),
            &bytes(10 + i, 500 + i as usize * 1_001),
        );
        names.push(rel);
    }
    names.sort();
    let src = door.path("src");
    let src = src.to_str().unwrap();
    door.rclone(&["copy", src, "door:photos/set"]).ok();
    let lsf = door.rclone(&["lsf", "-R", "--files-only", "door:photos/set"]);
    assert_eq!(lines(&lsf.ok().stdout), names, "{lsf:#?}");
    let check = door.rclone(&["check", src, "door:photos/set"]);
    check.ok();
    assert!(check.stderr.contains("0 differences found"), "{check:#?}");
    assert!(
        !check.stderr.contains("hashes could not be checked"),
        "MD5s compared (ETags are MD5s): {check:#?}"
    );

    std::fs::remove_file(door.path(&format!("src/{}", names[0]))).unwrap();
    door.write("src/new/n.txt", b"new file");
    door.write(&format!("src/{}", names[1]), b"rewritten");
    door.rclone(&["sync", src, "door:photos/set"]).ok();
    let mut expected: Vec<String> = names[1..].to_vec();
    expected.push("new/n.txt".into());
    expected.sort();
    let lsf = door.rclone(&["lsf", "-R", "--files-only", "door:photos/set"]);
    assert_eq!(lines(&lsf.ok().stdout), expected, "after sync: {lsf:#?}");
    door.rclone(&["check", src, "door:photos/set"]).ok();

    door.rclone(&[
        "copy",
        "door:photos/set",
        door.path("back").to_str().unwrap(),
    ])
    .ok();
    for rel in &expected {
        assert!(
            std::fs::read(door.path("src").join(rel)).unwrap()
                == std::fs::read(door.path("back").join(rel)).unwrap(),
            "{rel} back byte-exact"
        );
    }

    door.rclone(&["delete", "door:photos/set", "--include", "*.txt"])
        .ok();
    let lsf = door.rclone(&["lsf", "-R", "--files-only", "door:photos/set"]);
    let left: Vec<String> = expected
        .into_iter()
        .filter(|n| {
            std::path::Path::new(n)
                .extension()
                .is_none_or(|e| e != "txt")
        })
        .collect();
    assert_eq!(
        lines(&lsf.ok().stdout),
        left,
        "after delete --include *.txt: {lsf:#?}"
    );
}
