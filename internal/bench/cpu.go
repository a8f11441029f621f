package bench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times. It is 100 on
// every Linux architecture Go supports.
const clockTick = 100

// pidCPU is the user+system CPU time of process pid, from /proc/<pid>/stat
// (0 when unavailable). Its resolution is 10 ms, enough for runs of seconds.
func pidCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may contain spaces; fields after its
	// closing parenthesis are space-separated. utime and stime are fields
	// 14 and 15, i.e. the 12th and 13th after the parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stt, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+stt) * time.Second / clockTick
}
