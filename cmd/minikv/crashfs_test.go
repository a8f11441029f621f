package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/minikv/minikv/lsm/vfs/vfstest"
)

// listenStops arms fs from the test's requests on r: a line "stop flush N"
// or "stop compaction N" stops the engine's next flush (compaction) for
// good before its Nth file operation from then on (vfstest.StopFS), which
// then says "stopped flush write 000012.sst" on stdout and lets the test
// kill the server there. N spreads the kills over the whole of the work:
// before the table is created, while it is written or synced, before the
// manifest names it, before the old log goes.
//
// The test holds the other end of the pipe for the server's life; when it
// goes away (the test binary died) the server goes too, instead of serving
// on as an orphan.
func listenStops(fs *vfstest.StopFS, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var kind string
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "stop %s %d", &kind, &n); err == nil {
			fs.Arm(kind, n)
		}
	}
	os.Exit(3)
}
