package redis

import "strings"

// DUMP payloads for the sessions: a string "hello", the same with a bad
// CRC, and any object sealed with Redis 7.0's footer.
var (
	dumpHello  = dumpSeal("\x00\x05hello")
	dumpBadCRC = dumpHello[:len(dumpHello)-1] + "x"
)

func dumpSeal(obj string) string { return string(rdbSeal([]byte(obj))) }

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
	{name: "dump restore", in: mb("RESTORE", "d:a", "0", dumpHello) + mb("GET", "d:a") + mb("RESTORE", "d:a", "0", dumpHello) +
		mb("RESTORE", "d:a", "0", dumpHello, "REPLACE") + mb("RESTORE", "d:a", "-1", dumpHello) + mb("RESTORE", "d:a", "x", "junk") +
		mb("RESTORE", "d:b", "-1", dumpHello) + mb("RESTORE", "d:b", "x", dumpHello) + mb("RESTORE", "d:b", "0", "garbage") +
		mb("RESTORE", "d:b", "0", dumpBadCRC) + mb("RESTORE", "d:b", "0", dumpSeal("\x63\x00")) + mb("RESTORE", "d:b", "0", dumpSeal("\x04\x00")) +
		mb("RESTORE", "d:b", "0", dumpSeal("\x00\x05hel")) + mb("RESTORE", "d:b", "0", dumpSeal("\x00\xc3\x05\x10\x01ab")) +
		mb("RESTORE", "d:b", "0", dumpSeal("\x10\x03abc")) + mb("RESTORE", "d:b", "0", "") + mb("EXISTS", "d:b") +
		mb("RESTORE", "d:b", "0", dumpHello, "FOO") + mb("RESTORE", "d:b", "0", dumpHello, "IDLETIME", "-1") +
		mb("RESTORE", "d:b", "0", dumpHello, "FREQ", "256") + mb("RESTORE", "d:b", "0", dumpHello, "FREQ", "-1") +
		mb("RESTORE", "d:b", "0", dumpHello, "IDLETIME", "10", "FREQ", "5") + mb("RESTORE", "d:b", "0", dumpHello, "IDLETIME") +
		mb("RESTORE", "d:b", "0", dumpHello, "IDLETIME", "x") + mb("RESTORE", "d:b", "0", dumpHello, "FREQ", "5", "REPLACE", "ABSTTL") +
		mb("RESTORE", "d:c", "0", dumpHello, "IDLETIME", "1000") + mb("OBJECT", "IDLETIME", "d:c") +
		mb("RESTORE", "d:d", "100000", dumpHello) + mb("TTL", "d:d") + mb("RESTORE", "d:e", "1", dumpHello, "ABSTTL") + mb("EXISTS", "d:e") +
		mb("RESTORE", "d:a", "1", dumpHello, "ABSTTL", "REPLACE") + mb("EXISTS", "d:a") +
		mb("RESTORE", "d:f", "4102444800000", dumpHello, "ABSTTL") + mb("PEXPIRETIME", "d:f") +
		mb("RESTORE", "d:h", "0", dumpSeal("\x10\x16\x16\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x85hello\x06\xff")) +
		mb("HGETALL", "d:h") + mb("OBJECT", "ENCODING", "d:h") + mb("DUMP", "d:h") + mb("TYPE", "d:h") +
		mb("RESTORE", "d:h", "0", dumpHello, "REPLACE") + mb("TYPE", "d:h") + mb("DUMP", "d:c") + mb("DUMP", "d:nope") +
		mb("SET", "d:i", "12345") + mb("DUMP", "d:i") + mb("SET", "d:j", "-9223372036854775808") + mb("DUMP", "d:j") +
		mb("SET", "d:k", strings.Repeat("ab", 60)) + mb("DUMP", "d:k") + mb("HSET", "d:hh", "f", "1", "g", "-2") + mb("DUMP", "d:hh") +
		mb("RESTORE") + mb("RESTORE", "d:a", "0") + mb("DUMP") + mb("DUMP", "a", "b")},
	{name: "dump restore resp3", skip: 1, in: mb("HELLO", "3") + mb("DUMP", "d3:nope") + mb("RESTORE", "d3:a", "0", dumpHello) +
		mb("DUMP", "d3:a") + mb("RESTORE", "d3:a", "0", dumpHello)},
	{name: "object resp3", skip: 1, in: mb("HELLO", "3") + mb("SET", "o3:e", "x") + mb("OBJECT", "ENCODING", "o3:e") +
		mb("OBJECT", "ENCODING", "o3:nope") + mb("OBJECT", "HELP")},
}
