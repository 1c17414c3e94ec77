"""The job that goes into the guest and the results that come back.

The job goes in on a disk with serial "coredam-job": a tar of run.sh,
sysctls, and the files asked for. The results come back on a disk with
serial "coredam-results": a tar of $RESULTS with the job's exit status in
rc (tests/guest/runjob writes both sides in the guest)."""

import io
import json
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Result:
    rc: int
    output: str
    console: str
    results_dir: Path
    log_dir: Path
    wall_s: float
    files: dict = field(default_factory=dict)

    def path(self, name):
        return self.results_dir / name

    def text(self, name):
        return (self.results_dir / name).read_text()

    def json_lines(self, name):
        """Every line of a results file that parses as JSON."""
        out = []
        for line in self.text(name).splitlines():
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
        return out


def make_job(path, script, sysctls, files, scratch):
    with tarfile.open(path, "w") as tar:
        def add(name, data, mode=0o644):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))

        add("run.sh", script.encode(), 0o755)
        if sysctls:
            lines = "".join(f"{k}={v}\n" for k, v in sysctls.items())
            add("sysctls", lines.encode())
        if not scratch:
            add("no-scratch", b"")
        for name, src in (files or {}).items():
            if isinstance(src, (bytes, str)) and not isinstance(src, Path):
                data = src.encode() if isinstance(src, str) else src
                add(name, data, 0o755)
            else:
                tar.add(str(src), arcname=name)


def extract(tar_path, dest):
    """Extract regular files and directories of a guest's tar, refusing any
    name that would land outside dest."""
    dest = dest.resolve()
    with tarfile.open(tar_path) as tar:
        for m in tar:
            target = (dest / m.name).resolve()
            if target != dest and dest not in target.parents:
                raise tarfile.TarError(f"unsafe name in results: {m.name}")
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif m.isfile():
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(m) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
