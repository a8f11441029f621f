package redis

import (
	"strconv"
	"strings"
)

// Differential sessions for the list commands, added to respSessions
// (differential_test.go runs them against redis-server 7.0): every
// command, its errors and arities, WRONGTYPE both ways, RESP3's nulls,
// and lists past the listpack limit (the quicklist).
func init() {
	respSessions = append(respSessions, listSessions...)
	// Redis 7.2.4 cuts LSET's index to an int: -4294967296 is 0 and
	// 9223372036854775806 is -2, and it overwrites those elements.
	respDiffOnlySessions = append(respDiffOnlySessions, respSession{name: "lset index past int",
		in: mb("RPUSH", "lsx:a", "b") + mb("LSET", "lsx:a", "-4294967296", "a") + mb("LSET", "lsx:a", "4294967296", "a") +
			mb("LRANGE", "lsx:a", "0", "-1") + mb("RPUSH", "lsx:b", "x", "y") + mb("LSET", "lsx:b", "9223372036854775806", "1") +
			mb("LSET", "lsx:b", "9223372036854775807", "1") + mb("LSET", "lsx:b", "-9223372036854775807", "1") +
			mb("LRANGE", "lsx:b", "0", "-1") + mb("LINDEX", "lsx:b", "4294967296")})
	respKnownDiffs["lset index past int"] = struct {
		difference string
		minikv     string
		closed     bool
	}{"LSET with an index past 32 bits is refused",
		":1\r\n-ERR index out of range\r\n-ERR index out of range\r\n*1\r\n$1\r\nb\r\n:2\r\n" +
			"-ERR index out of range\r\n-ERR index out of range\r\n-ERR index out of range\r\n" +
			"*2\r\n$1\r\nx\r\n$1\r\ny\r\n$-1\r\n$7\r\n__end__\r\n", false}
}

// listPushArgs is RPUSH key with n elements of width bytes each.
func listPushArgs(key string, n, width int) []string {
	args := []string{"RPUSH", key}
	for i := range n {
		e := strconv.Itoa(i)
		if width > len(e) {
			e = strings.Repeat("e", width-len(e)) + e
		}
		args = append(args, e)
	}
	return args
}

