package lsm

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/minikv/minikv/lsm/vfs"
)

// Record framing, shared by the write-ahead log and the manifest:
//
//	+---------+------------+-------------+-------------------+
//	| crc (4) | length (4) | ^length (4) | payload (length)  |
//	+---------+------------+-------------+-------------------+
//
// The masked CRC-32C covers the two length words and the payload. The length
// is stored twice (once inverted) so that a damaged length is recognised as
// damage instead of being mistaken for a record cut short by a crash.
//
// Reading stops cleanly at a torn tail — a header or payload cut short by the
// end of the file, or a bad record after which the log holds only zeros —
// because that is what an interrupted append leaves behind: write(2) cut
// short leaves a short file, and a mapped log (Options.MappedWAL, written in
// address order, see vfs.mappedLog) is preallocated with zeros, so a kill -9
// in the middle of a copy leaves a prefix of the group followed by zeros,
// which can end inside a record's header. Any other damage (a bad checksum
// or inconsistent lengths with data after the record) is reported as
// ErrCorrupt: a flipped byte never makes the log silently shorter in the
// middle.

const recordHeaderLen = 12

// appendRecord frames payload and appends it to dst.
func appendRecord(dst, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, ^uint32(len(payload)))
	dst = append(dst, payload...)
	c := crc32.Update(0, crcTable, dst[start+4:])
	binary.LittleEndian.PutUint32(dst[start:], crcMask(c))
	return dst
}

// readAll reads a whole file.
func readAll(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// recordReader iterates over the records of a log held in memory.
type recordReader struct {
	buf  []byte
	off  int
	name string
	// torn is set when reading stopped at a torn tail rather than at the
	// clean end of the log; validEnd is the offset where good data ends.
	torn     bool
	validEnd int
}

// next returns the next payload, or (nil, nil) at the end of the log.
func (r *recordReader) next() ([]byte, error) {
	rest := r.buf[r.off:]
	r.validEnd = r.off
	if len(rest) == 0 {
		return nil, nil
	}
	if len(rest) < recordHeaderLen || allZero(rest[:recordHeaderLen]) {
		return r.tornOrCorrupt(rest, "short or zero header")
	}
	n := binary.LittleEndian.Uint32(rest[4:])
	if ^n != binary.LittleEndian.Uint32(rest[8:]) {
		return r.tornOrCorrupt(rest, "inconsistent length")
	}
	if uint64(n) > uint64(len(rest)-recordHeaderLen) {
		// The payload runs past the end of the file: an append cut short.
		r.torn = true
		return nil, nil
	}
	end := recordHeaderLen + int(n)
	want := binary.LittleEndian.Uint32(rest)
	if crcMask(crc32.Update(0, crcTable, rest[4:end])) != want {
		if end == len(rest) || allZero(rest[end:]) {
			r.torn = true
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s offset %d: record checksum mismatch", ErrCorrupt, r.name, r.off)
	}
	r.off += end
	r.validEnd = r.off
	return rest[recordHeaderLen:end], nil
}

// tornOrCorrupt judges a record whose header is short, zero or
// inconsistent: torn when nothing was written after the header's place.
func (r *recordReader) tornOrCorrupt(rest []byte, what string) ([]byte, error) {
	if len(rest) < recordHeaderLen || allZero(rest[recordHeaderLen:]) {
		r.torn = true
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s offset %d: %s", ErrCorrupt, r.name, r.off, what)
}
