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
		mb("HSET", "ob:h", "f", "v") + mb("HSET", "ob:hbig", "f", strings.Repeat("v", 65)) +
		mb("ZADD", "ob:z", "1", "a") + mb("ZADD", "ob:zbig", "1", strings.Repeat("m", 65)) +
		mb("OBJECT", "ENCODING", "ob:hbig") + mb("OBJECT", "ENCODING", "ob:z") + mb("OBJECT", "ENCODING", "ob:zbig") +
		mb("RESTORE", "ob:is", "0", dumpSeal("\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x05\x00\x0a\x00")) +
		mb("OBJECT", "ENCODING", "ob:is") + mb("OBJECT", "REFCOUNT", "ob:z") +
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
	{name: "sort", in: mb("RPUSH", "so:l", "3", "1", "2", "10", "-5") + mb("SORT", "so:l") + mb("SORT", "so:l", "DESC") +
		mb("SORT", "so:l", "ALPHA") + mb("SORT", "so:l", "LIMIT", "1", "2") + mb("SORT", "so:l", "LIMIT", "-1", "2") +
		mb("SORT", "so:l", "LIMIT", "0", "-1") + mb("SORT", "so:l", "LIMIT", "10", "5") + mb("SORT", "so:l", "LIMIT", "2", "0") +
		mb("SORT", "so:l", "BY", "nosort") + mb("SORT", "so:l", "BY", "nosort", "LIMIT", "1", "2") + mb("SORT", "so:l", "BY", "nosort", "DESC") +
		mb("MSET", "so:w_3", "30", "so:w_1", "10", "so:w_2", "20", "so:w_10", "5", "so:w_-5", "100") +
		mb("SORT", "so:l", "BY", "so:w_*") + mb("SORT", "so:l", "BY", "so:w_*", "GET", "#", "GET", "so:w_*") +
		mb("SORT", "so:l", "BY", "so:w_*", "DESC", "LIMIT", "0", "2") + mb("SORT", "so:l", "GET", "so:nope_*") +
		mb("SORT", "so:l", "BY", "so:nope_*") + mb("SORT", "so:l", "GET", "nostar") +
		mb("HSET", "so:h_1", "f", "b") + mb("HSET", "so:h_2", "f", "a") + mb("HSET", "so:h_3", "f", "d") + mb("HSET", "so:h_10", "f", "c") +
		mb("HSET", "so:h_-5", "f", "e") + mb("SORT", "so:l", "BY", "so:h_*->f", "ALPHA", "GET", "so:h_*->f", "GET", "#") +
		mb("SORT", "so:l", "GET", "so:h_*->") + mb("SORT", "so:l", "GET", "so:h_*->nofield") + mb("SORT", "so:l", "GET", "so:w_*->f") +
		mb("RPUSH", "so:s", "a", "b", "c10", "c2") + mb("SORT", "so:s") + mb("SORT", "so:s", "ALPHA") + mb("SORT", "so:s", "ALPHA", "DESC", "LIMIT", "1", "2") +
		mb("SORT", "so:s", "BY", "so:w_*") + mb("SORT", "so:l", "STORE", "so:dst") + mb("LRANGE", "so:dst", "0", "-1") + mb("TYPE", "so:dst") +
		mb("SORT", "so:l", "BY", "so:w_*", "GET", "#", "GET", "so:nope_*", "STORE", "so:dst") + mb("LRANGE", "so:dst", "0", "-1") +
		mb("SORT", "so:nope", "STORE", "so:dst") + mb("EXISTS", "so:dst") + mb("SET", "so:str", "x") + mb("SORT", "so:str") +
		mb("SORT", "so:h_1") + mb("SORT", "so:nope") + mb("SORT", "so:l", "FOO") + mb("SORT", "so:l", "LIMIT", "1") +
		mb("SORT", "so:l", "LIMIT", "a", "b") + mb("SORT", "so:l", "BY") + mb("SORT", "so:l", "GET") + mb("SORT", "so:str", "FOO") +
		mb("SORT_RO", "so:l", "STORE", "so:x") + mb("SORT_RO", "so:l", "DESC", "ALPHA") + mb("SORT_RO", "so:str") +
		mb("SORT", "so:s", "STORE", "so:str") + mb("TYPE", "so:str") + mb("SORT") + mb("SORT_RO") +
		mb("SORT", "so:l", "BY", "nosort", "DESC", "LIMIT", "1", "3") + mb("SORT", "so:l", "BY", "nosort", "DESC", "LIMIT", "4", "3") +
		mb("MULTI") + mb("SORT", "so:l", "BY", "so:w_*", "GET", "so:h_*->f") + mb("SORT", "so:l", "STORE", "so:dst2") +
		mb("LRANGE", "so:dst2", "0", "-1") + mb("EXEC")},
	{name: "sort zset set numbers", in: mb("ZADD", "sz:z", "1", "a", "2", "b", "3", "c", "0", "d") + mb("SORT", "sz:z", "BY", "nosort") +
		mb("SORT", "sz:z", "BY", "nosort", "DESC") + mb("SORT", "sz:z", "BY", "nosort", "LIMIT", "1", "2") +
		mb("SORT", "sz:z", "BY", "nosort", "DESC", "LIMIT", "1", "2") + mb("SORT", "sz:z", "BY", "nosort", "DESC", "LIMIT", "3", "9") +
		mb("SORT", "sz:z", "ALPHA", "DESC") + mb("SORT", "sz:z") +
		mb("RESTORE", "sz:is", "0", dumpSeal("\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x05\x00\x0a\x00")) +
		mb("SORT", "sz:is", "DESC") + mb("SORT", "sz:is", "BY", "nosort") + mb("SORT", "sz:is", "BY", "nosort", "STORE", "sz:d") +
		mb("LRANGE", "sz:d", "0", "-1") + mb("RPUSH", "sz:f", "1.5", " 2", "1e2", "inf", "-inf", "", "0x10", "-0") + mb("SORT", "sz:f") +
		mb("RPUSH", "sz:t", "1", "01", "1.0", "+1") + mb("SORT", "sz:t") + mb("SORT", "sz:t", "DESC") +
		mb("RPUSH", "sz:nan", "1", "nan") + mb("SORT", "sz:nan") + mb("RPUSH", "sz:sp", "1", " ") + mb("SORT", "sz:sp") +
		mb("RPUSH", "sz:big", "1e400") + mb("SORT", "sz:big")},
	{name: "sort getkeys", in: mb("COMMAND", "GETKEYS", "SORT", "k", "STORE", "d") +
		mb("COMMAND", "GETKEYS", "SORT", "k", "BY", "w_*", "GET", "store", "LIMIT", "0", "1", "STORE", "d1", "STORE", "d2") +
		mb("COMMAND", "GETKEYS", "SORT_RO", "k", "GET", "#") + mb("COMMAND", "GETKEYS", "SORT", "k", "STORE") +
		mb("COMMAND", "GETKEYS", "DUMP", "k") + mb("COMMAND", "GETKEYS", "RESTORE", "k", "0", "x") +
		mb("COMMAND", "GETKEYS", "OBJECT", "ENCODING", "k")},
	{name: "sort resp3", skip: 1, in: mb("HELLO", "3") + mb("RPUSH", "s3:l", "2", "1") + mb("SORT", "s3:l", "GET", "#", "GET", "s3:nope_*") +
		mb("SORT", "s3:nope")},
	{name: "object resp3", skip: 1, in: mb("HELLO", "3") + mb("SET", "o3:e", "x") + mb("OBJECT", "ENCODING", "o3:e") +
		mb("OBJECT", "ENCODING", "o3:nope") + mb("OBJECT", "HELP")},
}
