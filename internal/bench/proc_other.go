//go:build !linux

package bench

import "syscall"

// procAttr puts a server in its own process group, so a terminal's Ctrl-C
// reaches only the bench, which then stops the servers in order.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
