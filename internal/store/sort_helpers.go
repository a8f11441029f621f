package store

// Atomic runs fn with every shard held, as Exclusive does, or, when s is
// already the view of an Exclusive call (a command inside EXEC), runs fn
// on s itself: a command that reads keys it only learns as it goes (SORT
// BY and GET patterns) is one step either way.
func (s *Store) Atomic(fn func(v *Store) error) error {
	if s.excl != nil {
		return fn(s)
	}
	return s.Exclusive(fn)
}
