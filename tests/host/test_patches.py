"""The patch series as a reviewer receives it: every patch in `series`
exists, comes from the project with no Signed-off-by (left to the
submitter), has a subject in the kernel's form, and
scripts/checkpatch.pl --strict has nothing to say about it."""

import re
import subprocess

import pytest

from harness.paths import BUILD, TOP

PATCH_DIR = TOP / "kernel-patch"
SERIES = [line.split("#")[0].strip()
          for line in (PATCH_DIR / "series").read_text().splitlines()]
SERIES = [p for p in SERIES if p]


def kernel_version(tree):
    """"6.12" for a tree whose top Makefile says VERSION = 6, PATCHLEVEL = 12."""
    head = (tree / "Makefile").read_text()[:500] if (tree / "Makefile").exists() else ""
    m = re.search(r"^VERSION = (\d+)\nPATCHLEVEL = (\d+)$", head, re.M)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def checkpatch():
    # the series' base is 6.12: a newer tree's checkpatch (stock-7.3's)
    # has rules of its own for code of its own
    for tree in sorted((BUILD / "src").glob("*-vm-*")):
        script = tree / "scripts" / "checkpatch.pl"
        if script.exists() and kernel_version(tree) == "6.12":
            return tree, script
    pytest.skip("no 6.12 kernel tree with scripts/checkpatch.pl (make kernel)")


def test_cover_letter_names_every_patch():
    cover = (PATCH_DIR / "0000-cover-letter.patch").read_text()
    assert "*** SUBJECT HERE ***" not in cover and "*** BLURB HERE ***" not in cover
    assert re.search(r"^base-commit: [0-9a-f]{40}$", cover, re.M)
    assert "DCO" in cover and "Signed-off-by" in cover
    for p in SERIES:
        subject = re.search(r"^Subject: \[PATCH(?: v\d+)? \d+/\d+\] (.*)$",
                            (PATCH_DIR / p).read_text(), re.M).group(1)
        assert subject.split(":")[0] in cover


@pytest.mark.parametrize("patch", SERIES)
def test_patch_form(patch):
    text = (PATCH_DIR / patch).read_text()
    subject = re.search(r"^Subject: \[PATCH(?: v\d+)? \d+/\d+\] (.*)$", text, re.M)
    assert subject, "no numbered subject"
    assert len(subject.group(1)) <= 75
    assert re.match(r"^(coredump|cgroup|writeback|selftests/coredump|Documentation)[:/ ]",
                    subject.group(1)), subject.group(1)
    # the submitter adds their own sign-off: the project's collective name
    # is not one the DCO accepts (the cover letter says so)
    assert not re.search(r"^Signed-off-by:", text, re.M), "a Signed-off-by line"
    assert re.search(r"^From: coredam developers <.+@.+>$", text, re.M)


@pytest.mark.parametrize("patch", SERIES)
def test_checkpatch_strict_clean(patch):
    tree, script = checkpatch()
    # FILE_PATH_CHANGES asks of every new file whether MAINTAINERS needs
    # updating, whether a pattern covers it or not: the test below answers
    p = subprocess.run([str(script), "--strict", "--no-signoff", "--no-summary", "--terse",
                        "--ignore", "FILE_PATH_CHANGES", str(PATCH_DIR / patch)],
                       cwd=tree, capture_output=True, text=True)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout + p.stderr


@pytest.mark.parametrize("patch", SERIES)
def test_new_files_have_maintainers(patch, tmp_path):
    """Every file the patch creates is covered by a section of MAINTAINERS
    as the series leaves it (scripts/get_maintainer.pl in the patched
    tree), not only by THE REST."""
    trees = sorted((BUILD / "src").glob("patched-vm-*"))
    if not trees or not (trees[-1] / "scripts" / "get_maintainer.pl").exists():
        pytest.skip("no patched kernel tree (make kernel-patched)")
    tree = trees[-1]
    created = re.findall(r"^--- /dev/null\n\+\+\+ b/(\S+)$",
                         (PATCH_DIR / patch).read_text(), re.M)
    for path in created:
        # a patch of that one file: get_maintainer.pl -f wants it on disk
        one = tmp_path / "one.patch"
        one.write_text(f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+\n")
        p = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git",
                            "--no-git-fallback", "--no-rolestats", "--no-l", "--no-r",
                            str(one)], cwd=tree, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        names = [n for n in p.stdout.splitlines() if "torvalds" not in n]
        assert names, f"{path}: no MAINTAINERS section covers it\n{p.stdout}{p.stderr}"
