"""scripts/fetch-kernel-source.sh trusts a cached .deb only when it matches
the SHA256 recorded from the archive's signed index: one cut short or
changed is ignored and fetched again (here from an archive that does not
answer, so the fetch fails and no tarball is named)."""

import subprocess

from harness.paths import TOP


def test_a_cached_deb_that_does_not_match_its_checksum_is_not_used(tmp_path):
    cache = tmp_path / "kernel-source"
    cache.mkdir()
    deb = cache / "linux-source-7.3_7.3.4-1~bpo13+1_all.deb"
    deb.write_bytes(b"!<arch>\ndebian-binary   cut short")
    (cache / f"{deb.name}.sha256").write_text(f"{'0' * 64}  {deb.name}\n")
    p = subprocess.run(["scripts/fetch-kernel-source.sh", "7.3"], cwd=TOP,
                       env={"COREDAM_CACHE": str(tmp_path),
                            # loopback, where nothing listens
                            "DEBIAN_MIRROR": "http://127.0.0.1:9/debian",
                            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stderr
    assert f"{deb.name} does not match its checksum: ignored" in p.stderr
    assert p.stdout == "", p.stdout
