package store

// Access is what a read changes of an item: its access time (the LFU
// word in LFU mode), its mark for the eviction walk and its fetched flag.
// Redis's CLIENT NO-TOUCH takes it before a command and puts it back
// after (AccessOf, RestoreAccess), so that the command's reads leave no
// trace.
type Access struct {
	cas      uint64
	seg, off uint32 // where the record was: a write moves it or changes its CAS
	atime    uint32
	bits     uint8 // the info byte's infoFetched and infoFreq bits
}

// accessBits are the info byte's bits a read changes.
const accessBits = infoFetched | infoFreq

// AccessOf returns the access state of the live item under key.
func (s *Store) AccessOf(key []byte) (Access, bool) {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok {
		return Access{}, false
	}
	return Access{cas: e.cas, seg: e.seg, off: e.off, atime: e.atime, bits: e.info & accessBits}, true
}

// RestoreAccess puts a back on the item under key if it is still the item
// a was taken of (the same record and CAS): reads since then leave no trace, while an
// item a write replaced keeps its own state, as a new value in Redis does.
// Another connection's read in between is undone with them.
func (s *Store) RestoreAccess(key []byte, a Access) {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok || e.cas != a.cas || e.seg != a.seg || e.off != a.off {
		return
	}
	sh.setAccessLocked(&e, e.info&^accessBits|a.bits, a.atime)
}
