package redis

import "strings"

// Differential sessions for OBJECT, DUMP/RESTORE and SORT, added to
// respSessions (differential_test.go runs them against redis-server).
func init() {
	respSessions = append(respSessions, keyspaceSessions...)
}

var keyspaceSessions = []respSession{
	{name: "object", in: mb("SET", "ob:i", "12345") + mb("SET", "ob:neg", "-77") + mb("SET", "ob:e", "hello") +
		mb("SET", "ob:lead0", "0123") + mb("SET", "ob:e44", strings.Repeat("e", 44)) + mb("SET", "ob:r45", strings.Repeat("r", 45)) +
		mb("SET", "ob:big", "92233720368547758070") + mb("SET", "ob:max", "9223372036854775807") + mb("SET", "ob:plus", "+1") +
		mb("HSET", "ob:h", "f", "v") +
		mb("OBJECT", "ENCODING", "ob:i") + mb("OBJECT", "ENCODING", "ob:neg") + mb("OBJECT", "ENCODING", "ob:e") +
		mb("OBJECT", "ENCODING", "ob:lead0") + mb("OBJECT", "ENCODING", "ob:e44") + mb("OBJECT", "ENCODING", "ob:r45") +
		mb("OBJECT", "ENCODING", "ob:big") + mb("OBJECT", "ENCODING", "ob:max") + mb("OBJECT", "ENCODING", "ob:plus") +
		mb("object", "encoding", "ob:h") + mb("OBJECT", "ENCODING", "ob:nope") +
		mb("OBJECT", "FREQ", "ob:e") + mb("OBJECT", "FREQ", "ob:nope") + mb("OBJECT", "IDLETIME", "ob:nope") +
		mb("OBJECT", "IDLETIME", "ob:e") + mb("OBJECT", "REFCOUNT", "ob:e") + mb("OBJECT", "REFCOUNT", "ob:h") + mb("OBJECT", "REFCOUNT", "ob:nope") +
		mb("OBJECT", "HELP") + mb("OBJECT") + mb("OBJECT", "FOO") + mb("OBJECT", "FOO", "ob:e") + mb("OBJECT", "ENCODING") +
		mb("OBJECT", "ENCODING", "ob:e", "x") + mb("OBJECT", "HELP", "x")},
	{name: "object resp3", skip: 1, in: mb("HELLO", "3") + mb("SET", "o3:e", "x") + mb("OBJECT", "ENCODING", "o3:e") +
		mb("OBJECT", "ENCODING", "o3:nope") + mb("OBJECT", "HELP")},
}
