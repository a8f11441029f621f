// Package replication is MiniKV's side of Redis's replication protocol
// (issue 39, being built): the stream a primary sends its replicas, kept
// in a Backlog so a replica that reconnects can continue (PSYNC), and made
// by a Source from the store's change feed (store.Feed).
//
// MiniKV runs commands on many goroutines at once, so it does not stream
// the commands clients sent, as Redis does from its one thread: two
// writes of one key from two connections could reach the stream in the
// other order. It streams the changes themselves, in the order the store
// made them under its shard locks, each as the Redis command that gives
// the key its new whole state (SET, RESTORE ... REPLACE, DEL, FLUSHALL,
// MULTI/EXEC around a transaction's or script's changes). A Redis replica
// applies them as it applies any primary's stream; and since each sets a
// whole state, a replica that loaded a snapshot taken while writes went on
// ends in the primary's state once it has applied the stream from a point
// before the snapshot began.
package replication
