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

// Recyclable records: the write-ahead log's format when logs are recycled
// (Options.RecycleWAL), Pebble's "recyclable" idea. A recycled log is
// overwritten in place, so past its last record it holds its previous
// use's records (or zeros, if it was preallocated), and after power loss
// the part written since its last fsync may hold any mix of new and old
// sectors. Each record therefore says which log it belongs to, and how far
// the log was known to be durable when it was written:
//
//	+---------+-------------------+----------------------+-------------+------------+---------+
//	| crc (4) | length|1<<31 (4)  | ^(length|1<<31) (4)  | log num (4) | synced (4) | payload |
//	+---------+-------------------+----------------------+-------------+------------+---------+
//
// The masked CRC-32C covers everything after itself. log num is the low 32
// bits of the log's file number; synced is the offset up to which the log
// had been fsynced when the record was written (capped at 2^32-1). The
// high bit of the length word tells the two formats apart.
//
// Reading a recyclable log stops at the first position that does not hold
// a whole record of this log whose checksum holds: a record of another log
// (the file's previous use), zeros, or a torn write. That is the end of
// the log, unless a later record of this log says the log was synced past
// that position when it was written: then what is there was durable and
// is damaged, and reading fails with ErrCorrupt. Stale records of the
// previous use are never replayed (their log number differs), and an
// unsynced tail that reached the disk out of order is a torn tail, not
// damage. Which format a log has is recorded in the manifest
// (versionEdit.recyclableLogs), so a legacy log keeps the rules above.

const (
	recycHeaderLen = 20
	recycFlag      = 1 << 31
)

// appendLogRecord frames payload as a recyclable record of log logNum,
// written when the log was durable up to synced, and appends it to dst.
func appendLogRecord(dst, payload []byte, logNum uint64, synced int64) []byte {
	start := len(dst)
	w := uint32(len(payload)) | recycFlag
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, w)
	dst = binary.LittleEndian.AppendUint32(dst, ^w)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(logNum))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(min(synced, 1<<32-1)))
	dst = append(dst, payload...)
	c := crc32.Update(0, crcTable, dst[start+4:])
	binary.LittleEndian.PutUint32(dst[start:], crcMask(c))
	return dst
}

// maxRecordPayload bounds a record's payload: the length word keeps its
// high bit for the format.
const maxRecordPayload = recycFlag - 1

// parseRecyclable returns the recyclable record at the start of b, or
// n == 0 when b does not start with a whole one whose checksum holds.
func parseRecyclable(b []byte) (payload []byte, n int, logNum, synced uint32) {
	if len(b) < recycHeaderLen {
		return nil, 0, 0, 0
	}
	w := binary.LittleEndian.Uint32(b[4:])
	if w&recycFlag == 0 || ^w != binary.LittleEndian.Uint32(b[8:]) {
		return nil, 0, 0, 0
	}
	l := int(w &^ recycFlag)
	if l > len(b)-recycHeaderLen {
		return nil, 0, 0, 0
	}
	end := recycHeaderLen + l
	if crcMask(crc32.Update(0, crcTable, b[4:end])) != binary.LittleEndian.Uint32(b) {
		return nil, 0, 0, 0
	}
	return b[recycHeaderLen:end], end, binary.LittleEndian.Uint32(b[12:]), binary.LittleEndian.Uint32(b[16:])
}

// holdsRecyclable reports whether buf holds a recyclable record anywhere
// (minikv-lsm check guesses a log's format with it when the manifest
// cannot say).
func holdsRecyclable(buf []byte) bool {
	for p := 0; p+recycHeaderLen <= len(buf); p++ {
		if buf[p+7]&0x80 != 0 {
			if _, n, _, _ := parseRecyclable(buf[p:]); n > 0 {
				return true
			}
		}
	}
	return false
}

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
	// recyclable says the log holds recyclable records of log logNum
	// (appendLogRecord); otherwise legacy ones (appendRecord).
	recyclable bool
	logNum     uint64
	// torn is set when reading stopped at a torn tail rather than at the
	// clean end of the log; validEnd is the offset where good data ends.
	torn     bool
	validEnd int
	// clean is set with torn when the tail is no write cut short: zeros
	// (a preallocated log's unused room) or, in a recyclable log, bytes
	// holding no record of this log (its previous use's).
	clean bool
}

// next returns the next payload, or (nil, nil) at the end of the log.
func (r *recordReader) next() ([]byte, error) {
	rest := r.buf[r.off:]
	r.validEnd = r.off
	if len(rest) == 0 {
		return nil, nil
	}
	if r.recyclable {
		return r.nextRecyclable(rest)
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
			r.clean = allZero(rest)
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
		r.clean = allZero(rest)
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s offset %d: %s", ErrCorrupt, r.name, r.off, what)
}

// nextRecyclable is next for a recyclable log.
func (r *recordReader) nextRecyclable(rest []byte) ([]byte, error) {
	own := uint32(r.logNum)
	if rec, n, num, _ := parseRecyclable(rest); n > 0 && num == own {
		r.off += n
		r.validEnd = r.off
		return rec, nil
	}
	// The end of the log, or damage: look for a later record of this log
	// written once the log was synced past here.
	x := r.off
	later := false
	for p := x + 1; p+recycHeaderLen <= len(r.buf); p++ {
		b := r.buf[p:]
		if b[7]&0x80 == 0 || binary.LittleEndian.Uint32(b[12:]) != own {
			continue
		}
		_, n, _, synced := parseRecyclable(b)
		if n == 0 {
			continue
		}
		if int64(synced) > int64(x) {
			return nil, fmt.Errorf("%w: %s offset %d: %s, and the record at offset %d was written after the log was synced up to %d",
				ErrCorrupt, r.name, x, whatIsWrong(rest, own), p, synced)
		}
		later = true
		p += n - 1
	}
	r.torn = true
	r.clean = !later
	return nil, nil
}

// whatIsWrong says why b does not start with a record of log own.
func whatIsWrong(b []byte, own uint32) string {
	switch {
	case len(b) < recycHeaderLen:
		return "short header"
	case allZero(b[:recycHeaderLen]):
		return "short or zero header"
	}
	w := binary.LittleEndian.Uint32(b[4:])
	if w&recycFlag == 0 || ^w != binary.LittleEndian.Uint32(b[8:]) {
		return "inconsistent length"
	}
	if int(w&^recycFlag) > len(b)-recycHeaderLen {
		return "record runs past the end of the file"
	}
	if _, n, num, _ := parseRecyclable(b); n > 0 && num != own {
		return fmt.Sprintf("a record of an earlier log (number %d mod 2^32)", num)
	}
	return "record checksum mismatch"
}
