# coredamd in a job: . /lib/coredam/agent.sh (after lib.sh)
#
# AGENT_CONF is the configuration coredamd and coredamctl read (their -c);
# unset or empty, their default, /etc/coredam/coredam.conf. The agent logs
# to $RESULTS/agent.log; its pid is in /tmp/agent.pid.

# ctl ARGS...: coredamctl on the job's configuration
ctl() { coredamctl ${AGENT_CONF:+-c "$AGENT_CONF"} "$@"; }

# start_agent: start coredamd and wait (at most 30 s) until it answers on
# its control socket; if it does not, print its log and fail
start_agent() {
	coredamd ${AGENT_CONF:+-c "$AGENT_CONF"} >> "$RESULTS/agent.log" 2>&1 &
	echo $! > /tmp/agent.pid
	waitfor 30 "coredamd answers" agent_running ${AGENT_CONF:+-c "$AGENT_CONF"} ||
		{ cat "$RESULTS/agent.log"; return 1; }
}

# stop_agent: SIGTERM, and wait for it to exit; its exit status goes to
# $RESULTS/agent.rc
stop_agent() {
	local rc=0
	kill -TERM "$(cat /tmp/agent.pid)"
	wait "$(cat /tmp/agent.pid)" || rc=$?
	echo $rc > "$RESULTS/agent.rc"
}

# kill_agent: SIGKILL, as a crash of the agent would end it, and reap it
kill_agent() {
	kill -KILL "$(cat /tmp/agent.pid)"
	wait "$(cat /tmp/agent.pid)" 2>/dev/null || true
}

# knobs: the kernel knobs the agent sets, one NAME=VALUE a line
knobs() {
	local k
	for k in core_cgroup core_max_concurrency core_max_waiting core_wait_timeout_ms; do
		echo "$k=$(cat /proc/sys/kernel/$k)"
	done
}

# end_agent_storm PID: wait for the storm the job runs in the background as
# PID; then check its cores (cores.json), keep the counters (stats), stop
# the agent and keep the knobs it leaves (knobs.after)
end_agent_storm() {
	wait "$1"
	checkcores /scratch/cores/core.* > "$RESULTS/cores.json"
	cat $KSTATS > "$RESULTS/stats"
	stop_agent
	knobs > "$RESULTS/knobs.after"
}
