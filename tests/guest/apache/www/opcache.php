<?php
// The opcache as this worker sees it (shared by all): how much of the
// segment holds scripts, and how many are cached. Warming it: ?warm=1
// compiles every file under /var/lib/coredam/warm (apache_warm writes them).
$warmed = 0;
if (isset($_GET['warm']))
	foreach (glob('/var/lib/coredam/warm/*.php') as $f)
		$warmed += opcache_compile_file($f) ? 1 : 0;
$s = opcache_get_status(false);
header('Content-Type: application/json');
echo json_encode([
	'enabled' => $s['opcache_enabled'],
	'memory_consumption' => ini_get('opcache.memory_consumption'),
	'used_memory' => $s['memory_usage']['used_memory'],
	'free_memory' => $s['memory_usage']['free_memory'],
	'scripts' => $s['opcache_statistics']['num_cached_scripts'],
	'warmed' => $warmed,
	'pid' => getmypid(),
]), "\n";
