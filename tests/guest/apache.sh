# Jobs of the Apache storm (tests/test_apache.py) and its benchmark
# (tests/bench_apache.py) in the Debian guest:
# . /lib/coredam/apache.sh (after lib.sh and systemd.sh)
#
# Debian's apache2 with the prefork MPM and mod_php 8.2 (scripts/mkrootfs.sh
# installs it, disabled): /healthy.php, /static.txt and /crash.php, whose
# worker dies by SIGSEGV (tests/guest/apache/www/).

# http_get PATH: the body of GET http://127.0.0.1PATH (HTTP/1.0, bash's
# /dev/tcp: the minimal guest has no curl), at most 10 s
http_get() {
	timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/80 &&
		printf "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n" "$0" >&3 &&
		sed "1,/^\r\{0,1\}$/d" <&3' "$1"
}

# status_field NAME: a field of mod_status's machine-readable page
status_field() { http_get '/server-status?auto' | awk -F': ' -v k="$1" '$1 == k { print $2 }'; }

# apache_full N: does Apache answer with N workers, all idle but the one
# that serves the question?
apache_full() {
	http_get '/server-status?auto' |
		awk -F': ' -v n="$1" '$1 == "BusyWorkers" { b = $2 } $1 == "IdleWorkers" { i = $2 }
			END { exit !(b == 1 && i == n - 1) }'
}

