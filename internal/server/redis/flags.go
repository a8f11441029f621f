package redis

import "github.com/minikv/minikv/internal/replication"

// Memcached flags on the replication stream (docs/replication.md). The
// stream is Redis commands, which have no flags, so a primary's Source
// puts before the SET of a string with flags a PING whose argument
// carries them (replication.FlagsHint), which Redis applies with no
// effect; a full resync's RDB carries them as AUX fields before the keys
// (rdb.FlagsAux), which Redis ignores. A MiniKV replica's link keeps the
// flags a PING gives and hands them to the next SET it applies, only
// that one.

// takeFlagsHint keeps the flags a PING from the primary carries.
func (rc *conn) takeFlagsHint(arg []byte) {
	if f, ok := replication.ParseFlagsHint(arg); ok {
		rc.mcFlags = f
	}
}

// nextFlags returns the flags for the SET being applied and forgets
// them: 0 for every client but a replica's link to its primary.
func (rc *conn) nextFlags() uint32 {
	f := rc.mcFlags
	rc.mcFlags = 0
	return f
}
