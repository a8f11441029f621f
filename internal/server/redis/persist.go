package redis

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minikv/minikv/internal/rdb"
)

// RDB persistence, as Redis 7.0 has it: SAVE and BGSAVE write the
// store to dir/dbfilename in Redis's RDB format (internal/rdb), which
// redis-server and redis-check-rdb read; save points ("save 3600 1 300
// 100") trigger a BGSAVE from a ticker; LASTSAVE and INFO persistence
// report them; dir, dbfilename and save are CONFIG parameters (and
// --dir, --dbfilename, --save flags); the save at shutdown is
// FinalSave's. Loading a file at start is cmd/minikv's (LoadRDB).
//
// MiniKV does not fork: a save takes a point-in-time copy of the store
// (rdb.Save says how, and what it costs) and writes it from a goroutine,
// for BGSAVE, or from the connection's, for SAVE, which blocks that
// client only (Redis's SAVE blocks every client). In durable mode SAVE
// and BGSAVE also checkpoint the engine, as they did before RDB files.

// savePoint is one "seconds changes" pair of the save parameter.
type savePoint struct{ secs, changes int64 }

// persistence is the RDB state of the Protocol.
type persistence struct {
	mu          sync.Mutex  // protects the fields below
	startDir    string      // the working directory at start: dir's default
	dir         string      // absolute
	dbfilename  string      // a base name
	points      []savePoint // save points; none: no periodic saves
	protected   string      // enable-protected-configs: no, yes or local
	lastSave    int64       // Unix s of the last successful save; the start before one
	lastTry     int64       // Unix s of the last background save attempt
	bgErr       error       // the last background save's error
	lastBGSecs  int64       // how long the last BGSAVE took, -1: none yet
	bgStart     time.Time   // when the running BGSAVE began
	saves       int64       // successful saves (rdb_saves)
	savedAt     uint64      // store.Changes at the last successful save (or load)
	lastHold    time.Duration
	loadedKeys  int64         // rdb_last_load_keys_loaded
	loadExpired int64         // rdb_last_load_keys_expired
	stopSaver   chan struct{} // closes the save-point ticker; nil: not running

	saveMu sync.Mutex     // one save writes the file at a time
	wg     sync.WaitGroup // the running BGSAVE and the ticker
}

// RDBConfig is the RDB persistence of the start-up flags.
type RDBConfig struct {
	Dir        string // "": the working directory
	DBFilename string // "": dump.rdb
	Save       string // save points, "seconds changes ..."; "": none
	// ProtectedConfigs is Redis's enable-protected-configs: whether
	// CONFIG SET may change dir and dbfilename ("yes"), from loopback
	// clients only ("local"), or not ("no", the default, as in Redis 7).
	ProtectedConfigs string
}

// initPersistence sets the defaults: the working directory, dump.rdb,
// no save points.
func (p *Protocol) initPersistence() {
	ps := &p.persist
	ps.startDir, _ = os.Getwd()
	ps.dir = ps.startDir
	ps.dbfilename = "dump.rdb"
	ps.protected = "no"
	ps.lastSave = p.srv.Started().Unix()
	ps.lastBGSecs = -1
	ps.savedAt = p.changes()
}

// ConfigureRDB applies the start-up flags; call it before serving. With
// save points it starts their ticker, which Close stops.
func (p *Protocol) ConfigureRDB(c RDBConfig) error {
	pairs := [][]byte{}
	if c.Dir != "" {
		pairs = append(pairs, []byte("dir"), []byte(c.Dir))
	}
	if c.DBFilename != "" {
		pairs = append(pairs, []byte("dbfilename"), []byte(c.DBFilename))
	}
	pairs = append(pairs, []byte("save"), []byte(c.Save))
	if msg := p.configSet(pairs, true); msg != "" {
		return errors.New(strings.TrimPrefix(msg, "ERR "))
	}
	switch c.ProtectedConfigs {
	case "", "no", "yes", "local":
	default:
		return errors.New("enable-protected-configs must be no, yes or local")
	}
	p.persist.mu.Lock()
	if c.ProtectedConfigs != "" {
		p.persist.protected = c.ProtectedConfigs
	}
	p.persist.mu.Unlock()
	return nil
}