# apache_start WORKERS OPCACHE_MB: a prefork Apache of exactly WORKERS
# workers (never more, never fewer once started), PHP's opcache on with a
# segment of OPCACHE_MB MiB; waits until every worker is up and idle
apache_start() {
	cat > /etc/apache2/conf-enabled/coredam-workers.conf <<CONF
<IfModule mpm_prefork_module>
	StartServers $1
	MinSpareServers $1
	MaxSpareServers $1
	ServerLimit $1
	MaxRequestWorkers $1
	MaxConnectionsPerChild 0
</IfModule>
CONF
	cat > /etc/php/8.2/apache2/conf.d/90-coredam.ini <<INI
opcache.enable=1
opcache.memory_consumption=$2
opcache.validate_timestamps=0
; cache a script however new its file (apache_warm's are seconds old)
opcache.file_update_protection=0
INI
	systemctl start apache2 || { journalctl -b -u apache2 --no-pager | tail -20; return 1; }
	waitfor 60 "Apache with $1 idle workers" apache_full "$1" ||
		{ http_get '/server-status?auto'; return 1; }
}

# apache_warm MB: fill about MB MiB of the opcache with compiled scripts
# (generated here, compiled once through /opcache.php?warm=1: the segment
# is shared, so every worker's core holds them); the opcache's state before
# and after goes to $RESULTS/opcache.cold.json and opcache.json
apache_warm() {
	http_get /opcache.php > $RESULTS/opcache.cold.json
	mkdir -p /var/lib/coredam/warm
	php -r '
		// about 1 MiB of opcache a file: 1200 functions with literals
		for ($f = 0; $f < $argv[1]; $f++) {
			$src = "<?php\n";
			for ($i = 0; $i < 1200; $i++)
				$src .= "function w{$f}_{$i}(\$a) { \$s = \"w{$f}_{$i}\"; return [\$a, \$s, " .
					"strlen(\$s) * $i, array_sum([1, 2, 3, $i]), str_repeat(\"x\", $i % 7)]; }\n";
			file_put_contents("/var/lib/coredam/warm/w$f.php", $src);
		}' "$1"
	http_get '/opcache.php?warm=1' > $RESULTS/opcache.json
}

# crash_at PER_S SECS [LIMIT]: GET /crash.php PER_S times a second for
# SECS seconds, an open loop, each request on a connection of its own
# (crash-client.php: one PHP process, not a shell and a client a request,
# which held the guest to about 0.4 crashes a second); one line per request
# to $RESULTS/crash.txt, "SENT_MS END_MS PORT BYTES" (crash_rows() in
# tests/harness/apache.py reads them). Returns when every connection has
# ended (its worker answered or died), or LIMIT s (default 600) after the
# first request.
crash_at() {
	php /lib/coredam/crash-client.php "$1" $(($1 * $2)) $RESULTS/crash.txt "${3:-600}"
}

# drive SECS URL OUT: wrk on URL for SECS seconds, two connections; its
# summary (requests, errors by kind, latency percentiles in us) as JSON to OUT
drive() {
	wrk -t1 -c2 -d"$1"s --timeout 10s -s /lib/coredam/wrk-report.lua "http://127.0.0.1:80$2" > "$3.txt" 2>&1
	sed -n 's/^coredam-wrk: //p' "$3.txt" > "$3"
}

# scoreboard_watch: every 0.5 s, a line "MS BUSY IDLE SCOREBOARD PROCS"
# to $RESULTS/scoreboard.txt until /tmp/stop-scoreboard exists: mod_status's
# busy and idle workers and its scoreboard (a character a slot: "_" idle,
# "." no process, "S" starting, "W" "K" "R" serving; a crashed worker
# stays "W" until Apache reaps it), from one answer, and the apache2
# processes alive, crashed ones included. MS is when the answer came: the
# status request waits for a free worker like any other (up to 10 s)
scoreboard_watch() {
	local s
	while [ ! -e /tmp/stop-scoreboard ]; do
		s=$(http_get '/server-status?auto' | awk -F': ' '{ sub(/\r$/, "", $2) }
			$1 == "BusyWorkers" { b = $2 } $1 == "IdleWorkers" { i = $2 }
			$1 == "Scoreboard" { sb = $2 }
			END { printf "%d %d %s", b, i, sb == "" ? "-" : sb }')
		echo "$(now_ms) $s $(pgrep -c -x apache2)" >> $RESULTS/scoreboard.txt
		sleep 0.5
	done
}

# healthy_watch: the healthy route's latency as a new client sees it, one
# request at a time every 250 ms (healthy-watch.php), "SENT_MS LATENCY_MS
# OK" a line to $RESULTS/healthy.txt, until /tmp/stop-healthy exists
healthy_watch() {
	php /lib/coredam/healthy-watch.php $RESULTS/healthy.txt /tmp/stop-healthy
}

# meminfo_watch: every 0.5 s, "MS MEMAVAILABLE_KB" (/proc/meminfo) to
# $RESULTS/meminfo.txt and "MS PID..." (every apache2 process, crashed
# ones until Apache reaps them) to $RESULTS/pids.txt, until
# /tmp/stop-meminfo exists: when each new worker first showed
meminfo_watch() {
	while [ ! -e /tmp/stop-meminfo ]; do
		echo "$(now_ms) $(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)" \
			>> $RESULTS/meminfo.txt
		echo "$(now_ms)" $(pgrep -x apache2) >> $RESULTS/pids.txt
		sleep 0.5
	done
}

# dumps_done: is no dump helper (coredam-pipe, systemd-coredump: the
# kernel's and its socket's, whose names the kernel cuts to 15 bytes; one
# pattern each, since pgrep refuses a pattern longer than that) running,
# no writer of coredamd's coredump socket (its children), and, on the
# patched kernel, no dump writing or waiting in its queue?
dumps_done() {
	local agent
	! pgrep -x coredam-pipe > /dev/null && ! pgrep -x systemd-coredum > /dev/null || return 1
	agent=$(systemctl show -p MainPID --value coredamd)
	[ "${agent:-0}" = 0 ] || ! pgrep -P "$agent" > /dev/null || return 1
	[ ! -e $KSTATS ] || dumps_idle
}

# collect_cores MAX: every core under /scratch/cores (coredam-pipe's, or
# the kernel's file dumps) and /scratch/coredump (systemd-coredump's
# store), the helper's .json metadata left out: "NAME BYTES" a line to
# $RESULTS/cores.txt, corecheck's verdict on each uncompressed one to
# $RESULTS/cores.json, and the first MAX (by name) into $RESULTS/cores/
# for the host, gzip'ed unless systemd-coredump compressed them already
# (the guest's root file system, where $RESULTS is, has room for a few
# hundred MB only: no copy once less than 100 MB is left)
collect_cores() {
	local f n=0
	mkdir -p $RESULTS/cores
	: > $RESULTS/cores.txt
	for f in /scratch/cores/* /scratch/coredump/*; do
		[ -f "$f" ] || continue
		case $f in *.json) continue;; esac
		echo "${f##*/} $(stat -c %s "$f")" >> $RESULTS/cores.txt
		case $f in *.zst|*.incomplete) ;; *) corecheck "$f" >> $RESULTS/cores.json || true;; esac
		[ $n -lt "$1" ] || continue
		[ "$(df --output=avail -k $RESULTS | tail -1)" -gt 102400 ] || continue
		case $f in
		*.zst) cp "$f" $RESULTS/cores/ ;;
		*) gzip -1 -c "$f" > "$RESULTS/cores/${f##*/}.gz" ;;
		esac
		n=$((n + 1))
	done
}

# crashes: how many workers Apache saw die by SIGSEGV (its error log)
crashes() { grep -c 'exit signal Segmentation fault (11)' /var/log/apache2/error.log || true; }
