package store

// Checks of a stream from an untrusted source (RESTORE's payload, an RDB
// file), for internal/rdb to refuse a bad one before anything is stored.

// StreamNodeInfo describes a node that ValidateStreamNode accepted.
type StreamNodeInfo struct {
	Live      int      // entries not deleted (at least one)
	FirstLive StreamID // the first entry not deleted
	Last      StreamID // the last entry, deleted or not
}

// ValidateStreamNode checks one node of a stream deeply, as Redis's
// streamValidateListpackIntegrity does with sanitize-dump-payload yes,
// and more: the listpack whole (lpValidate), the master entry (count,
// deleted, num-fields, the field names, the 0 terminator), then every
// entry's flags (deleted, same fields, nothing else), its ID (the
// master's plus the deltas, at least the master's and above the previous
// entry's), its fields and values and its lp-count; the deleted flags
// must add up to the master entry's counts, and at least one entry must
// be live (Redis removes a node when its last entry goes). master is the
// ID the node is keyed under. Any bytes may be given: an error, never a
// panic.
func ValidateStreamNode(lp []byte, master StreamID) (StreamNodeInfo, error) {
	live, last, err := checkStreamNode(lp, master)
	if err != nil {
		return StreamNodeInfo{}, err
	}
	if live == 0 {
		return StreamNodeInfo{}, ErrBadEncoding
	}
	info := StreamNodeInfo{Live: live, Last: last}
	it := newNodeIter(master, lp)
	for p := it.first; p >= 0; {
		flags, id, _, _, next := it.entry(p)
		if flags&streamFlagDeleted == 0 {
			info.FirstLive = id
			break
		}
		p = next
	}
	return info, nil
}

// ValidateStream checks a whole stream as RestoreStream will store it:
// every node (ValidateStreamNode), the nodes in increasing ID order with
// no entry of one at or past the next one's master ID, Length the number
// of live entries, LastID at or past every entry; groups in strictly
// increasing name order, each's PEL in strictly increasing ID order,
// consumers in strictly increasing name order, each consumer's PEL
// strictly increasing and made of IDs of the group's PEL, every one of
// which belongs to exactly one consumer.
func ValidateStream(v *StreamValue) error {
	_, err := streamFromValue(v)
	return err
}

// EstimateEntriesRead is the read counter Redis gives a group whose last
// ID is id, from the stream's counters alone (streamEstimateDistance-
// FromFirstEverEntry): what rdb.c sets for a group of an
// RDB_TYPE_STREAM_LISTPACKS value, which has no counter of its own.
func (v *StreamValue) EstimateEntriesRead(id StreamID) int64 {
	o := stream{length: v.Length, lastID: v.LastID, firstID: v.FirstID, maxDeleted: v.MaxDeletedID, entriesAdded: v.EntriesAdded}
	return o.estimateDistance(id)
}
