package store

import "fmt"

// Aux records: small named records a server keeps beside the keyspace
// (the Redis port's function libraries), outside the keys of either
// protocol, so no client key can collide with one and no flush, expiry
// or eviction touches them. Without a Disk they live in memory only; in
// durable mode each change is queued to the Disk like a write (the reply
// that follows waits for it through Sync), and the records are read back
// from the Disk. The Store keeps the last value of each, so that after a
// disk failure (RecoverDisk) they are written again: the failure may
// have lost one.

// SetAux sets the aux record name to rec (nil deletes it). rec is
// copied.
func (s *Store) SetAux(name string, rec []byte) {
	s.ds.mu.Lock()
	defer s.ds.mu.Unlock()
	if s.ds.aux == nil {
		s.ds.aux = make(map[string][]byte)
	}
	if rec != nil {
		rec = append([]byte(nil), rec...)
	}
	s.ds.aux[name] = rec // a delete is kept too: rewriteAuxLocked writes it again
	if s.disk != nil {
		s.disk.WriteAux(name, rec)
		s.diskWrites.Add(1)
	}
}

// Aux returns the aux record name, or nil: in durable mode as the Disk
// holds it when it was not set since the Store opened.
func (s *Store) Aux(name string) ([]byte, error) {
	s.ds.mu.Lock()
	rec, ok := s.ds.aux[name]
	s.ds.mu.Unlock()
	if ok || s.disk == nil {
		if rec == nil {
			return nil, nil
		}
		return append([]byte(nil), rec...), nil
	}
	rec, err := s.disk.ReadAux(name)
	if err != nil {
		return nil, fmt.Errorf("%w: reading aux record %q: %w", ErrDisk, name, err)
	}
	return rec, nil
}

// rewriteAuxLocked queues every aux record set since the Store opened
// again. s.ds.mu must be held.
func (s *Store) rewriteAuxLocked() {
	for name, rec := range s.ds.aux {
		s.disk.WriteAux(name, rec)
	}
}