var listSessions = []respSession{
	{name: "lists push pop", in: mb("LPUSH", "l:a", "1", "2", "3") + mb("RPUSH", "l:a", "x", "", "-5", "bin\x00\xff") +
		mb("LRANGE", "l:a", "0", "-1") + mb("LLEN", "l:a") + mb("LLEN", "l:nope") + mb("LPUSHX", "l:nope", "a") +
		mb("RPUSHX", "l:nope", "a", "b") + mb("EXISTS", "l:nope") + mb("LPUSHX", "l:a", "lx1", "lx2") + mb("RPUSHX", "l:a", "rx") +
		mb("LPOP", "l:a") + mb("RPOP", "l:a") + mb("LPOP", "l:a", "2") + mb("RPOP", "l:a", "0") + mb("RPOP", "l:a", "3") +
		mb("LPOP", "l:nope") + mb("LPOP", "l:nope", "2") + mb("RPOP", "l:nope", "0") + mb("LPOP", "l:a", "100") +
		mb("EXISTS", "l:a") + mb("LPOP", "l:a") + mb("TYPE", "l:a") + mb("RPUSH", "l:b", "1") + mb("TYPE", "l:b") +
		mb("RPOP", "l:b", "1") + mb("EXISTS", "l:b")},
	{name: "lists pop errors", in: mb("RPUSH", "lp:a", "1", "2") + mb("LPOP", "lp:a", "-1") + mb("LPOP", "lp:a", "x") +
		mb("RPOP", "lp:a", "1.5") + mb("LPOP", "lp:a", "1", "2") + mb("RPOP", "lp:a", "9223372036854775808") +
		mb("LPOP", "lp:nope", "-1") + mb("LPOP") + mb("LPUSH", "lp:a") + mb("RPUSHX", "lp:a") + mb("LLEN") + mb("LLEN", "lp:a", "x") +
		mb("LPOP", "lp:a", "9223372036854775807") + mb("LLEN", "lp:a")},
	{name: "lists index set range", in: mb("RPUSH", "li:a", "a", "b", "c", "d", "e", "100", "-7") +
		mb("LINDEX", "li:a", "0") + mb("LINDEX", "li:a", "-1") + mb("LINDEX", "li:a", "5") + mb("LINDEX", "li:a", "7") +
		mb("LINDEX", "li:a", "-8") + mb("LINDEX", "li:a", "x") + mb("LINDEX", "li:nope", "x") + mb("LINDEX", "li:nope", "0") +
		mb("LINDEX", "li:a", "9223372036854775807") + mb("LINDEX", "li:a", "-9223372036854775808") +
		mb("LSET", "li:a", "0", "A") + mb("LSET", "li:a", "-1", "Z") + mb("LSET", "li:a", "7", "x") + mb("LSET", "li:a", "-8", "x") +
		mb("LSET", "li:a", "x", "y") + mb("LSET", "li:nope", "0", "x") + mb("LSET", "li:nope", "x", "y") + mb("LSET", "li:a", "3", "12345") +
		mb("LRANGE", "li:a", "0", "-1") + mb("LRANGE", "li:a", "1", "2") + mb("LRANGE", "li:a", "-3", "-1") + mb("LRANGE", "li:a", "5", "2") +
		mb("LRANGE", "li:a", "-100", "100") + mb("LRANGE", "li:a", "7", "10") + mb("LRANGE", "li:a", "x", "1") + mb("LRANGE", "li:a", "0", "y") +
		mb("LRANGE", "li:nope", "0", "-1") + mb("LRANGE", "li:nope", "x", "1") + mb("LRANGE", "li:a", "-9223372036854775808", "9223372036854775807") +
		mb("LINDEX", "li:a") + mb("LSET", "li:a", "0") + mb("LRANGE", "li:a", "0")},
	{name: "lists trim rem insert", in: mb("RPUSH", "lt:a", "a", "b", "c", "d", "e", "f") + mb("LTRIM", "lt:a", "1", "-2") +
		mb("LRANGE", "lt:a", "0", "-1") + mb("LTRIM", "lt:a", "0", "100") + mb("LTRIM", "lt:a", "-2", "-1") + mb("LRANGE", "lt:a", "0", "-1") +
		mb("LTRIM", "lt:a", "5", "1") + mb("EXISTS", "lt:a") + mb("LTRIM", "lt:nope", "0", "1") + mb("LTRIM", "lt:a", "x", "1") +
		mb("RPUSH", "lt:r", "x", "1", "x", "2", "x", "3", "x", "01", "1") + mb("LREM", "lt:r", "2", "x") + mb("LRANGE", "lt:r", "0", "-1") +
		mb("LREM", "lt:r", "-1", "x") + mb("LRANGE", "lt:r", "0", "-1") + mb("LREM", "lt:r", "0", "1") + mb("LREM", "lt:r", "0", "nope") +
		mb("LRANGE", "lt:r", "0", "-1") + mb("LREM", "lt:r", "x", "1") + mb("LREM", "lt:nope", "0", "1") + mb("LREM", "lt:nope", "x", "1") +
		mb("LREM", "lt:r", "0", "2") + mb("LREM", "lt:r", "0", "01") + mb("EXISTS", "lt:r") +
		mb("RPUSH", "lt:i", "a", "b", "a") + mb("LINSERT", "lt:i", "BEFORE", "a", "x") + mb("LINSERT", "lt:i", "after", "a", "y") +
		mb("LINSERT", "lt:i", "AFTER", "nope", "z") + mb("LINSERT", "lt:i", "after", "b", "99") + mb("LRANGE", "lt:i", "0", "-1") +
		mb("LINSERT", "lt:i", "middle", "a", "z") + mb("LINSERT", "lt:nope", "BEFORE", "a", "x") + mb("LINSERT", "lt:nope", "x", "a", "x") +
		mb("LINSERT", "lt:i", "BEFORE", "a") + mb("LTRIM", "lt:i", "0") + mb("LREM", "lt:i", "0")},
	{name: "lists lpos", in: mb("RPUSH", "lo:a", "a", "b", "c", "1", "2", "3", "c", "c", "1") + mb("LPOS", "lo:a", "c") +
		mb("LPOS", "lo:a", "1") + mb("LPOS", "lo:a", "nope") + mb("LPOS", "lo:a", "c", "RANK", "2") + mb("LPOS", "lo:a", "c", "RANK", "-1") +
		mb("LPOS", "lo:a", "c", "RANK", "-3") + mb("LPOS", "lo:a", "c", "RANK", "4") + mb("LPOS", "lo:a", "c", "COUNT", "2") +
		mb("LPOS", "lo:a", "c", "COUNT", "0") + mb("LPOS", "lo:a", "c", "COUNT", "0", "RANK", "-1") + mb("LPOS", "lo:a", "c", "COUNT", "2", "RANK", "2") +
		mb("LPOS", "lo:a", "c", "MAXLEN", "3") + mb("LPOS", "lo:a", "c", "MAXLEN", "2") + mb("LPOS", "lo:a", "c", "COUNT", "0", "MAXLEN", "7") +
		mb("LPOS", "lo:a", "c", "RANK", "-1", "MAXLEN", "2") + mb("LPOS", "lo:a", "c", "RANK", "-1", "MAXLEN", "1") +
		mb("LPOS", "lo:a", "nope", "COUNT", "3") + mb("LPOS", "lo:nope", "a") + mb("LPOS", "lo:nope", "a", "COUNT", "1") +
		mb("LPOS", "lo:a", "c", "RANK", "0") + mb("LPOS", "lo:a", "c", "RANK", "x") + mb("LPOS", "lo:a", "c", "RANK", "-9223372036854775808") +
		mb("LPOS", "lo:a", "c", "RANK", "-9223372036854775808", "COUNT", "1") +
		mb("LPOS", "lo:a", "c", "COUNT", "-1") + mb("LPOS", "lo:a", "c", "COUNT", "x") + mb("LPOS", "lo:a", "c", "MAXLEN", "-1") +
		mb("LPOS", "lo:a", "c", "MAXLEN", "y") + mb("LPOS", "lo:a", "c", "RANK") + mb("LPOS", "lo:a", "c", "FOO", "1") +
		mb("LPOS", "lo:nope", "c", "RANK", "0") + mb("LPOS", "lo:a", "c", "rank", "1", "count", "1", "maxlen", "0") +
		mb("LPOS", "lo:a", "c", "RANK", "9223372036854775807") + mb("LPOS", "lo:a")},
	{name: "lists move", in: mb("RPUSH", "lm:a", "1", "2", "3") + mb("LMOVE", "lm:a", "lm:b", "LEFT", "RIGHT") +
		mb("LMOVE", "lm:a", "lm:b", "right", "left") + mb("LRANGE", "lm:a", "0", "-1") + mb("LRANGE", "lm:b", "0", "-1") +
		mb("LMOVE", "lm:a", "lm:a", "LEFT", "RIGHT") + mb("RPUSH", "lm:c", "x", "y", "z") + mb("LMOVE", "lm:c", "lm:c", "LEFT", "RIGHT") +
		mb("LMOVE", "lm:c", "lm:c", "RIGHT", "LEFT") + mb("LMOVE", "lm:c", "lm:c", "LEFT", "LEFT") + mb("LRANGE", "lm:c", "0", "-1") +
		mb("LMOVE", "lm:nope", "lm:b", "LEFT", "LEFT") + mb("LMOVE", "lm:a", "lm:b", "UP", "LEFT") + mb("LMOVE", "lm:a", "lm:b", "LEFT", "x") +
		mb("LMOVE", "lm:a", "lm:b", "LEFT") + mb("LMOVE", "lm:a", "lm:a2", "LEFT", "LEFT") + mb("EXISTS", "lm:a") + mb("LRANGE", "lm:a2", "0", "-1") +
		mb("RPOPLPUSH", "lm:b", "lm:d") + mb("RPOPLPUSH", "lm:b", "lm:b") + mb("RPOPLPUSH", "lm:nope", "lm:d") + mb("LRANGE", "lm:b", "0", "-1") +
		mb("LRANGE", "lm:d", "0", "-1") + mb("RPOPLPUSH", "lm:b") + mb("SET", "lm:s", "str") + mb("RPOPLPUSH", "lm:b", "lm:s") +
		mb("LMOVE", "lm:b", "lm:s", "LEFT", "LEFT") + mb("LRANGE", "lm:b", "0", "-1") + mb("RPOPLPUSH", "lm:s", "lm:b") +
		mb("RPOPLPUSH", "lm:nope", "lm:s") + mb("LMOVE", "lm:s", "lm:nope", "LEFT", "RIGHT")},
	{name: "lists lmpop", in: mb("RPUSH", "lmp:b", "1", "2", "3", "4") + mb("RPUSH", "lmp:c", "x") +
		mb("LMPOP", "2", "lmp:a", "lmp:b", "LEFT") + mb("LMPOP", "3", "lmp:a", "lmp:b", "lmp:c", "RIGHT", "COUNT", "2") +
		mb("LMPOP", "2", "lmp:a", "lmp:b", "left", "count", "10") + mb("EXISTS", "lmp:b") + mb("LMPOP", "2", "lmp:b", "lmp:c", "RIGHT") +
		mb("LMPOP", "1", "lmp:nope", "LEFT") + mb("LMPOP", "2", "lmp:nope", "lmp:nope", "LEFT", "COUNT", "1") +
		mb("LMPOP", "0", "lmp:a", "LEFT") + mb("LMPOP", "-1", "lmp:a", "LEFT") + mb("LMPOP", "x", "lmp:a", "LEFT") +
		mb("LMPOP", "2", "lmp:a", "LEFT") + mb("LMPOP", "5", "lmp:a", "LEFT") + mb("LMPOP", "1", "lmp:a", "UP") +
		mb("LMPOP", "1", "lmp:a", "LEFT", "COUNT") + mb("LMPOP", "1", "lmp:a", "LEFT", "COUNT", "0") + mb("LMPOP", "1", "lmp:a", "LEFT", "COUNT", "-1") +
		mb("LMPOP", "1", "lmp:a", "LEFT", "COUNT", "x") + mb("LMPOP", "1", "lmp:a", "LEFT", "COUNT", "1", "COUNT", "1") +
		mb("LMPOP", "1", "lmp:a", "LEFT", "FOO") + mb("LMPOP", "1", "lmp:a") + mb("LMPOP", "9223372036854775807", "lmp:a", "LEFT") +
		mb("SET", "lmp:s", "v") + mb("RPUSH", "lmp:l", "1") + mb("LMPOP", "2", "lmp:s", "lmp:l", "LEFT") + mb("LMPOP", "2", "lmp:l", "lmp:s", "LEFT") +
		mb("LMPOP", "2", "lmp:nope", "lmp:s", "LEFT")},
	{name: "lists wrong type", in: mb("SET", "lw:s", "v") + mb("HSET", "lw:h", "f", "v") + mb("RPUSH", "lw:l", "a", "b") +
		mb("LPUSH", "lw:s", "x") + mb("RPUSH", "lw:h", "x") + mb("LPUSHX", "lw:s", "x") + mb("RPUSHX", "lw:h", "x") + mb("LPOP", "lw:s") +
		mb("RPOP", "lw:s", "2") + mb("LPOP", "lw:s", "x") + mb("LLEN", "lw:s") + mb("LINDEX", "lw:s", "0") + mb("LINDEX", "lw:s", "x") +
		mb("LSET", "lw:s", "0", "x") + mb("LSET", "lw:s", "x", "x") + mb("LRANGE", "lw:s", "0", "-1") + mb("LRANGE", "lw:s", "x", "-1") +
		mb("LTRIM", "lw:s", "0", "1") + mb("LREM", "lw:s", "0", "x") + mb("LINSERT", "lw:s", "BEFORE", "a", "b") +
		mb("LINSERT", "lw:s", "x", "a", "b") + mb("LPOS", "lw:s", "a") + mb("LPOS", "lw:s", "a", "RANK", "0") +
		mb("GET", "lw:l") + mb("APPEND", "lw:l", "x") + mb("INCR", "lw:l") + mb("STRLEN", "lw:l") + mb("HGET", "lw:l", "f") +
		mb("HSET", "lw:l", "f", "v") + mb("TYPE", "lw:l") + mb("MGET", "lw:l", "lw:s") + mb("GETDEL", "lw:l") + mb("SET", "lw:l", "x", "GET") +
		mb("RPUSH", "lw:l2", "a") + mb("EXPIRE", "lw:l2", "100") + mb("RPUSH", "lw:l2", "b") + mb("TTL", "lw:l2") + mb("LPOP", "lw:l2") +
		mb("TTL", "lw:l2") + mb("SET", "lw:l2", "now a string") + mb("TYPE", "lw:l2") + mb("RENAME", "lw:l", "lw:l3") + mb("LRANGE", "lw:l3", "0", "-1") +
		mb("COPY", "lw:l3", "lw:l4") + mb("RPUSH", "lw:l4", "c") + mb("LRANGE", "lw:l3", "0", "-1") + mb("LRANGE", "lw:l4", "0", "-1")},
	{name: "lists resp3", skip: 1, in: mb("HELLO", "3") + mb("RPUSH", "l3:a", "1", "x") + mb("LPOP", "l3:nope") + mb("LPOP", "l3:nope", "2") +
		mb("LINDEX", "l3:a", "5") + mb("LPOS", "l3:a", "y") + mb("LPOS", "l3:a", "y", "COUNT", "0") + mb("LMPOP", "1", "l3:nope", "LEFT") +
		mb("LMOVE", "l3:nope", "l3:a", "LEFT", "LEFT") + mb("RPOPLPUSH", "l3:nope", "l3:a") + mb("LMPOP", "1", "l3:a", "LEFT", "COUNT", "5") +
		mb("RPUSH", "l3:a", "z") + mb("LRANGE", "l3:a", "0", "-1") + mb("LPOP", "l3:a", "1") + mb("LPOP", "l3:a")},
	{name: "lists config", in: mb("CONFIG", "SET", "list-max-listpack-size", "-2") + mb("CONFIG", "GET", "list-max-listpack-size") +
		mb("CONFIG", "SET", "list-max-ziplist-size", "-2") + mb("CONFIG", "GET", "list-max-ziplist-size") +
		mb("CONFIG", "SET", "list-max-listpack-size", "x") + mb("CONFIG", "SET", "list-max-listpack-size", "-2147483649")},
	{name: "lists big", in: mb(listPushArgs("lb:a", 2000, 12)...) + mb("LLEN", "lb:a") + mb("LINDEX", "lb:a", "1000") +
		mb("LINDEX", "lb:a", "-1") + mb("LRANGE", "lb:a", "995", "1005") + mb("LRANGE", "lb:a", "-3", "-1") + mb("LSET", "lb:a", "1500", strings.Repeat("s", 9000)) +
		mb("LINDEX", "lb:a", "1500") + mb("LINSERT", "lb:a", "BEFORE", "eeeeeeeee700", "ins") + mb("LINDEX", "lb:a", "700") +
		mb("LPOS", "lb:a", "eeeeeeee1999") + mb("LPOS", "lb:a", "ins", "RANK", "-1") + mb("LREM", "lb:a", "0", "eeeeeeee1000") +
		mb("LTRIM", "lb:a", "10", "-10") + mb("LLEN", "lb:a") + mb("LPOP", "lb:a", "3") + mb("RPOP", "lb:a", "3") +
		mb("LMOVE", "lb:a", "lb:b", "LEFT", "RIGHT") + mb("LMOVE", "lb:a", "lb:a", "RIGHT", "LEFT") + mb("LRANGE", "lb:a", "0", "4") +
		mb("LPUSH", "lb:a", strings.Repeat("p", 20000)) + mb("LINDEX", "lb:a", "0") + mb("LRANGE", "lb:a", "-5", "-1") +
		mb("LTRIM", "lb:a", "1", "0") + mb("EXISTS", "lb:a") + mb(listPushArgs("lb:c", 3000, 3)...) + mb("LRANGE", "lb:c", "1990", "2010") +
		mb("LMPOP", "2", "lb:nope", "lb:c", "RIGHT", "COUNT", "4") + mb("LREM", "lb:c", "-2", "e12")},
}
