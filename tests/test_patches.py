"""The patch series as a reviewer receives it: every patch in `series`
exists, comes from the project with no Signed-off-by (left to the
submitter), has a subject in the kernel's form, and
scripts/checkpatch.pl --strict has nothing to say about it."""

import re
import subprocess

import pytest

import vm

PATCH_DIR = vm.TOP / "kernel-patch"
SERIES = [line.split("#")[0].strip()
          for line in (PATCH_DIR / "series").read_text().splitlines()]
SERIES = [p for p in SERIES if p]


def checkpatch():
    for tree in sorted((vm.BUILD / "src").glob("*-vm-*")):
        script = tree / "scripts" / "checkpatch.pl"
        if script.exists():
            return tree, script
    pytest.skip("no kernel tree with scripts/checkpatch.pl (make kernel)")


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
    p = subprocess.run([str(script), "--strict", "--no-signoff", "--no-summary", "--terse",
                        str(PATCH_DIR / patch)],
                       cwd=tree, capture_output=True, text=True)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout + p.stderr
