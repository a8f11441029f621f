// Package rdb is Redis's RDB format over the store: the serialization of
// one value that DUMP writes and RESTORE reads, and whole files, which
// SAVE and BGSAVE write, cmd/minikv loads at start, and replication's
// full resync will send and receive. It imports the store and the
// standard library only.
//
// A file (Redis 7.2 writes version 11, as this package does; every
// version from 1 to 11 is read):
//
//	+-----------+----------------------------------------------------+
//	| REDIS0011 | magic and four digits of version                   |
//	+-----------+----------------------------------------------------+
//	| 0xFA k v  | AUX: redis-ver, redis-bits, ctime, used-mem, ...   |
//	| 0xF5 code | FUNCTION2: a function library (SaveOptions hook)   |
//	| 0xFE db   | SELECTDB                                           |
//	| 0xFB n e  | RESIZEDB: keys, keys with a TTL (a hint)           |
//	| 0xFC ms   | EXPIRETIME_MS of the next key (8 B LE)             |
//	| 0xF8 / F9 | LRU idle seconds / LFU counter of the next key     |
//	| t key obj | a key: its type byte, name and object              |
//	| ...       |                                                    |
//	| 0xFF      | EOF                                                |
//	| crc64     | of everything before (8 B LE; 0: not checked)      |
//	+-----------+----------------------------------------------------+
//
// Lengths and strings (value.go):
//
//	length  00xxxxxx | 01xxxxxx xxxxxxxx | 0x80 + 4 B BE | 0x81 + 8 B BE
//	string  length + bytes, or 11xxxxxx: 0xC0/C1/C2 an 8/16/32-bit LE
//	        integer, 0xC3 an LZF-compressed string (length compressed,
//	        length uncompressed, data; lzf.go)
//
// A DUMP payload is one type byte and object, then the RDB version
// (2 B LE) and the crc64 of what precedes (8 B LE). The crc is Redis's:
// the Jones polynomial, reflected, no final xor.
//
// Objects are written as Redis 7.2 writes them (object.go): strings,
// listpack or hashtable hashes, intset, listpack or hashtable sets,
// listpack or skiplist sorted sets, quicklist-2 lists, streams of
// listpacks with the consumers' active times (stream.go, type 21; 15
// and 19 are read too); MiniKV keeps small collections in Redis's
// listpack and intset bytes, so those go out as they are. They are read
// with the older encodings Redis 7.2 still reads
// (old.go: zipmaps, ziplists, quicklists of ziplists, linked lists,
// string scores) and checked deeply on the way in: every length against
// what is left before anything is allocated for it, every listpack,
// ziplist, zipmap and intset whole, no empty collection, no repeated
// member, no NaN score. A malformed input is an error, never a panic
// (FuzzLoad, FuzzRDBDecode, FuzzStreamValue). Module types are refused
// with ErrModule; memcached flags and CAS tokens have no place
// in the format.
//
// Save and Load say how a file is made consistent and what loading does
// with other databases, expired keys and function libraries.
package rdb
