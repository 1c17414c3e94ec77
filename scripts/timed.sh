#!/bin/bash
# Run a build or test step and record how long it took.
#
#   scripts/timed.sh LABEL COMMAND [ARG...]
#
# Appends "LABEL SECONDS STATUS" to build/timings.txt (the table `make test`
# prints at its end) and exits with COMMAND's status.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
label=${1:?usage: $0 LABEL COMMAND [ARG...]}
shift
start=$(date +%s)
"$@"
rc=$?
mkdir -p "$top/build"
printf '%s %d %d\n' "$label" $(( $(date +%s) - start )) "$rc" >> "$top/build/timings.txt"
exit $rc
