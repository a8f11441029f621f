//go:build !linux

package vfs

// MapLog implements LogMapper; shared mappings are only used on Linux.
func (osFS) MapLog(name string, size int64) (AppendLog, error) {
	return nil, ErrMapUnsupported
}
