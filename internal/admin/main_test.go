package admin

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: every admin
// server, data server and store a test starts must be stopped by it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
