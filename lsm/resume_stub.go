package lsm

// TEMPORARY stub until the engine's Resume lands (branch i37-lsm).
func (d *DB) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bgErr
}

func (d *DB) Resume() error { return d.Err() }
