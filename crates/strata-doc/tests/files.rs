//! Project files through symbolic links: confined to their directory, each directory walked
//! once.

use std::os::unix::fs::symlink;
use std::path::Path;

use strata_core::ErrorKind;
use strata_doc::{confine, walk};

fn touch(root: &Path, rel: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "x: 1\n").unwrap();
}

#[test]
fn a_walk_visits_each_directory_once_and_never_leaves() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tools");
    touch(&dir, "a/x.yaml");
    touch(&dir, "b.yml");
    touch(&dir, "c.txt");
    touch(&dir, ".hidden/h.yaml");
    touch(d.path(), "outside/o.yaml");
    // Twenty levels of two loops each would be a million paths.
    symlink("..", dir.join("up")).unwrap();
    symlink(".", dir.join("a/self")).unwrap();
    symlink("a", dir.join("alias")).unwrap();
    symlink("../outside", dir.join("out")).unwrap();
    symlink("../outside/o.yaml", dir.join("file_out.yaml")).unwrap();
    let found: Vec<String> = walk(&dir, &["yaml", "yml"])
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    assert_eq!(found, ["a/x.yaml", "b.yml", "file_out.yaml"]);
}

#[test]
fn a_link_leading_out_is_forbidden_and_one_inside_is_resolved() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("tools");
    touch(&dir, "real.yaml");
    touch(d.path(), "secret.yaml");
    symlink("real.yaml", dir.join("in.yaml")).unwrap();
    symlink("../secret.yaml", dir.join("out.yaml")).unwrap();
    let real = confine(&dir.join("in.yaml"), &dir, "tools/in.yaml", "`tools/`").unwrap();
    assert_eq!(real, dir.join("real.yaml").canonicalize().unwrap());
    let e = confine(&dir.join("out.yaml"), &dir, "tools/out.yaml", "`tools/`").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden);
    let target = d.path().join("secret.yaml").canonicalize().unwrap();
    assert_eq!(
        e.message(),
        format!(
            "`tools/out.yaml` leads outside `tools/` (to `{}`)",
            target.display()
        )
    );
}

#[test]
fn confining_under_a_resolved_directory_follows_links_below_it_and_only_those() {
    let d = tempfile::tempdir().unwrap();
    // The directory is reached through a link: paths below it are given through the link.
    touch(d.path(), "real/tools/sub/plain.yaml");
    touch(d.path(), "secret.yaml");
    symlink("real", d.path().join("via")).unwrap();
    let dir = d.path().join("via/tools");
    let real_dir = dir.canonicalize().unwrap();
    symlink(
        "../../../secret.yaml",
        d.path().join("real/tools/sub/out.yaml"),
    )
    .unwrap();
    symlink("plain.yaml", d.path().join("real/tools/sub/in.yaml")).unwrap();
    let plain = strata_doc::confine_in(&dir.join("sub/plain.yaml"), &dir, &real_dir, "p", "d");
    assert_eq!(plain.unwrap(), real_dir.join("sub/plain.yaml"));
    let inside = strata_doc::confine_in(&dir.join("sub/in.yaml"), &dir, &real_dir, "i", "d");
    assert_eq!(inside.unwrap(), real_dir.join("sub/plain.yaml"));
    let out = strata_doc::confine_in(&dir.join("sub/out.yaml"), &dir, &real_dir, "o", "`tools/`");
    let e = out.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden);
    let target = d.path().join("secret.yaml").canonicalize().unwrap();
    assert_eq!(
        e.message(),
        format!("`o` leads outside `tools/` (to `{}`)", target.display())
    );
    let up = strata_doc::confine_in(
        &dir.join("sub/../../../secret.yaml"),
        &dir,
        &real_dir,
        "u",
        "d",
    );
    assert_eq!(up.unwrap_err().kind(), ErrorKind::Forbidden);
}