// RDBPath is dir/dbfilename, the file SAVE writes.
func (p *Protocol) RDBPath() string {
	p.persist.mu.Lock()
	defer p.persist.mu.Unlock()
	return filepath.Join(p.persist.dir, p.persist.dbfilename)
}

// SavePointsSet reports whether save points are configured: the user
// asked for RDB persistence (cmd/minikv then loads dir/dbfilename at
// start).
func (p *Protocol) SavePointsSet() bool {
	p.persist.mu.Lock()
	defer p.persist.mu.Unlock()
	return len(p.persist.points) > 0
}

// LoadRDB loads the RDB file at path into the store (rdb.LoadFile) before
// serving, and counts it for INFO (rdb_last_load_keys_loaded, ...).
// Its function libraries are loaded as FUNCTION LOAD REPLACE loads them
// (function.go: the file's win over libraries of the same name).
func (p *Protocol) LoadRDB(path string) (rdb.LoadStats, error) {
	stats, err := rdb.LoadFile(path, p.st, rdb.LoadOptions{Function: p.loadRDBFunction, Databases: p.servedDatabases()})
	ps := &p.persist
	ps.mu.Lock()
	ps.loadedKeys, ps.loadExpired = stats.Keys, stats.Expired
	ps.savedAt = p.changes() // loaded keys are no changes to save
	ps.mu.Unlock()
	return stats, err
}

// Close stops the save-point ticker and waits for a running BGSAVE.
func (p *Protocol) Close() error {
	ps := &p.persist
	ps.mu.Lock()
	if ps.stopSaver != nil {
		close(ps.stopSaver)
		ps.stopSaver = nil
	}
	ps.mu.Unlock()
	ps.wg.Wait()
	p.closeReplication() // replication.go
	return nil
}

// FinalSave is the save of Redis's shutdown: with save points configured,
// the ticker is stopped, a running BGSAVE waited for and a SAVE made.
// Call it after the server has stopped serving (SIGTERM).
func (p *Protocol) FinalSave() error {
	final := p.SavePointsSet()
	_ = p.Close()
	if !final {
		return nil
	}
	p.log.Info("saving the final RDB snapshot before exiting", "path", p.RDBPath())
	return p.save(false)
}

// saveOptions are what a file holds beyond the keys: the function
// libraries (function.go).
func (p *Protocol) saveOptions() rdb.SaveOptions { return rdb.SaveOptions{Functions: p.functionCodes} }

