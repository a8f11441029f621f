package redis

// Differential sessions and random differential tests for the bitmap,
// BITFIELD, HyperLogLog and LCS commands against redis-server 7.0. The
// sessions join respSessions (TestRESPDifferential runs them, RESP2 and,
// after HELLO 3, RESP3).

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/hll"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// hllDense is a dense HyperLogLog of value v in every register byte:
// valid for Redis, with registers up to 63 (more than any hash gives).
func hllDense(fill byte, cache string) string {
	b := []byte("HYLL\x00\x00\x00\x00" + cache)
	for len(b) < hll.DenseSize {
		b = append(b, fill)
	}
	return string(b)
}

var bitmapSessions = []respSession{
	{name: "setbit getbit", in: mb("SETBIT", "bm:a", "7", "1") + mb("GET", "bm:a") + mb("SETBIT", "bm:a", "7", "1") + mb("SETBIT", "bm:a", "7", "0") +
		mb("GETBIT", "bm:a", "7") + mb("SETBIT", "bm:a", "100", "1") + mb("STRLEN", "bm:a") + mb("GETBIT", "bm:a", "100") + mb("GETBIT", "bm:a", "99") +
		mb("GETBIT", "bm:a", "4294967295") + mb("GETBIT", "bm:a", "4294967296") + mb("GETBIT", "bm:nope", "3") + mb("SETBIT", "bm:z", "30", "0") +
		mb("GET", "bm:z") + mb("SETBIT", "bm:a", "-1", "1") + mb("SETBIT", "bm:a", "x", "1") + mb("SETBIT", "bm:a", "1", "2") +
		mb("SETBIT", "bm:a", "1", "-1") + mb("SETBIT", "bm:a", "1", "01") + mb("SETBIT", "bm:a", "1", "x") + mb("SETBIT", "bm:a", "#1", "1") +
		mb("GETBIT", "bm:a", "-1") + mb("GETBIT", "bm:a", "1.5") + mb("SETBIT", "bm:a", "1") + mb("GETBIT", "bm:a") +
		mb("SET", "bm:t", "x", "EX", "100") + mb("SETBIT", "bm:t", "1", "0") + mb("TTL", "bm:t") + mb("GET", "bm:t") +
		mb("SET", "bm:n", "12") + mb("SETBIT", "bm:n", "7", "1") + mb("GET", "bm:n")},
	{name: "bitcount", in: mb("SET", "bc:a", "foobar") + mb("BITCOUNT", "bc:a") + mb("BITCOUNT", "bc:a", "0", "0") + mb("BITCOUNT", "bc:a", "1", "1") +
		mb("BITCOUNT", "bc:a", "1", "-2") + mb("BITCOUNT", "bc:a", "-3", "-1") + mb("BITCOUNT", "bc:a", "-1", "-3") + mb("BITCOUNT", "bc:a", "5", "100") +
		mb("BITCOUNT", "bc:a", "-100", "100") + mb("BITCOUNT", "bc:a", "1", "5", "BIT") + mb("BITCOUNT", "bc:a", "5", "30", "bit") +
		mb("BITCOUNT", "bc:a", "-9", "-2", "BIT") + mb("BITCOUNT", "bc:a", "0", "0", "Byte") + mb("BITCOUNT", "bc:a", "0", "0", "FOO") +
		mb("BITCOUNT", "bc:a", "0") + mb("BITCOUNT", "bc:a", "0", "1", "BIT", "x") + mb("BITCOUNT", "bc:a", "x", "1") + mb("BITCOUNT", "bc:a", "1", "x") +
		mb("BITCOUNT", "bc:nope") + mb("BITCOUNT", "bc:nope", "0") + mb("BITCOUNT", "bc:nope", "x", "y", "z") + mb("SET", "bc:e", "") +
		mb("BITCOUNT", "bc:e") + mb("BITCOUNT", "bc:e", "0", "-1") + mb("BITCOUNT", "bc:e", "0", "-1", "BIT") + mb("BITCOUNT") +
		mb("BITCOUNT", "bc:a", "9223372036854775807", "-9223372036854775808", "BIT") + mb("BITCOUNT", "bc:a", "-9223372036854775808", "9223372036854775807", "BIT")},
	{name: "bitpos", in: mb("SET", "bp:a", "\xff\xf0\x00") + mb("BITPOS", "bp:a", "0") + mb("BITPOS", "bp:a", "1") + mb("BITPOS", "bp:a", "0", "2") +
		mb("BITPOS", "bp:a", "1", "2") + mb("BITPOS", "bp:a", "1", "1", "-1") + mb("BITPOS", "bp:a", "0", "0", "0") + mb("BITPOS", "bp:a", "0", "0", "-1", "BIT") +
		mb("BITPOS", "bp:a", "0", "3", "7", "BIT") + mb("BITPOS", "bp:a", "0", "3", "BIT") + mb("BITPOS", "bp:a", "1", "10", "-1", "bit") +
		mb("BITPOS", "bp:a", "1", "12", "15", "BIT") + mb("BITPOS", "bp:a", "0", "-5", "-1", "BIT") + mb("BITPOS", "bp:a", "1", "5", "3") +
		mb("SET", "bp:f", "\xff\xff") + mb("BITPOS", "bp:f", "0") + mb("BITPOS", "bp:f", "0", "0") + mb("BITPOS", "bp:f", "0", "0", "-1") +
		mb("BITPOS", "bp:f", "0", "0", "BIT") + mb("BITPOS", "bp:f", "0", "3", "-1", "BIT") + mb("BITPOS", "bp:f", "1", "100") +
		mb("BITPOS", "bp:nope", "0") + mb("BITPOS", "bp:nope", "1") + mb("BITPOS", "bp:nope", "1", "x") + mb("BITPOS", "bp:a", "2") +
		mb("BITPOS", "bp:a", "x") + mb("BITPOS", "bp:a", "1", "x") + mb("BITPOS", "bp:a", "1", "0", "x") + mb("BITPOS", "bp:a", "1", "0", "1", "FOO") +
		mb("BITPOS", "bp:a", "1", "0", "x", "FOO") + mb("BITPOS", "bp:a", "1", "0", "1", "BIT", "x") + mb("SET", "bp:e", "") + mb("BITPOS", "bp:e", "0") +
		mb("BITPOS", "bp:e", "1") + mb("BITPOS", "bp:e", "0", "0") + mb("BITPOS", "bp:a")},
	{name: "bitop", in: mb("SET", "bo:a", "foobar") + mb("SET", "bo:b", "abcdef") + mb("SET", "bo:c", "\x0f") +
		mb("BITOP", "AND", "bo:d", "bo:a", "bo:b") + mb("GET", "bo:d") + mb("BITOP", "or", "bo:d", "bo:a", "bo:c") + mb("GET", "bo:d") +
		mb("BITOP", "XOR", "bo:d", "bo:a", "bo:b", "bo:c") + mb("GET", "bo:d") + mb("BITOP", "NOT", "bo:d", "bo:c") + mb("GET", "bo:d") +
		mb("BITOP", "AND", "bo:d", "bo:a", "bo:nope") + mb("GET", "bo:d") + mb("BITOP", "AND", "bo:d", "bo:nope") + mb("EXISTS", "bo:d") +
		mb("BITOP", "NOT", "bo:d", "bo:a", "bo:b") + mb("BITOP", "NAND", "bo:d", "bo:a") + mb("BITOP", "AND", "bo:d") +
		mb("HSET", "bo:h", "f", "v") + mb("BITOP", "OR", "bo:d", "bo:a", "bo:h") + mb("BITOP", "OR", "bo:h", "bo:a") + mb("TYPE", "bo:h") + mb("GET", "bo:h") +
		mb("SET", "bo:t", "x", "EX", "100") + mb("BITOP", "OR", "bo:t", "bo:c") + mb("TTL", "bo:t") + mb("BITOP", "OR", "bo:a", "bo:a", "bo:c") + mb("GET", "bo:a") +
		mb("SET", "bo:e", "") + mb("BITOP", "NOT", "bo:e2", "bo:e") + mb("EXISTS", "bo:e2")},
	{name: "bitfield", in: mb("BITFIELD", "bf:a", "SET", "i8", "0", "-100", "GET", "u8", "0", "GET", "i8", "0", "INCRBY", "i8", "0", "100", "GET", "i4", "4") +
		mb("GET", "bf:a") + mb("BITFIELD", "bf:a", "SET", "u8", "#1", "255", "GET", "u8", "#1", "GET", "u16", "0", "GET", "i16", "0", "GET", "u63", "0", "GET", "i64", "0") +
		mb("BITFIELD", "bf:a", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2", "102", "1", "INCRBY", "u2", "102", "1", "OVERFLOW", "FAIL",
			"INCRBY", "u2", "102", "1", "OVERFLOW", "WRAP", "INCRBY", "u2", "102", "1") +
		mb("BITFIELD", "bf:s", "OVERFLOW", "SAT", "SET", "i8", "0", "200", "SET", "i8", "0", "-200", "SET", "u8", "8", "-1", "SET", "u8", "8", "256",
			"OVERFLOW", "FAIL", "SET", "i8", "0", "128", "SET", "u8", "8", "-1", "INCRBY", "i8", "0", "-1", "GET", "i8", "0") +
		mb("BITFIELD", "bf:s", "OVERFLOW", "WRAP", "SET", "i8", "0", "200", "SET", "u8", "8", "-1", "INCRBY", "i64", "16", "9223372036854775807",
			"INCRBY", "i64", "16", "1", "INCRBY", "i64", "16", "-1", "OVERFLOW", "SAT", "INCRBY", "i64", "16", "1", "INCRBY", "i64", "16", "-9223372036854775808",
			"INCRBY", "i64", "16", "-9223372036854775808", "OVERFLOW", "FAIL", "INCRBY", "i64", "16", "-1", "INCRBY", "u63", "80", "-1",
			"OVERFLOW", "SAT", "INCRBY", "u63", "80", "-1", "INCRBY", "u63", "80", "9223372036854775807", "INCRBY", "u63", "80", "1", "GET", "u63", "80") +
		mb("GET", "bf:s") + mb("BITFIELD", "bf:s", "OVERFLOW", "WRAP", "INCRBY", "i1", "0", "1", "INCRBY", "i1", "0", "1", "INCRBY", "u1", "0", "1",
		"SET", "i1", "3", "-1", "GET", "u1", "3", "INCRBY", "i5", "3", "-100") +
		mb("BITFIELD", "bf:nope", "GET", "u8", "0", "GET", "i64", "#100000") + mb("EXISTS", "bf:nope") + mb("BITFIELD", "bf:nope") + mb("EXISTS", "bf:nope") +
		mb("BITFIELD", "bf:f", "OVERFLOW", "FAIL", "SET", "u8", "100", "256") + mb("GET", "bf:f") + mb("BITFIELD_RO", "bf:a", "GET", "u8", "0", "get", "i8", "#2") +
		mb("BITFIELD_RO", "bf:a", "SET", "u8", "0", "1") + mb("BITFIELD_RO", "bf:a", "GET", "u8") + mb("BITFIELD_RO", "bf:a") + mb("BITFIELD_RO", "bf:a", "OVERFLOW", "SAT") +
		mb("SET", "bf:t", "x", "EX", "100") + mb("BITFIELD", "bf:t", "SET", "u8", "0", "65") + mb("TTL", "bf:t") + mb("GET", "bf:t")},
	{name: "bitfield errors", in: mb("BITFIELD", "bfe:a", "GET", "u64", "0") + mb("BITFIELD", "bfe:a", "GET", "i65", "0") + mb("BITFIELD", "bfe:a", "GET", "i0", "0") +
		mb("BITFIELD", "bfe:a", "GET", "x8", "0") + mb("BITFIELD", "bfe:a", "GET", "I8", "0") + mb("BITFIELD", "bfe:a", "GET", "u08", "0") +
		mb("BITFIELD", "bfe:a", "GET", "", "0") + mb("BITFIELD", "bfe:a", "GET", "u8\x00x", "0") + mb("BITFIELD", "bfe:a", "GET", "u", "0") +
		mb("BITFIELD", "bfe:a", "GET", "u8", "-1") + mb("BITFIELD", "bfe:a", "GET", "u8", "x") + mb("BITFIELD", "bfe:a", "GET", "u8", "#-1") +
		mb("BITFIELD", "bfe:a", "GET", "u8", "##1") + mb("BITFIELD", "bfe:a", "GET", "u8", "#") + mb("BITFIELD", "bfe:a", "GET", "u8", "4294967296") +
		mb("BITFIELD", "bfe:a", "GET", "u8", "4294967295") + mb("BITFIELD", "bfe:a", "GET", "u8", "#536870912") + mb("BITFIELD", "bfe:a", "GET", "u8", "#2305843009213693953") +
		mb("BITFIELD", "bfe:a", "GET", "u8") + mb("BITFIELD", "bfe:a", "SET", "u8", "0") + mb("BITFIELD", "bfe:a", "INCRBY", "u8", "0") +
		mb("BITFIELD", "bfe:a", "SET", "u8", "0", "x") + mb("BITFIELD", "bfe:a", "INCRBY", "u8", "0", "1.5") + mb("BITFIELD", "bfe:a", "OVERFLOW") +
		mb("BITFIELD", "bfe:a", "OVERFLOW", "NOPE", "GET", "u8", "0") + mb("BITFIELD", "bfe:a", "FOO", "u8", "0") +
		mb("BITFIELD", "bfe:a", "GET", "u8", "0", "SET", "u8", "0", "1", "GET", "x8", "0") + mb("EXISTS", "bfe:a") + mb("BITFIELD") + mb("BITFIELD_RO") +
		mb("HSET", "bfe:h", "f", "v") + mb("BITFIELD", "bfe:h", "GET", "u8", "0") + mb("BITFIELD", "bfe:h", "SET", "u8", "0", "1") +
		mb("BITFIELD_RO", "bfe:h", "GET", "u8", "0") + mb("BITFIELD", "bfe:h", "GET", "u64", "0") + mb("BITFIELD", "bfe:h") +
		mb("SETBIT", "bfe:h", "0", "1") + mb("GETBIT", "bfe:h", "0") + mb("BITCOUNT", "bfe:h") + mb("BITCOUNT", "bfe:h", "x", "y") + mb("BITPOS", "bfe:h", "1") +
		mb("BITPOS", "bfe:h", "2") + mb("GETBIT", "bfe:h", "x")},
	// Offsets are checked against proto-max-bulk-len (512 MB) with Redis's
	// errors, in Redis's order (offset, value, type), whatever the item
	// size; SETRANGE past 512 MB gets Redis's own error. Nothing here
	// makes Redis allocate.
	{name: "offsets against proto-max-bulk-len", in: mb("SETBIT", "bl:k", "4294967295", "2") + mb("SETBIT", "bl:k", "4294967295", "x") +
		mb("SETBIT", "bl:k", "4294967296", "1") + mb("SETBIT", "bl:k", "34359738368", "1") + mb("SETBIT", "bl:k", "99999999999999999999", "1") +
		mb("HSET", "bl:h", "f", "v") + mb("SETBIT", "bl:h", "4294967295", "1") + mb("SETBIT", "bl:h", "4294967296", "1") +
		mb("BITFIELD", "bl:k", "SET", "u8", "4294967280", "x") + mb("BITFIELD", "bl:k", "INCRBY", "i8", "#536870911", "1.5") +
		mb("BITFIELD", "bl:k", "SET", "u8", "4294967280", "1", "OVERFLOW", "foo") + mb("BITFIELD", "bl:k", "SET", "u8", "4294967280", "1", "SET", "u8", "abc", "1") +
		mb("BITFIELD", "bl:k", "SET", "u8", "4294967280", "1", "GET", "u8", "4294967296") + mb("BITFIELD", "bl:h", "SET", "u8", "4294967280", "1") +
		mb("BITFIELD_RO", "bl:k", "SET", "u8", "4294967280", "1") + mb("BITFIELD_RO", "bl:k", "SET", "u8", "4294967280", "x") +
		mb("SETRANGE", "bl:k", "536870912", "x") + mb("SETRANGE", "bl:k", "536870910", "xyz") + mb("SETRANGE", "bl:k", "9223372036854775807", "x") +
		mb("SETRANGE", "bl:k", "536870912", "") + mb("SETRANGE", "bl:h", "536870912", "x") + mb("SET", "bl:s", "v") +
		mb("SETRANGE", "bl:s", "536870912", "x") + mb("SETRANGE", "bl:s", "536870912", "") + mb("EXISTS", "bl:k") + mb("GET", "bl:s")},
	// A BITFIELD that changes no field (the value already there, INCRBY 0,
	// OVERFLOW FAIL refusing) does not touch the key: a WATCH survives it.
	{name: "bitfield without change keeps a watch", in: mb("SET", "bu:k", "\x80") + mb("WATCH", "bu:k") +
		mb("BITFIELD", "bu:k", "SET", "u8", "0", "128", "INCRBY", "i4", "4", "0") + mb("MULTI") + mb("GET", "bu:k") + mb("EXEC") +
		mb("WATCH", "bu:k") + mb("BITFIELD", "bu:k", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "200") + mb("MULTI") + mb("GET", "bu:k") + mb("EXEC") +
		mb("WATCH", "bu:k") + mb("BITFIELD", "bu:k", "SET", "u1", "1", "1", "SET", "u1", "1", "0") + mb("MULTI") + mb("GET", "bu:k") + mb("EXEC") +
		mb("WATCH", "bu:k") + mb("BITFIELD", "bu:k", "SET", "u8", "8", "0") + mb("MULTI") + mb("GET", "bu:k") + mb("EXEC") +
		mb("WATCH", "bu:k") + mb("SETBIT", "bu:k", "0", "1") + mb("MULTI") + mb("GET", "bu:k") + mb("EXEC")},
	{name: "bitmaps resp3", skip: 1, in: mb("HELLO", "3") + mb("SETBIT", "b3:a", "3", "1") + mb("GETBIT", "b3:a", "3") + mb("BITCOUNT", "b3:a") +
		mb("BITPOS", "b3:a", "1") + mb("BITOP", "NOT", "b3:b", "b3:a") + mb("BITFIELD", "b3:a", "GET", "u8", "0", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5") +
		mb("BITFIELD_RO", "b3:a", "GET", "i4", "0") + mb("BITFIELD", "b3:nope") + mb("PFADD", "b3:h", "a", "b") + mb("PFCOUNT", "b3:h") + mb("PFMERGE", "b3:m", "b3:h") +
		mb("SET", "b3:x", "ohmytext") + mb("SET", "b3:y", "mynewtext") + mb("LCS", "b3:x", "b3:y") + mb("LCS", "b3:x", "b3:y", "IDX", "WITHMATCHLEN") +
		mb("LCS", "b3:x", "b3:y", "LEN")},
	{name: "lcs", in: mb("SET", "lc:a", "ohmytext") + mb("SET", "lc:b", "mynewtext") + mb("LCS", "lc:a", "lc:b") + mb("LCS", "lc:a", "lc:b", "LEN") +
		mb("LCS", "lc:a", "lc:b", "IDX") + mb("LCS", "lc:a", "lc:b", "IDX", "MINMATCHLEN", "4") + mb("LCS", "lc:a", "lc:b", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN") +
		mb("LCS", "lc:a", "lc:b", "idx", "minmatchlen", "-5", "withmatchlen") + mb("LCS", "lc:a", "lc:b", "WITHMATCHLEN") + mb("LCS", "lc:a", "lc:b", "LEN", "MINMATCHLEN", "3") +
		mb("LCS", "lc:a", "lc:b", "LEN", "IDX") + mb("LCS", "lc:a", "lc:b", "MINMATCHLEN") + mb("LCS", "lc:a", "lc:b", "MINMATCHLEN", "x") + mb("LCS", "lc:a", "lc:b", "FOO") +
		mb("LCS", "lc:a", "lc:nope") + mb("LCS", "lc:nope", "lc:nope2", "IDX") + mb("LCS", "lc:a", "lc:a", "IDX", "WITHMATCHLEN") + mb("LCS", "lc:a") +
		mb("HSET", "lc:h", "f", "v") + mb("LCS", "lc:a", "lc:h") + mb("LCS", "lc:h", "lc:a", "FOO") + mb("SET", "lc:n", "12345") + mb("SET", "lc:m", "2x4") +
		mb("LCS", "lc:n", "lc:m", "IDX", "WITHMATCHLEN") + mb("SET", "lc:x", "aaaa") + mb("SET", "lc:y", "aa") + mb("LCS", "lc:x", "lc:y", "IDX", "WITHMATCHLEN")},
	{name: "pfadd pfcount", in: mb("PFADD", "hl:a", "a", "b", "c") + mb("PFADD", "hl:a", "a") + mb("PFADD", "hl:a") + mb("PFADD", "hl:new") + mb("PFCOUNT", "hl:new") +
		mb("PFCOUNT", "hl:a") + mb("GET", "hl:a") + mb("PFADD", "hl:a", "d") + mb("GET", "hl:a") + mb("PFCOUNT", "hl:a") + mb("GET", "hl:a") +
		mb("PFCOUNT", "hl:nope") + mb("PFCOUNT", "hl:a", "hl:nope", "hl:new") + mb("PFADD", "hl:b", "c", "d", "e", "f") + mb("PFCOUNT", "hl:a", "hl:b") +
		mb("PFMERGE", "hl:m", "hl:a", "hl:b") + mb("PFCOUNT", "hl:m") + mb("GET", "hl:m") + mb("PFMERGE", "hl:m") + mb("PFMERGE", "hl:m2") + mb("GET", "hl:m2") +
		mb("PFMERGE", "hl:a", "hl:b") + mb("GET", "hl:a") + mb("SET", "hl:t", "x") + mb("DEL", "hl:t") + mb("PFADD", "hl:t", "x") + mb("EXPIRE", "hl:t", "100") +
		mb("PFADD", "hl:t", "y") + mb("TTL", "hl:t") + mb("PFMERGE", "hl:t", "hl:a") + mb("TTL", "hl:t") + mb("PFCOUNT", "hl:t") + mb("TTL", "hl:t") + mb("PFADD") + mb("PFCOUNT") + mb("PFMERGE")},
	{name: "hll wrong type and corrupt", in: mb("SET", "hw:s", "not a hll") + mb("PFADD", "hw:s", "a") + mb("PFCOUNT", "hw:s") + mb("PFCOUNT", "hw:s", "hw:nope") +
		mb("PFMERGE", "hw:d", "hw:s") + mb("EXISTS", "hw:d") + mb("PFMERGE", "hw:s") + mb("HSET", "hw:h", "f", "v") + mb("PFADD", "hw:h", "a") + mb("PFCOUNT", "hw:h") +
		mb("PFCOUNT", "hw:h", "hw:s") + mb("PFMERGE", "hw:h") + mb("PFMERGE", "hw:d", "hw:h") + mb("SET", "hw:i", "12345678901234567") + mb("PFADD", "hw:i", "a") +
		mb("SET", "hw:hdr", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00") + mb("PFCOUNT", "hw:hdr") + mb("PFADD", "hw:hdr", "a") + mb("PFADD", "hw:hdr") +
		mb("PFCOUNT", "hw:hdr", "hw:nope") + mb("PFMERGE", "hw:hdr") + mb("GET", "hw:hdr") +
		mb("SET", "hw:enc", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff") + mb("PFCOUNT", "hw:enc") +
		mb("SET", "hw:dshort", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00") + mb("PFCOUNT", "hw:dshort") +
		mb("SET", "hw:cache", "HYLL\x01\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00") + mb("PFCOUNT", "hw:cache") + mb("PFADD", "hw:cache", "x") +
		mb("SET", "hw:over", "HYLL\x01\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x7f\xff") + mb("PFCOUNT", "hw:over") + mb("PFADD", "hw:over", "a", "b") +
		mb("PFCOUNT", "hw:over", "hw:over") + mb("PFMERGE", "hw:over2", "hw:over") +
		mb("SET", "hw:short", "HYLL\x01\x00\x00\x00\x00\x00\x00\x80\x7f\xfe") + mb("PFCOUNT", "hw:short") + mb("PFADD", "hw:short", "a", "b", "c") + mb("GET", "hw:short") +
		mb("SET", "hw:val", "HYLL\x01\x00\x00\x00\x00\x00\x00\x80\xff\x7f\xff") + mb("PFCOUNT", "hw:val") + mb("PFMERGE", "hw:val") +
		mb("SET", "hw:x", "HYLL\x01\x00\x00\x00\x00\x00\x00\x80\x40") + mb("PFADD", "hw:x", "a") + mb("GET", "hw:x") + mb("PFCOUNT", "hw:x")},
	{name: "hll dense registers", in: mb("SET", "hd:63", hllDense(0xff, "\x00\x00\x00\x00\x00\x00\x00\x80")) + mb("PFCOUNT", "hd:63") + mb("PFCOUNT", "hd:63", "hd:nope") +
		mb("SET", "hd:1", hllDense(0x41, "\x00\x00\x00\x00\x00\x00\x00\x80")) + mb("PFCOUNT", "hd:1") + mb("PFADD", "hd:1", "a", "b") + mb("PFCOUNT", "hd:1") +
		mb("SET", "hd:c", hllDense(0, "\x05\x00\x00\x00\x00\x00\x00\x00")) + mb("PFCOUNT", "hd:c") + mb("PFADD", "hd:c", "zz") + mb("PFCOUNT", "hd:c") +
		mb("PFADD", "hd:sp", "a") + mb("PFMERGE", "hd:sp", "hd:c") + mb("STRLEN", "hd:sp") + mb("PFCOUNT", "hd:sp") + mb("PFMERGE", "hd:sp2", "hd:63") + mb("PFCOUNT", "hd:sp2")},
	{name: "bitmaps in multi and watch", in: "MULTI\r\nSETBIT mw:a 3 1\r\nPFADD mw:h a b\r\nPFCOUNT mw:h\r\nPFCOUNT mw:h mw:a\r\n" +
		"PFMERGE mw:m mw:h\r\nBITOP OR mw:d mw:a mw:a\r\nBITFIELD mw:a INCRBY u4 0 3\r\nLCS mw:a mw:d\r\nGETBIT mw:a 3\r\nEXEC\r\n" +
		"PFADD mw:w a\r\nWATCH mw:w\r\nPFCOUNT mw:w\r\nMULTI\r\nPING\r\nEXEC\r\nWATCH mw:w\r\nPFCOUNT mw:w\r\nMULTI\r\nPING\r\nEXEC\r\n" +
		"WATCH mw:w\r\nPFADD mw:w a\r\nMULTI\r\nPING\r\nEXEC\r\nSETBIT mw:b 1 1\r\nWATCH mw:b\r\nSETBIT mw:b 1 1\r\nMULTI\r\nPING\r\nEXEC\r\n" +
		"WATCH mw:b\r\nSETBIT mw:b 1 0\r\nMULTI\r\nPING\r\nEXEC\r\nWATCH mw:b\r\nBITFIELD mw:b GET u8 0\r\nMULTI\r\nPING\r\nEXEC\r\n"},
	{name: "hll-sparse-max-bytes", in: mb("CONFIG", "GET", "hll-sparse-max-bytes") + mb("CONFIG", "SET", "hll-sparse-max-bytes", "x") +
		mb("CONFIG", "SET", "hll-sparse-max-bytes", "-1") + mb("CONFIG", "SET", "hll-sparse-max-bytes", "1.5") +
		mb("CONFIG", "SET", "hll-sparse-max-bytes", "+1") + mb("CONFIG", "SET", "hll-sparse-max-bytes", "9223372036854775808") +
		mb("CONFIG", "SET", "hll-sparse-max-bytes", "18446744073709551615") + mb("CONFIG", "SET", "hll-sparse-max-bytes", "1mb") +
		mb("CONFIG", "GET", "hll-sparse-max-bytes") + mb("CONFIG", "SET", "hll-sparse-max-bytes", "4KB") + mb("CONFIG", "GET", "hll-sparse-max-bytes") +
		mb("CONFIG", "SET", "hll-sparse-max-bytes", "03000") + mb("CONFIG", "GET", "hll-sparse-max-bytes") +
		mb("CONFIG", "SET", "hll-sparse-max-bytes", "3000", "hash-max-listpack-entries", "x") + mb("CONFIG", "GET", "hll-sparse-max-bytes") +
		mb("CONFIG", "SET", "hll-sparse-max-bytes", "3000")},
}

func init() { respSessions = append(respSessions, bitmapSessions...) }

// diffPair sends the same commands to redis-server and MiniKV.
type diffPair struct {
	t      *testing.T
	last   *[4][]string // the commands before, for the failure message
	redis  interface{ Do(...string) string }
	minikv interface{ Do(...string) string }
}

func (p diffPair) do(args ...string) string {
	p.t.Helper()
	want, got := p.redis.Do(args...), p.minikv.Do(args...)
	if want != got {
		p.t.Fatalf("after %q\n%q:\nredis  %q\nminikv %q", *p.last, args, want, got)
	}
	copy(p.last[:], p.last[1:])
	p.last[3] = args
	return got
}

func startDiffPair(t *testing.T) diffPair {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	return diffPair{t: t, last: new([4][]string), redis: dialRESP(t, redisAddr), minikv: dialRESP(t, rs.respAddr)}
}

// bulkValue is the payload of a bulk reply.
func bulkValue(t *testing.T, reply string) string {
	t.Helper()
	i := strings.Index(reply, "\r\n")
	if i < 0 || reply[0] != '$' {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	return reply[i+2 : len(reply)-2]
}

// TestHLLSameAsRedis PFADDs the same elements into redis-server and
// MiniKV, in batches through sparse, the promotion to dense, and dense,
// comparing every reply, every PFCOUNT and the raw GET bytes; then moves
// the strings both ways and merges them.
func TestHLLSameAsRedis(t *testing.T) {
	p := startDiffPair(t)
	r := rand.New(rand.NewPCG(15, 15))
	n := 0
	sawSparse, sawDense := false, false
	for batch := 0; n < 60000; batch++ {
		size := 1 + r.IntN(3)
		if n > 300 {
			size = 1 + r.IntN(200)
		}
		if n > 5000 {
			size = 1000 + r.IntN(3000)
		}
		args := []string{"PFADD", "h:a"}
		for range size {
			args = append(args, "el:"+strconv.Itoa(n))
			n++
		}
		p.do(args...)
		if batch%3 == 0 {
			p.do("PFCOUNT", "h:a")
		}
		v := bulkValue(t, p.do("GET", "h:a"))
		if v[4] == hll.Sparse {
			sawSparse = true
		} else {
			sawDense = true
		}
		// A value moved from Redis into MiniKV and back counts the same.
		if batch%5 == 0 {
			p.do("SET", "h:moved", v)
			p.do("PFADD", "h:moved", "extra:"+strconv.Itoa(batch), "el:1")
			p.do("PFCOUNT", "h:moved")
			p.do("GET", "h:moved")
			p.do("PFCOUNT", "h:moved", "h:a")
			p.do("PFMERGE", "h:merged", "h:moved", "h:a")
			p.do("GET", "h:merged")
		}
	}
	if !sawSparse || !sawDense {
		t.Fatalf("sparse %v dense %v: the test did not cross the promotion", sawSparse, sawDense)
	}
	// Raw bytes written by one server, counted and merged by the other.
	redisOnly, minikvOnly := p.redis, p.minikv
	for i, sz := range []int{1, 10, 100, 1000, 20000} {
		args := []string{"PFADD", "h:src" + strconv.Itoa(i)}
		for j := range sz {
			args = append(args, fmt.Sprintf("x%d-%d", i, j))
		}
		redisOnly.Do(args...)
		v := bulkValue(t, redisOnly.Do("GET", "h:src"+strconv.Itoa(i)))
		minikvOnly.Do("SET", "h:src"+strconv.Itoa(i), v)
		p.do("PFCOUNT", "h:src"+strconv.Itoa(i))
		p.do("GET", "h:src"+strconv.Itoa(i))
		p.do("PFMERGE", "h:all", "h:src"+strconv.Itoa(i))
		p.do("GET", "h:all")
		p.do("PFCOUNT", "h:all", "h:src0")
	}
	// Sparse merges that promote part way through.
	for i := range 40 {
		args := []string{"PFADD", "h:sp" + strconv.Itoa(i)}
		for j := range 20 + i*15 {
			args = append(args, fmt.Sprintf("s%d-%d", i, j))
		}
		p.do(args...)
		p.do("PFMERGE", "h:spm", "h:sp"+strconv.Itoa(i))
		p.do("GET", "h:spm")
		p.do("PFCOUNT", "h:spm")
	}
}

// TestHLLCorruptSameAsRedis sends random corruptions of valid sparse and
// dense values to both servers: every reply and the bytes left must be
// Redis's.
func TestHLLCorruptSameAsRedis(t *testing.T) {
	p := startDiffPair(t)
	r := rand.New(rand.NewPCG(1, 15))
	var seeds []string
	for _, sz := range []int{0, 3, 50, 400} {
		args := []string{"PFADD", "c:seed"}
		for j := range sz {
			args = append(args, "e"+strconv.Itoa(j))
		}
		p.do("DEL", "c:seed")
		p.do(args...)
		seeds = append(seeds, bulkValue(t, p.do("GET", "c:seed")))
	}
	seeds = append(seeds, hllDense(0, "\x00\x00\x00\x00\x00\x00\x00\x80"))
	for i := range 1500 {
		b := []byte(seeds[r.IntN(len(seeds))])
		switch r.IntN(4) {
		case 0: // flip bytes after the header
			for range 1 + r.IntN(4) {
				if len(b) > hll.HeaderSize {
					b[hll.HeaderSize+r.IntN(len(b)-hll.HeaderSize)] = byte(r.IntN(256))
				}
			}
		case 1: // truncate
			b = b[:hll.HeaderSize+r.IntN(len(b)-hll.HeaderSize+1)]
		case 2: // random opcodes
			b = b[:hll.HeaderSize]
			for range r.IntN(40) {
				b = append(b, byte(r.IntN(256)))
			}
		case 3: // append
			for range 1 + r.IntN(4) {
				b = append(b, byte(r.IntN(256)))
			}
		}
		if r.IntN(2) == 0 {
			b[15] |= 0x80
		}
		k := "c:" + strconv.Itoa(i%7)
		p.do("SET", k, string(b))
		switch r.IntN(4) {
		case 0:
			p.do("PFADD", k, "a", "b", strconv.Itoa(i), "zz"+strconv.Itoa(i))
		case 1:
			p.do("PFCOUNT", k)
		case 2:
			p.do("PFCOUNT", k, "c:seedcopy")
		case 3:
			p.do("PFMERGE", k, "c:other")
		}
		p.do("GET", k)
	}
}

// TestBitRandomSameAsRedis sends random BITCOUNT, BITPOS, BITFIELD, LCS
// and BITOP commands over random short strings to both servers.
func TestBitRandomSameAsRedis(t *testing.T) {
	p := startDiffPair(t)
	r := rand.New(rand.NewPCG(7, 15))
	idx := func() string {
		switch r.IntN(6) {
		case 0:
			return strconv.Itoa(-r.IntN(40))
		case 1:
			return strconv.Itoa(r.IntN(100))
		default:
			return strconv.Itoa(r.IntN(20) - 5)
		}
	}
	val := func() string {
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = []byte{0, 0xff, 0x0f, 0xf0, 0x80, 0x01, byte(r.IntN(256))}[r.IntN(7)]
		}
		return string(b)
	}
	types := []string{"u1", "u3", "u8", "u13", "u31", "u63", "i1", "i2", "i8", "i17", "i32", "i63", "i64"}
	nums := []string{"0", "1", "-1", "7", "-8", "127", "-128", "255", "1000", "-100000", "9223372036854775807", "-9223372036854775808", "4611686018427387904"}
	for range 4000 {
		k := "r:" + strconv.Itoa(r.IntN(3))
		if r.IntN(4) == 0 {
			p.do("SET", k, val())
		}
		switch r.IntN(7) {
		case 0:
			args := []string{"BITCOUNT", k}
			if r.IntN(4) > 0 {
				args = append(args, idx(), idx())
				if r.IntN(2) == 0 {
					args = append(args, []string{"BIT", "BYTE"}[r.IntN(2)])
				}
			}
			p.do(args...)
		case 1, 2:
			args := []string{"BITPOS", k, strconv.Itoa(r.IntN(2))}
			if n := r.IntN(4); n > 0 {
				args = append(args, idx())
				if n > 1 {
					args = append(args, idx())
				}
				if n > 2 {
					args = append(args, []string{"BIT", "BYTE"}[r.IntN(2)])
				}
			}
			p.do(args...)
		case 3, 4:
			args := []string{"BITFIELD", k}
			for range 1 + r.IntN(4) {
				off := strconv.Itoa(r.IntN(70))
				if r.IntN(4) == 0 {
					off = "#" + strconv.Itoa(r.IntN(5))
				}
				switch r.IntN(4) {
				case 0:
					args = append(args, "GET", types[r.IntN(len(types))], off)
				case 1:
					args = append(args, "SET", types[r.IntN(len(types))], off, nums[r.IntN(len(nums))])
				case 2:
					args = append(args, "INCRBY", types[r.IntN(len(types))], off, nums[r.IntN(len(nums))])
				case 3:
					args = append(args, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[r.IntN(3)])
				}
			}
			p.do(args...)
			p.do("GET", k)
		case 5:
			args := []string{"LCS", k, "r:" + strconv.Itoa(r.IntN(3))}
			if r.IntN(2) == 0 {
				args = append(args, "IDX")
			}
			if r.IntN(2) == 0 {
				args = append(args, "MINMATCHLEN", strconv.Itoa(r.IntN(3)))
			}
			if r.IntN(2) == 0 {
				args = append(args, "WITHMATCHLEN")
			}
			p.do(args...)
		case 6:
			p.do("BITOP", []string{"AND", "OR", "XOR", "NOT"}[r.IntN(4)], "r:d", k, "r:"+strconv.Itoa(r.IntN(3)))
			p.do("GET", "r:d")
		}
	}
}

// TestHLLSparseMaxSameAsRedis lowers hll-sparse-max-bytes on both
// servers: sparse values promote to dense at the same element.
func TestHLLSparseMaxSameAsRedis(t *testing.T) {
	p := startDiffPair(t)
	for _, limit := range []string{"0", "30", "100", "1kb"} {
		p.do("CONFIG", "SET", "hll-sparse-max-bytes", limit)
		p.do("DEL", "sm:a", "sm:m")
		for i := range 120 {
			p.do("PFADD", "sm:a", "e"+strconv.Itoa(i), "f"+strconv.Itoa(i*7))
			p.do("GET", "sm:a")
			if i%10 == 0 {
				p.do("PFMERGE", "sm:m", "sm:a")
				p.do("GET", "sm:m")
			}
		}
	}
}
