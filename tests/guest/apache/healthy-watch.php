<?php
// The healthy route's latency over time, as a new client sees it:
// php healthy-watch.php OUT STOP. GET /healthy.php on a connection of its
// own every 250 ms (the next one as soon as the last ended, when it took
// longer: a closed loop, one request at a time, so a stalled server is one
// long sample and adds nothing to its queue), until the file STOP exists.
// One line per request to OUT, written as it ends:
//     SENT_MS LATENCY_MS OK
// SENT_MS CLOCK_MONOTONIC in ms (hrtime, as crash-client.php's); OK 1 for
// an answer "200" whose body begins "ok ", 0 for anything else (refused,
// closed unanswered, another status); LATENCY_MS -1 for the request still
// waiting when STOP appeared. No timeout but STOP: a wait of minutes is
// what this is here to show.
$out = fopen($argv[1], 'a');
$stop = $argv[2];
$ms = function () { return intdiv(hrtime(true), 1000000); };
$req = "GET /healthy.php HTTP/1.0\r\nHost: localhost\r\n\r\n";
while (!file_exists($stop)) {
	$t0 = hrtime(true);
	$sent = $ms();
	$s = @stream_socket_client('tcp://127.0.0.1:80', $errno, $errstr, 600);
	$data = '';
	$ended = true;
	if ($s !== false) {
		fwrite($s, $req);
		stream_set_blocking($s, false);
		for (;;) {
			$r = [$s];
			$w = $e = null;
			if (@stream_select($r, $w, $e, 0, 200000) > 0) {
				$chunk = @fread($s, 65536);
				if (is_string($chunk))
					$data .= $chunk;
				if ($chunk === false || feof($s))
					break;
			} elseif (file_exists($stop)) {
				$ended = false;
				break;
			}
		}
		fclose($s);
	}
	$ok = preg_match('#^HTTP/1\.[01] 200 .*?\r\n\r\nok #s', $data) ? 1 : 0;
	$lat = $ended ? intdiv(hrtime(true) - $t0, 1000000) : -1;
	fwrite($out, "$sent $lat $ok\n");
	fflush($out);
	$left = 250000 - intdiv(hrtime(true) - $t0, 1000);
	if ($left > 0)
		usleep($left);
}
fclose($out);
