package lsm

import (
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// engineFiles is what a small database on MemFS leaves behind, as the
// engine's own writers produced it: the fuzz targets start from real
// structure instead of hoping to stumble on a valid CRC.
type engineFiles struct {
	wal      []byte   // the live log: records of batches
	manifest []byte   // records of version edits, with tables added
	walRecs  [][]byte // the payloads of wal (batches)
	edits    [][]byte // the payloads of manifest (encoded edits)
}

func makeEngineFiles(tb testing.TB) engineFiles {
	tb.Helper()
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, DisableAutoCompaction: true, BlockSize: 256})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	must := func(err error) {
		if err != nil {
			tb.Helper()
			tb.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		must(db.Put(corruptionKey(i), corruptionValue(i)))
	}
	must(db.Flush()) // a table, so the manifest records an addition
	must(db.PutExpiring([]byte("exp"), []byte("soon"), time.Unix(2e9, 0)))
	must(db.Delete(corruptionKey(3)))
	b := NewBatch()
	b.Put([]byte("a"), []byte("1"))
	b.Delete([]byte("b"))
	b.PutExpiring([]byte("c"), nil, time.Unix(1, 0))
	b.Put(nil, nil)
	must(db.Apply(b))
	image := fs.CrashClone(true)
	var ef engineFiles
	for _, n := range image.Names() {
		buf, err := readAll(image, n)
		must(err)
		switch {
		case strings.HasSuffix(n, ".log") && len(buf) > 0:
			ef.wal = buf
		case strings.Contains(n, "MANIFEST-"):
			ef.manifest = append(ef.manifest, buf...)
		}
	}
	if ef.wal == nil || ef.manifest == nil {
		tb.Fatalf("no log or manifest among %v", image.Names())
	}
	ef.walRecs = readRecords(tb, ef.wal)
	ef.edits = readRecords(tb, ef.manifest)
	return ef
}

func readRecords(tb testing.TB, log []byte) [][]byte {
	tb.Helper()
	r := recordReader{buf: log}
	var out [][]byte
	for {
		rec, err := r.next()
		if err != nil {
			tb.Fatal(err)
		}
		if rec == nil {
			return out
		}
		out = append(out, rec)
	}
}
