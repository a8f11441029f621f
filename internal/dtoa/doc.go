// Package dtoa prints doubles as Redis 7.2 prints them: AppendDouble72
// is its d2string (every double reply, and the scores a small sorted
// set's listpack holds), AppendFpconvDtoa its bare fpconv_dtoa (the
// numbers a script passes to redis.call). A standard-library leaf: the
// RESP codec, the store and the scripting core share it.
package dtoa
