// Package archtest holds no code, only a test: imports_test.go checks the
// layering that STYLE.md's "Layout" and DESIGN.md draw (which package may
// import which), so that `go test ./...` and `make test` keep it true.
package archtest
