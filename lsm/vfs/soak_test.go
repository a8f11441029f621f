package vfs

import "flag"

// make soak runs go test ./lsm/... -args -soak, which hands -soak to
// every package's test binary; vfs has no long variants, but it must accept
// the flag or its binary exits with "flag provided but not defined".
var _ = flag.Bool("soak", false, "accepted for make soak; vfs has no long tests")
