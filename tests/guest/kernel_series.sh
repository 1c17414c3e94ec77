# Jobs of the kernel series' VM tests (tests/test_kernel_series.py):
# . /lib/coredam/kernel_series.sh (after lib.sh). The usermode helper
# starts with an empty environment, hence the PATH in mkhelper's.

K=/proc/sys/kernel

# dump_cgroup WBPS: /sys/fs/cgroup/dump, with an io.max of WBPS bytes a
# second on the scratch disk, as the dump cgroup
dump_cgroup() {
	mkdir /sys/fs/cgroup/dump
	echo "$(majmin) wbps=$1" > /sys/fs/cgroup/dump/io.max
	echo /dump > $K/core_cgroup
}

# slow pipe helper: logs its admission, sleeps $1 s, then stores the core
mkhelper() {
	cat > /bin/slowhelper <<EOF
#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
echo "\$1" >> /scratch/admitted
cat /proc/self/cgroup > /scratch/helper-cgroup.\$1
cat /proc/\$1/cgroup > /scratch/dumper-cgroup.\$1 2>/dev/null
sleep $1
cat > /scratch/core.\$1
EOF
	chmod +x /bin/slowhelper
	echo "|/bin/slowhelper %p" > $K/core_pattern
	echo 64 > $K/core_pipe_limit
}
# try_write FILE VALUE: prints "ok" or the error message
try_write() {
	if (echo -n "$2" > "$1") 2>/tmp/err; then echo ok; else cat /tmp/err; fi
}
# overtake_then_kill A MB: dump A is stuck holding the one slot. Crash B
# (MB MiB), which gets the slot when A's lease ends; then SIGKILL A. Leaves
# second_ms, first_state, second, kill_ms, after and b in $RESULTS.
overtake_then_kill() {
	t0=$(now_ms)
	crasher -m $2 -s 11 & b=$!
	wait $b || true
	echo $(( $(now_ms) - t0 )) > $RESULTS/second_ms
	echo $(( $(now_ms) - ta )) > $RESULTS/since_first_ms
	grep CoreDumping /proc/$1/status > $RESULTS/first_state
	kstats > $RESULTS/second
	t0=$(now_ms)
	kill -9 $1
	wait $1 || true
	echo $(( $(now_ms) - t0 )) > $RESULTS/kill_ms
	wait_kstat overtime 0
	kstats > $RESULTS/after
	echo $b > $RESULTS/b
}