// save writes dir/dbfilename (checkpointing the engine first in durable
// mode) and records the outcome; background says for which command.
func (p *Protocol) save(background bool) error {
	ps := &p.persist
	ps.saveMu.Lock()
	defer ps.saveMu.Unlock()
	path := p.RDBPath()
	before := p.changes()
	start := time.Now()
	var err error
	if p.st.Durable() {
		err = p.st.Save()
	}
	var stats rdb.SaveStats
	if err == nil {
		stats, err = rdb.SaveFile(path, p.st, p.saveOptions())
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if background {
		ps.bgErr = err
		ps.lastBGSecs = int64(time.Since(start).Seconds())
	}
	if err != nil {
		p.log.Warn("saving the RDB file failed", "path", path, "background", background, "err", err)
		return err
	}
	ps.lastSave = time.Now().Unix()
	ps.bgErr = nil // a good save of either kind clears the status, as Redis's rdbSave
	ps.saves++
	ps.savedAt = before
	ps.lastHold = stats.Hold
	p.log.Info("DB saved on disk", "path", path, "keys", stats.Keys, "bytes", stats.Bytes,
		"took", time.Since(start).Round(time.Millisecond).String(), "hold", stats.Hold.String())
	return nil
}

// bgsave starts a background save; false if one is running.
func (p *Protocol) bgsave() bool {
	ps := &p.persist
	if !p.bgsaving.CompareAndSwap(false, true) {
		return false
	}
	ps.mu.Lock()
	ps.bgStart = time.Now()
	ps.lastTry = ps.bgStart.Unix()
	ps.mu.Unlock()
	ps.wg.Add(1)
	go func() {
		defer ps.wg.Done()
		defer p.bgsaving.Store(false)
		_ = p.save(true) // logged and recorded by save
	}()
	return true
}

// cmdSave is SAVE: the store written to dir/dbfilename before the reply.
// It blocks this client only. A failed save answers Redis's bare "-ERR"
// and logs why.
func cmdSave(rc *conn, _ [][]byte) {
	if rc.p.bgsaving.Load() {
		rc.w.Error("ERR Background save already in progress")
		return
	}
	if err := rc.p.save(false); err != nil {
		rc.w.Error("ERR")
		return
	}
	rc.w.OK()
}

// cmdBGSave is BGSAVE [SCHEDULE]: SAVE in the background. With no other
// background work that a save would wait for (Redis's AOF rewrite child),
// SCHEDULE starts it at once, as Redis does then. Inside EXEC (whose
// view of the store rc.st is) the save starts but waits for the end of
// the transaction's hold, and the answer is Redis's "scheduled".
func cmdBGSave(rc *conn, argv [][]byte) {
	if len(argv) > 2 || len(argv) == 2 && !is(argv[1], "schedule") {
		rc.w.Error(errSyntax)
		return
	}
	if !rc.p.bgsave() {
		rc.w.Error("ERR Background save already in progress")
		return
	}
	if rc.st != rc.p.st {
		rc.w.Simple("Background saving scheduled")
		return
	}
	rc.w.Simple("Background saving started")
}

// cmdLastSave is LASTSAVE: the Unix time of the last successful save (or
// of the start, as in Redis before its first save).
func cmdLastSave(rc *conn, _ [][]byte) {
	rc.p.persist.mu.Lock()
	t := rc.p.persist.lastSave
	rc.p.persist.mu.Unlock()
	rc.w.Int(t)
}

// changes is the count of writes rdb_changes_since_last_save and the
// save points go by: in memory the writes that took a CAS token
// (store.Changes; deletes, expiries and evictions take none); in durable
// mode the writes queued to the disk, deletes included, one per key.
func (p *Protocol) changes() uint64 {
	if ds := p.st.DiskStats(); ds.Durable {
		return ds.Writes
	}
	return p.st.Changes()
}

// persistenceInfo writes INFO persistence's RDB fields, Redis 7.0's.
func (p *Protocol) persistenceInfo(field func(k string, v any)) {
	ps := &p.persist
	ps.mu.Lock()
	defer ps.mu.Unlock()
	running := p.bgsaving.Load()
	current := int64(-1)
	if running {
		current = int64(time.Since(ps.bgStart).Seconds())
	}
	status := "ok"
	if ps.bgErr != nil {
		status = "err"
	}
	field("current_cow_peak", 0) // no fork, no copy-on-write
	field("current_cow_size", 0)
	field("current_cow_size_age", 0)
	field("current_fork_perc", "0.00")
	field("current_save_keys_processed", 0)
	field("current_save_keys_total", 0)
	field("rdb_changes_since_last_save", p.changes()-ps.savedAt)
	field("rdb_bgsave_in_progress", b2i(running))
	field("rdb_last_save_time", ps.lastSave)
	field("rdb_last_bgsave_status", status)
	field("rdb_last_bgsave_time_sec", ps.lastBGSecs)
	field("rdb_current_bgsave_time_sec", current)
	field("rdb_saves", ps.saves)
	field("rdb_last_cow_size", 0)
	field("rdb_last_load_keys_expired", ps.loadExpired)
	field("rdb_last_load_keys_loaded", ps.loadedKeys)
	field("minikv_rdb_last_save_hold_us", ps.lastHold.Microseconds())
}

// runSaver is the save-point ticker: once a second, a BGSAVE when a point
// is reached (at least changes writes and secs seconds since the last
// save), as Redis's serverCron; after a failed one, not before 5 s
// (CONFIG_BGSAVE_RETRY_DELAY).
func (p *Protocol) runSaver(stop <-chan struct{}) {
	defer p.persist.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if p.saveDue(time.Now().Unix()) {
			p.bgsave()
		}
	}
}

// saveDue reports whether a save point is reached at now.
func (p *Protocol) saveDue(now int64) bool {
	ps := &p.persist
	ps.mu.Lock()
	defer ps.mu.Unlock()
	changes := int64(p.changes() - ps.savedAt)
	for _, sp := range ps.points {
		if changes >= sp.changes && now-ps.lastSave > sp.secs &&
			(now-ps.lastTry > 5 || ps.bgErr == nil) {
			return true
		}
	}
	return false
}

