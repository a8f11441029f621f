package bench

import "syscall"

// procAttr puts a server in its own process group, so a terminal's Ctrl-C
// reaches only the bench (which then stops the servers in order), and asks
// the kernel to kill it if the bench dies without cleaning up (SIGKILL,
// OOM): no server outlives its bench.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
