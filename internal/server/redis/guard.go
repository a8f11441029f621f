package redis

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/minikv/minikv/internal/rdb"
)

// A replica's defences against a bad stream from its primary (what
// FuzzReplicaStream feeds it): a snapshot that does not decode is refused
// before the store is emptied, so the replica keeps serving what it had;
// a malformed stream ends the link with an error that says so, which the
// link logs ("link to the primary down") before it reconnects.

// errBadSnapshot wraps the reason a primary's snapshot was refused.
var errBadSnapshot = errors.New("the primary's snapshot is not a valid RDB file; the data is kept")

// checkSnapshot checks the snapshot before the store is emptied for it:
// its checksum, which catches a damaged or cut transfer, and, for a file
// written without one (rdbchecksum no), a decoding without storing
// anything (rdb.Check). Decoding a checksummed file twice cost a quarter
// of a 1 M-key full resync (docs/benchmarks.md); a primary that writes a
// well-formed checksum over a file that does not decode is then caught
// by the load, as Redis's replica catches it, with the store emptied.
func checkSnapshot(data []byte, sum *rdb.CRCWriter) error {
	summed, err := rdb.CheckSum(data, sum)
	if err == nil && !summed {
		_, err = rdb.Check(data)
	}
	if err != nil {
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
