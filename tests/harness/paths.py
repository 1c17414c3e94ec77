"""Where the tree, its build and the boot logs are."""

import os
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent.parent
BUILD = TOP / "build"
# COREDAM_LOGS: another place for the boot logs, for a second pytest run at
# the same time (make test runs the debug kernel's tests beside the others)
LOGS = Path(os.environ.get("COREDAM_LOGS") or BUILD / "vm-logs")
