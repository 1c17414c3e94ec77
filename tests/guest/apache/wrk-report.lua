-- wrk's summary as one JSON line, "coredam-wrk: {...}" (tests/guest/apache.sh):
-- requests, errors by kind (status: answers other than 2xx and 3xx), latency
-- percentiles and maximum in microseconds
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format('coredam-wrk: {"requests": %d, "duration_us": %d, ' ..
		'"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d, ' ..
		'"p50_us": %d, "p99_us": %d, "p999_us": %d, "max_us": %d}\n',
		summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
		latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
