<?php
// The Apache storm's crash requests, an open loop: php crash-client.php
// PER_S COUNT OUT [LIMIT]. GET /crash.php PER_S times a second, COUNT in
// all, each on a connection of its own opened on time however many are
// still open (a crashing worker holds its connection until it is gone,
// which a dump delays). One process for the whole storm: a shell and a
// client process a request cost more CPU than the guest has to spare
// (tests/guest/apache.sh, crash_at).
//
// Once every connection has ended, or LIMIT s (default 600) after the
// first request, one line per request to OUT:
//     SENT_MS END_MS PORT BYTES
// CLOCK_MONOTONIC in ms (hrtime, as crash.php's log line and, to 10 ms,
// the shell's now_ms); END_MS -1 when the connection was still open at
// the limit; PORT the client's own port, which crash.php logs (0: the
// connection could not be made); BYTES what came back (0: closed
// unanswered, the worker died).
$rate = (float)$argv[1];
$count = (int)$argv[2];
$out = $argv[3];
$limit_ns = (int)(($argv[4] ?? 600) * 1e9);
$ms = function () { return intdiv(hrtime(true), 1000000); };
$req = "GET /crash.php HTTP/1.0\r\nHost: localhost\r\n\r\n";
$t0 = hrtime(true);
$open = [];
$rows = [];
$i = 0;
while ($i < $count || $open) {
	$now = hrtime(true);
	if ($now - $t0 > $limit_ns)
		break;
	$due = $t0 + (int)($i * 1e9 / $rate);
	if ($i < $count && $now >= $due) {
		$sent = $ms();
		$s = @stream_socket_client('tcp://127.0.0.1:80', $errno, $errstr, 10);
		if ($s === false) {
			$rows[$i++] = [$sent, $ms(), 0, 0];
			continue;
		}
		fwrite($s, $req);
		stream_set_blocking($s, false);
		$name = stream_socket_get_name($s, false);
		$rows[$i] = [$sent, -1, (int)substr($name, strrpos($name, ':') + 1), 0];
		$open[$i++] = $s;
		continue;
	}
	// until the next request is due, at most 200 ms
	$wait_us = $i < $count ? max(0, intdiv($due - $now, 1000)) : 200000;
	$wait_us = min($wait_us, 200000);
	if (!$open) {
		usleep($wait_us);
		continue;
	}
	$r = array_values($open);
	$w = $e = null;
	if (@stream_select($r, $w, $e, 0, $wait_us) > 0) {
		foreach ($r as $s) {
			$k = array_search($s, $open, true);
			$data = @fread($s, 65536);
			if (is_string($data))
				$rows[$k][3] += strlen($data);
			if ($data === false || feof($s)) {
				$rows[$k][1] = $ms();
				fclose($s);
				unset($open[$k]);
			}
		}
	}
}
$text = '';
foreach ($rows as $row)
	$text .= implode(' ', $row) . "\n";
file_put_contents($out, $text);
