# Jobs of the coredump socket tests (tests/test_socket.py):
# . /lib/coredam/socket.sh (after lib.sh, agent.sh and pipe_helper.sh)
#
# coredamd serves core_pattern "@@/run/coredam/coredump/socket" and its
# writers store cores where the pipe helper would (/scratch/cores).

# sock_idle: no writer of the agent runs (lib.sh's no_agent_child)
sock_idle() { no_agent_child; }

# pstat NAME: a counter of <state>/pipe/stats (0 when absent)
pstat() {
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' /run/coredam/pipe/stats 2>/dev/null ||
		echo 0
}

# sock_ended N: have N dumps ended, completed or failed?
sock_ended() { [ $(($(pstat completed) + $(pstat failed))) -ge "$1" ]; }

# pstat_is NAME VALUE / pstat_ge NAME VALUE
pstat_is() { [ "$(pstat "$1")" = "$2" ]; }
pstat_ge() { [ "$(pstat "$1")" -ge "$2" ]; }

# sock_check_cores: corecheck every core stored whole, one JSON line each,
# to $RESULTS/cores.json; the names of those kept as cut short to
# $RESULTS/incomplete.txt
sock_check_cores() {
	local f
	: > "$RESULTS/incomplete.txt"
	for f in /scratch/cores/core.*; do
		case $f in
		*.json) continue;;
		*.incomplete) echo "${f##*/}" >> "$RESULTS/incomplete.txt"; continue;;
		esac
		corecheck "$f" >> "$RESULTS/cores.json" || true
	done
}
