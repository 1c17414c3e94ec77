# Jobs of the Apache storm (tests/test_apache.py) in the Debian guest:
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

# crash_at PER_S SECS: GET /crash.php PER_S times a second for SECS
# seconds, each from a client of its own (a crash ends its connection);
# each request's start time (ms) to $RESULTS/crash.sent. Returns when
# every client has ended (in a subshell: the job's other children are not
# waited for)
crash_at() {
	(
		n=$(($1 * $2)) i=0
		gap=$(awk -v r="$1" 'BEGIN { printf "%.3f", 1 / r }')
		while [ $i -lt $n ]; do
			now_ms >> $RESULTS/crash.sent
			http_get /crash.php > /dev/null 2>&1 &
			sleep "$gap"
			i=$((i + 1))
		done
		wait
	)
}

# drive SECS URL OUT: wrk on URL for SECS seconds, two connections; its
# summary (requests, errors by kind, latency percentiles in us) as JSON to OUT
drive() {
	wrk -t1 -c2 -d"$1"s --timeout 10s -s /lib/coredam/wrk-report.lua "http://127.0.0.1:80$2" > "$3.txt" 2>&1
	sed -n 's/^coredam-wrk: //p' "$3.txt" > "$3"
}

# scoreboard_watch: every 0.5 s, a line "MS BUSY IDLE PROCS" (mod_status's
# busy and idle workers, apache2 processes alive, crashed ones included)
# to $RESULTS/scoreboard.txt until /tmp/stop-scoreboard exists
scoreboard_watch() {
	while [ ! -e /tmp/stop-scoreboard ]; do
		echo "$(now_ms) $(status_field BusyWorkers) $(status_field IdleWorkers) $(pgrep -c -x apache2)" \
			>> $RESULTS/scoreboard.txt
		sleep 0.5
	done
}

# crashes: how many workers Apache saw die by SIGSEGV (its error log)
crashes() { grep -c 'exit signal Segmentation fault (11)' /var/log/apache2/error.log || true; }
