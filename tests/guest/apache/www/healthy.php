<?php
// The healthy route: a little PHP work from the opcache, answered at once.
$sum = 0;
for ($i = 0; $i < 1000; $i++)
	$sum += $i * $i;
header('Content-Type: text/plain');
echo "ok $sum\n";
