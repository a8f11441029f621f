//go:build unix

package admin

import "golang.org/x/sys/unix"

// diskSpace returns the bytes free (to an unprivileged user) and the total
// bytes of the filesystem that holds path.
func diskSpace(path string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), uint64(st.Blocks) * uint64(st.Bsize), nil
}
