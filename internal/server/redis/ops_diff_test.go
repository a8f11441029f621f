package redis

// Differential sessions and tests for the operational surface (ops.go):
// SLOWLOG, LATENCY, INFO's commandstats/errorstats/latencystats, the
// CONFIG parameters of both, and MONITOR, against redis-server 7.0.15.

func init() {
	respSessions = append(respSessions, inRESP2And3([]respSession{
		{name: "slowlog errors and help", in: mb("SLOWLOG") + mb("SLOWLOG", "HELP") + mb("SLOWLOG", "FOO") + mb("SLOWLOG", "GET", "x") +
			mb("SLOWLOG", "GET", "-2") + mb("SLOWLOG", "GET", "1", "2") + mb("SLOWLOG", "LEN", "1") + mb("SLOWLOG", "RESET", "x") +
			mb("SLOWLOG", "GET", "0") + mb("SLOWLOG", "GET", "9223372036854775808") + mb("SLOWLOG", "get", "+1") + mb("slowlog", "help", "x")},
		{name: "latency errors and help", in: mb("LATENCY") + mb("LATENCY", "HELP") + mb("LATENCY", "FOO") + mb("LATENCY", "HISTORY") +
			mb("LATENCY", "HISTORY", "nosuch") + mb("LATENCY", "GRAPH", "nosuch") + mb("LATENCY", "GRAPH") + mb("LATENCY", "LATEST", "x") +
			mb("LATENCY", "LATEST") + mb("LATENCY", "RESET") + mb("LATENCY", "RESET", "a", "b") + mb("LATENCY", "DOCTOR", "x") +
			mb("LATENCY", "DOCTOR") + mb("LATENCY", "HISTOGRAM", "nosuch") + mb("LATENCY", "HISTORY", "a", "b")},
		// One name per CONFIG GET: Redis lists several in its hash table's order.
		{name: "ops config", in: mb("CONFIG", "GET", "slowlog-log-slower-than") + mb("CONFIG", "GET", "slowlog-max-len") +
			mb("CONFIG", "GET", "latency-tracking") + mb("CONFIG", "GET", "latency-tracking-info-percentiles") +
			mb("CONFIG", "GET", "latency-monitor-threshold") +
			mb("CONFIG", "SET", "slowlog-max-len", "-1") + mb("CONFIG", "SET", "slowlog-log-slower-than", "-2") +
			mb("CONFIG", "SET", "slowlog-log-slower-than", "x") + mb("CONFIG", "SET", "latency-tracking", "maybe") +
			mb("CONFIG", "SET", "latency-tracking-info-percentiles", "50 101") + mb("CONFIG", "SET", "latency-tracking-info-percentiles", "a") +
			mb("CONFIG", "SET", "latency-tracking-info-percentiles", " 50") + mb("CONFIG", "SET", "latency-tracking-info-percentiles", "50  99") +
			mb("CONFIG", "SET", "latency-tracking-info-percentiles", "inf") + mb("CONFIG", "SET", "latency-tracking-info-percentiles", "nan") +
			mb("CONFIG", "SET", "latency-monitor-threshold", "-1") + mb("CONFIG", "SET", "latency-monitor-threshold", "1.5") +
			mb("CONFIG", "SET", "slowlog-max-len", "9223372036854775808") +
			mb("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.90 1e1 0x10 -0 100") +
			mb("CONFIG", "GET", "latency-tracking-info-percentiles") + mb("CONFIG", "SET", "latency-tracking-info-percentiles", "") +
			mb("CONFIG", "GET", "latency-tracking-info-percentiles") + mb("CONFIG", "SET", "latency-tracking-info-percentiles", "0.0000001 99.99999999") +
			mb("CONFIG", "GET", "latency-tracking-info-percentiles") + mb("CONFIG", "SET", "latency-tracking", "NO") +
			mb("CONFIG", "GET", "latency-tracking") + mb("CONFIG", "SET", "latency-tracking", "Yes", "latency-tracking-info-percentiles", "50 99 99.9") +
			// (latency-monitor-threshold stays 0: the latency session runs alongside.)
			mb("CONFIG", "SET", "slowlog-max-len", "200", "slowlog-log-slower-than", "20000", "latency-monitor-threshold", "0") +
			mb("CONFIG", "GET", "slowlog-log-slower-than") + mb("CONFIG", "GET", "slowlog-max-len") + mb("CONFIG", "GET", "latency-monitor-threshold") +
			mb("CONFIG", "SET", "slowlog-max-len", "128", "slowlog-log-slower-than", "10000")},
		{name: "info sections", in: mb("INFO", "foo") + mb("INFO", "modules")},
	})...)
}
