package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/minikv/minikv/internal/server/redis"
)

// startRDB applies the RDB flags (--dir, --dbfilename, --save,
// --enable-protected-configs) and loads a file before serving:
//
//   - --rdb-load FILE always: a missing or bad file stops the start;
//   - else dir/dbfilename when save points are set (the user asked for
//     RDB persistence, as redis-server's default "save" does) and the
//     file is there; not in durable mode, where the data directory is
//     newer than any dump and is what a restart resumes.
//
// Without either, the start is today's: nothing is read.
func startRDB(p *redis.Protocol, cfg *config, log *slog.Logger) error {
	if err := p.ConfigureRDB(redis.RDBConfig{Dir: cfg.Dir, DBFilename: cfg.DBFilename, Save: cfg.Save,
		ProtectedConfigs: cfg.ProtectedConfig}); err != nil {
		return fmt.Errorf("rdb: %w", err)
	}
	path := cfg.RDBLoad
	if path == "" && p.SavePointsSet() && cfg.DataDir == "" {
		path = p.RDBPath()
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	if path == "" {
		return nil
	}
	start := time.Now()
	stats, err := p.LoadRDB(path)
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	log.Info("DB loaded from disk", "path", path, "keys", stats.Keys, "expired", stats.Expired,
		"rdb_version", stats.Version, "redis_ver", stats.Aux["redis-ver"],
		"took", time.Since(start).Round(time.Millisecond).String())
	for db, n := range stats.OtherDBs {
		log.Warn("keys of a database past --databases (or of a database other than 0 in cluster mode) not loaded", "db", db, "keys", n)
	}
	if stats.Functions > 0 {
		log.Info("function libraries loaded from the RDB file", "libraries", stats.Functions)
	}
	return nil
}
