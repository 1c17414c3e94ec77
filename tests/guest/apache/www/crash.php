<?php
// The crashing route: unbounded recursion through an internal function.
// Each level is a C frame of the executor (array_map calls back into it),
// and PHP 8.2 has no zend.max_allowed_stack_size, so the worker runs off
// its 8 MiB stack and dies by SIGSEGV; Apache's parent logs it and
// starts another worker.
function down($n)
{
	return array_map('down', [$n + 1]);
}
down(0);