// persistConfigParams are dir, dbfilename, save and
// enable-protected-configs.
func persistConfigParams() []*configParam {
	return []*configParam{
		{name: "dir", get: func(rc *conn) string {
			rc.p.persist.mu.Lock()
			defer rc.p.persist.mu.Unlock()
			return rc.p.persist.dir
		}, set: setDir, fileKey: "dir", protected: true,
			fileValue: func(p *Protocol) string { // the default: not written
				p.persist.mu.Lock()
				defer p.persist.mu.Unlock()
				if p.persist.dir == p.persist.startDir {
					return ""
				}
				return p.persist.dir
			}},
		{name: "dbfilename", get: func(rc *conn) string {
			rc.p.persist.mu.Lock()
			defer rc.p.persist.mu.Unlock()
			return rc.p.persist.dbfilename
		}, set: setDBFilename, fileKey: "dbfilename", def: "dump.rdb", protected: true},
		{name: "save", get: func(rc *conn) string { return rc.p.savePoints() }, set: setSave, fileKey: "save"},
		{name: "enable-protected-configs", get: func(rc *conn) string {
			rc.p.persist.mu.Lock()
			defer rc.p.persist.mu.Unlock()
			return rc.p.persist.protected
		}, noRewrite: true},
	}
}

// savePoints is the save parameter's value.
func (p *Protocol) savePoints() string {
	p.persist.mu.Lock()
	defer p.persist.mu.Unlock()
	var parts []string
	for _, sp := range p.persist.points {
		parts = append(parts, itoa64(sp.secs), itoa64(sp.changes))
	}
	return strings.Join(parts, " ")
}

// setDir takes an existing directory (Redis chdirs to it; MiniKV keeps
// its absolute path), refused with the system's words otherwise.
func setDir(p *Protocol, v []byte) (func() string, string) {
	dir, err := filepath.Abs(string(v))
	if err != nil {
		return nil, strerror(err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, strerror(err)
	} else if !fi.IsDir() {
		return nil, "Not a directory"
	}
	return func() string {
		p.persist.mu.Lock()
		p.persist.dir = dir
		p.persist.mu.Unlock()
		return ""
	}, ""
}

// strerror is err as C's strerror words it: Go's text of the system
// error, capitalized ("No such file or directory").
func strerror(err error) string {
	s := errText(err)
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// setDBFilename takes a file name without a directory.
func setDBFilename(p *Protocol, v []byte) (func() string, string) {
	name := string(v)
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return nil, "dbfilename can't be a path, just a filename"
	}
	return func() string {
		p.persist.mu.Lock()
		p.persist.dbfilename = name
		p.persist.mu.Unlock()
		return ""
	}, ""
}

// setSave takes save points as Redis does: pairs of seconds (at least 1)
// and changes (at least 0), or "" for none. It starts or stops the
// ticker.
func setSave(p *Protocol, v []byte) (func() string, string) {
	f := strings.Fields(string(v))
	if len(f)%2 != 0 {
		return nil, "Invalid save parameters"
	}
	var points []savePoint
	for i := 0; i < len(f); i += 2 {
		secs, err1 := strconv.ParseInt(f[i], 10, 64)
		changes, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 != nil || err2 != nil || secs < 1 || changes < 0 {
			return nil, "Invalid save parameters"
		}
		points = append(points, savePoint{secs, changes})
	}
	return func() string {
		ps := &p.persist
		ps.mu.Lock()
		defer ps.mu.Unlock()
		ps.points = points
		switch {
		case len(points) > 0 && ps.stopSaver == nil:
			ps.stopSaver = make(chan struct{})
			ps.wg.Add(1)
			go p.runSaver(ps.stopSaver)
		case len(points) == 0 && ps.stopSaver != nil:
			close(ps.stopSaver)
			ps.stopSaver = nil
		}
		return ""
	}, ""
}

// protectedAllowed reports whether rc may CONFIG SET a protected
// parameter (dir, dbfilename), as Redis's enable-protected-configs says.
func (rc *conn) protectedAllowed() bool {
	rc.p.persist.mu.Lock()
	mode := rc.p.persist.protected
	rc.p.persist.mu.Unlock()
	switch mode {
	case "yes":
		return true
	case "local":
		switch a := rc.RemoteAddr().(type) {
		case *net.TCPAddr:
			return a.IP.IsLoopback()
		case *net.UnixAddr:
			return true
		}
	}
	return false
}
