package redis

import globs "github.com/minikv/minikv/internal/glob"

// glob is a compiled Redis glob pattern (internal/glob), under the names
// this package's callers use.
type glob globs.Pattern

func compileGlob(p []byte) *glob { return (*glob)(globs.Compile(p)) }

func (g *glob) match(s []byte) bool { return (*globs.Pattern)(g).Match(s) }
