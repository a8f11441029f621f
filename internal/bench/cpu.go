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

// machineBusy is the CPU time all processes on the machine have used so far
// (user, nice, system, irq, softirq and steal from /proc/stat), or 0 when
// unavailable. Over a phase, machineBusy minus the client's and the
// server's CPU is what everything else on the machine took: the figure that
// says whether a run was disturbed.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clockTick
}
