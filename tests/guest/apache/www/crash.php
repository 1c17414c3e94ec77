<?php
// The crashing route: unbounded recursion through an internal function.
// Each level is a C frame of the executor (array_map calls back into it),
// and PHP 8.2 has no zend.max_allowed_stack_size, so the worker runs off
// its 8 MiB stack and dies by SIGSEGV; Apache's parent logs it and
// starts another worker.
//
// First, a line in Apache's error log: which worker took which crash
// request (the client's port, as crash-client.php records it) and when
// (CLOCK_MONOTONIC ms), for the benchmark's crash rate and times.
error_log(sprintf('coredam-crash pid %d port %d ms %d', getmypid(),
	(int)$_SERVER['REMOTE_PORT'], intdiv(hrtime(true), 1000000)));
function down($n)
{
	return array_map('down', [$n + 1]);
}
down(0);
