package store

// TEMPORARY STUBS: the store implementation replaces this whole file.

import "time"

// ItemOverhead is the per-item memory cost beyond key and value bytes.
const ItemOverhead = 0

// Store is the sharded in-memory cache.
type Store struct{}

// New builds a Store and starts its sweeper.
func New(cfg Config) *Store { return &Store{} }

// Close stops the sweeper and waits for it.
func (s *Store) Close() error { return nil }

// Get returns a live item and refreshes its recency.
func (s *Store) Get(key []byte) (Item, bool) { return Item{}, false }

// GetAndTouch returns a live item after setting its deadline (gat).
func (s *Store) GetAndTouch(key []byte, deadline int64) (Item, bool) { return Item{}, false }

// Touch sets a live item's deadline.
func (s *Store) Touch(key []byte, deadline int64) bool { return false }

// Store writes value under key according to mode and returns the new CAS.
func (s *Store) Store(mode Mode, key, value []byte, flags uint32, deadline int64, cas uint64) (uint64, error) {
	return 0, nil
}

// Delete removes a live item.
func (s *Store) Delete(key []byte) error { return ErrNotFound }

// Incr adds (or with decr subtracts) delta with memcached's rules.
func (s *Store) Incr(key []byte, delta uint64, decr bool) (uint64, uint64, error) { return 0, 0, nil }

// FlushAll invalidates every item stored at or before at (Unix ns).
func (s *Store) FlushAll(at int64) {}

// Stats returns the counters.
func (s *Store) Stats() Stats { return Stats{} }

// MaxValueLen is the largest value storable under a key of keyLen bytes.
func (s *Store) MaxValueLen(keyLen int) int { return 0 }

// Deadline converts a memcached exptime to a deadline.
func Deadline(exptime int64, now time.Time) int64 { return 0 }
