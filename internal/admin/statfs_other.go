//go:build !unix

package admin

import "errors"

func diskSpace(string) (free, total uint64, err error) {
	return 0, 0, errors.New("free space is not known on this system")
}
