package redis

import "github.com/minikv/minikv/internal/rdb"

// Short names for Redis's serialization primitives (internal/rdb) where
// the Redis commands build or check payloads of their own (FUNCTION DUMP
// and RESTORE carry RDB_OPCODE_FUNCTION2 records sealed as DUMP seals a
// value) and in tests.

// rdbVersion is the RDB version of DUMP payloads (Redis 7.0's).
const rdbVersion = rdb.Version

// rdbTypeString is RDB_TYPE_STRING, a string object's type byte.
const rdbTypeString = 0

func rdbAppendLen(b []byte, n uint64) []byte { return rdb.AppendLen(b, n) }
func rdbAppendString(b, s []byte) []byte     { return rdb.AppendString(b, s) }
func rdbSeal(b []byte) []byte                { return rdb.Seal(b) }
func rdbVerify(p []byte) ([]byte, bool)      { return rdb.Verify(p) }
func redisCRC(crc uint64, p []byte) uint64   { return rdb.CRC64(crc, p) }
