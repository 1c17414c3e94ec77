"""The patch series as a reviewer receives it, both of them (on 6.12 in
kernel-patch/, rebased onto 7.3 in kernel-patch/7.3/): every patch in
`series` exists and is numbered in its place, comes from the project
with no Signed-off-by (left to the submitter), has a subject in the
kernel's form, and the base's scripts/checkpatch.pl --strict has nothing
to say about it."""

import re
import subprocess

import pytest

from harness.paths import BUILD, TOP


def read_series(d):
    names = [line.split("#")[0].strip() for line in (d / "series").read_text().splitlines()]
    return [n for n in names if n]


# base version -> the directory of the series on it
SERIES_DIRS = {"6.12": TOP / "kernel-patch", "7.3": TOP / "kernel-patch" / "7.3"}
SERIES = {base: read_series(d) for base, d in SERIES_DIRS.items()}
PATCHES = [pytest.param(base, p, id=f"{base}/{p}")
           for base, names in SERIES.items() for p in names]
SUBJECT = re.compile(r"^Subject: \[PATCH(?: v\d+)? (\d+)/(\d+)\] (.*)$", re.M)


def kernel_version(tree):
    """"6.12" for a tree whose top Makefile says VERSION = 6, PATCHLEVEL = 12."""
    head = (tree / "Makefile").read_text()[:500] if (tree / "Makefile").exists() else ""
    m = re.search(r"^VERSION = (\d+)\nPATCHLEVEL = (\d+)$", head, re.M)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def base_tree(base):
    """A tree of the series' base version: each version's checkpatch has
    rules of its own for code of its own. A stock tree first: make test
    builds those before any test runs, while patched 7.3 is extracted
    beside the tests."""
    trees = (BUILD / "src").glob("*-vm-*")
    for tree in sorted(trees, key=lambda t: (not t.name.startswith("stock-"), t.name)):
        if (tree / "scripts" / "checkpatch.pl").exists() and kernel_version(tree) == base:
            return tree
    pytest.skip(f"no {base} kernel tree with scripts/checkpatch.pl (make kernel)")


@pytest.mark.parametrize("base", SERIES)
def test_cover_letter_names_every_patch(base):
    d = SERIES_DIRS[base]
    cover = (d / "0000-cover-letter.patch").read_text()
    assert "*** SUBJECT HERE ***" not in cover and "*** BLURB HERE ***" not in cover
    assert re.search(r"^base-commit: [0-9a-f]{40}$", cover, re.M)
    assert "DCO" in cover and "Signed-off-by" in cover
    n = len(SERIES[base])
    assert re.search(rf"^Subject: \[PATCH(?: v\d+)? 0+/{n}\] ", cover, re.M), "cover's count"
    for i, p in enumerate(SERIES[base], 1):
        number, total, subject = SUBJECT.search((d / p).read_text()).groups()
        assert (int(number), int(total)) == (i, n), f"{p} is {number}/{total}, its place {i}/{n}"
        assert subject.split(":")[0] in cover


@pytest.mark.parametrize("base,patch", PATCHES)
def test_patch_form(base, patch):
    text = (SERIES_DIRS[base] / patch).read_text()
    subject = SUBJECT.search(text)
    assert subject, "no numbered subject"
    subject = subject.group(3)
    assert len(subject) <= 75
    assert re.match(r"^(coredump|cgroup|writeback|selftests/coredump|Documentation)[:/ ]",
                    subject), subject
    # the submitter adds their own sign-off: the project's collective name
    # is not one the DCO accepts (the cover letter says so)
    assert not re.search(r"^Signed-off-by:", text, re.M), "a Signed-off-by line"
    assert re.search(r"^From: coredam developers <.+@.+>$", text, re.M)


@pytest.mark.parametrize("base,patch", PATCHES)
def test_checkpatch_strict_clean(base, patch):
    tree = base_tree(base)
    # FILE_PATH_CHANGES asks of every new file whether MAINTAINERS needs
    # updating, whether a pattern covers it or not: the test below answers
    p = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", "--no-signoff",
                        "--no-summary", "--terse", "--ignore", "FILE_PATH_CHANGES",
                        str(SERIES_DIRS[base] / patch)],
                       cwd=tree, capture_output=True, text=True)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout + p.stderr


def maintainers_of(tree, maintainers, path, tmp_path):
    """The people scripts/get_maintainer.pl names for PATH by the file
    MAINTAINERS, Linus (THE REST) left out."""
    # a patch of that one file: get_maintainer.pl -f wants it on disk
    one = tmp_path / "one.patch"
    one.write_text(f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+\n")
    p = subprocess.run(["perl", "scripts/get_maintainer.pl", "--mpath", str(maintainers),
                        "--no-git", "--no-git-fallback", "--no-rolestats", "--no-l",
                        "--no-r", str(one)], cwd=tree, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return {n for n in p.stdout.splitlines() if "torvalds" not in n}


@pytest.fixture(scope="module")
def series_maintainers(tmp_path_factory):
    """For a base: its tree, MAINTAINERS as the series leaves it (the
    series' hunks of the file put on a copy, unless the tree, stock or
    patched, has them already) and fs/coredump.c's maintainers by it;
    made once a base for every patch that creates files."""
    made = {}

    def get(base):
        if base in made:
            return made[base]
        tree = base_tree(base)
        if not (tree / "scripts" / "get_maintainer.pl").exists():
            pytest.skip(f"no {base} tree with scripts/get_maintainer.pl")
        d, work = SERIES_DIRS[base], tmp_path_factory.mktemp(f"maintainers-{base}")
        maintainers = work / "MAINTAINERS"
        maintainers.write_bytes((tree / "MAINTAINERS").read_bytes())
        for p in SERIES[base]:
            if "+++ b/MAINTAINERS" not in (d / p).read_text():
                continue
            apply = ["git", "apply", "--include=MAINTAINERS", str(d / p)]
            if subprocess.run(apply[:2] + ["--check", "--reverse"] + apply[2:],
                              cwd=work, capture_output=True).returncode == 0:
                continue
            r = subprocess.run(apply, cwd=work, capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
        owners = maintainers_of(tree, maintainers, "fs/coredump.c", work)
        assert owners, "fs/coredump.c has no maintainer"
        made[base] = tree, maintainers, owners
        return made[base]
    return get


@pytest.mark.parametrize("base,patch", PATCHES)
def test_new_files_have_maintainers(base, patch, series_maintainers, tmp_path):
    """Every file the patch creates is covered by a section of MAINTAINERS
    as the series leaves it (scripts/get_maintainer.pl, with the series'
    own changes to MAINTAINERS applied), not only by THE REST, and the
    coredump selftests reach fs/coredump.c's maintainers, not only the
    selftest framework's."""
    created = re.findall(r"^--- /dev/null\n\+\+\+ b/(\S+)$",
                         (SERIES_DIRS[base] / patch).read_text(), re.M)
    if not created:
        return
    tree, maintainers, owners = series_maintainers(base)
    for path in created:
        names = maintainers_of(tree, maintainers, path, tmp_path)
        assert names, f"{path}: no MAINTAINERS section covers it"
        # a test of the dump code reaches the code's maintainers, not only
        # the selftest framework's
        if path.startswith("tools/testing/selftests/coredump/"):
            assert names & owners, (f"{path}: its MAINTAINERS sections name none of "
                                    f"fs/coredump.c's maintainers {sorted(owners)}, only "
                                    f"{sorted(names)}")
