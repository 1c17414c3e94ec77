# Jobs of the systemd integration tests (tests/test_systemd.py), in the
# Debian guest: . /lib/coredam/systemd.sh (after lib.sh)

# systemctl and journalctl print plain text to the results
export SYSTEMD_PAGER= SYSTEMD_COLORS=0

# cores_on_scratch: a file core_pattern on the scratch disk; waits until the
# agent has followed it there (io.max names the disk); $m is its MAJ:MIN
cores_on_scratch() {
	mkdir -p /scratch/cores
	echo /scratch/cores/core.%p > /proc/sys/kernel/core_pattern
	m=$(majmin $SCRATCH_DEV); echo $m > $RESULTS/scratch.majmin
	waitfor 60 "io.max names $m" grep -q "^$m " /sys/fs/cgroup/coredump.slice/io.max
}

agent_log() { journalctl -b -u coredamd --no-pager -o cat > $RESULTS/agent.log || true; }

conf() {
	mkdir -p /etc/coredam/coredam.conf.d
	cat > /etc/coredam/coredam.conf.d/50-test.conf
}

# pipe_helper_on: the step docs/deployment.md gives a stock kernel: coredamd
# restarted with [Pipe] SetCorePattern=yes (and a 20 MB free-space floor),
# its unit's ExecStartPre= pointing core_pattern at coredam-pipe
pipe_helper_on() {
	conf <<'END'
[Pipe]
SetCorePattern=yes
[Space]
FreeSpaceFloor=20M
END
	systemctl restart coredamd
}

# limits BPS N: coredamd reloaded with a drop-in of WriteBandwidth=BPS,
# Concurrency=N and a 100 MB free-space floor
limits() {
	conf <<EOF
[Limits]
WriteBandwidth=$1
Concurrency=$2
[Space]
FreeSpaceFloor=100M
EOF
	systemctl reload coredamd
}

# the probe as a foreground service in its own slice, the crashers in theirs
start_probe() {
	mkdir -p /scratch/probe
	systemd-run --quiet --unit=probe --slice=probe.slice \
		/usr/local/bin/probe -d /scratch/probe -o $RESULTS/probe.txt -i 50 -s /tmp/stop-probe
}
stop_probe() {
	touch /tmp/stop-probe
	waitfor 60 "the probe to stop" probe_stopped
}

probe_stopped() { ! systemctl is-active -q probe; }
storm_ended() { ! systemctl is-active -q storm; }

# crash N MB: N processes of MB MiB crash at once, from crashers.slice;
# returns when the last has been reaped (systemd-run --wait needs D-Bus,
# which the minimal guest does not have; systemctl talks to systemd directly)
crash() {
	systemd-run --quiet --slice=crashers.slice --unit=storm \
		/usr/local/bin/stormer -n $1 -m $2 -o $RESULTS/storm.txt
	waitfor 1200 "the storm to end" storm_ended || return 1
	grep -q '^end' $RESULTS/storm.txt
}

# slice_state NAME: what systemd and the cgroup say of coredump.slice's
# limits, to $RESULTS/NAME.{show,io.max,memory.high}
slice_state() {
	systemctl show coredump.slice -p IOWriteBandwidthMax -p MemoryHigh > $RESULTS/$1.show
	cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/$1.io.max
	cat /sys/fs/cgroup/coredump.slice/memory.high > $RESULTS/$1.memory.high
}

# another_agent PID: coredamd runs again, with another main PID than PID
another_agent() {
	local pid
	pid=$(systemctl show -p MainPID --value coredamd)
	[ "$pid" != 0 ] && [ "$pid" != "$1" ] && agent_running
}
