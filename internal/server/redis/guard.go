package redis

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/minikv/minikv/internal/rdb"
)

// A replica's defences against a bad stream from its primary (what
// FuzzReplicaStream feeds it): a snapshot that does not decode is refused
// before the store is emptied, so the replica keeps serving what it had;
// a malformed stream ends the link with an error that says so, which the
// link logs ("link to the primary down") before it reconnects.

// errBadSnapshot wraps the reason a primary's snapshot was refused.
var errBadSnapshot = errors.New("the primary's snapshot is not a valid RDB file; the data is kept")

// checkSnapshot decodes the snapshot file at path without storing
// anything (rdb.Check).
func checkSnapshot(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if _, err := rdb.Check(data); err != nil {
		return fmt.Errorf("%w: %v", errBadSnapshot, err)
	}
	return nil
}

// streamError says what ended the stream: the link closing, or the
// primary's bytes not being RESP commands.
func streamError(err error) error {
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) {
		return err
	}
	return fmt.Errorf("malformed replication stream from the primary: %w", err)
}
