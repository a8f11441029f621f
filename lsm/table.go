package lsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/minikv/minikv/lsm/vfs"
)

// SSTable format (version 1):
//
//	+--------------+-----+--------------+--------------+-------------+--------+
//	| data block 0 | ... | data block n | filter block | index block | footer |
//	+--------------+-----+--------------+--------------+-------------+--------+
//
// Every block is followed by its 4-byte masked CRC-32C. Data blocks hold
// internal keys in order (see block.go). The index block has one entry per
// data block, keyed by that block's last key, with the value
// uvarint(offset) uvarint(length) (length excludes the CRC). The filter block
// is a blocked bloom filter over the table's user keys (see bloom.go). The
// footer is fixed-size so a reader finds everything from the end of the file:
//
//	+-------------+-------------+------------+------------+-------------+---------+----------+
//	| filter off  | filter len  | index off  | index len  | version (4) | crc (4) | magic (8)|
//	| (8)         | (8)         | (8)        | (8)        |             |         |          |
//	+-------------+-------------+------------+------------+-------------+---------+----------+
//
// The footer CRC covers the 36 bytes before it. A reader rejects an unknown
// version, so the format can change (a Ribbon filter, compression) without
// old binaries misreading new files.

const (
	tableMagic     = 0x6b764c534d76316b // "kvLSMv1k"
	tableVersion   = 1
	footerLen      = 48
	readaheadBytes = 64 << 10
)

type blockHandle struct{ off, n uint64 }

// tableWriter builds one SSTable, buffering writes so each data block is not
// a system call of its own.
type tableWriter struct {
	f          vfs.File
	bw         *bufio.Writer
	off        uint64
	data       blockBuilder
	index      blockBuilder
	blockSize  int
	bitsPerKey int
	hashes     []uint64
	lastUser   []byte
	hasUser    bool
	meta       *fileMeta
	handleBuf  []byte
	err        error
}

func newTableWriter(f vfs.File, num uint64, o *Options) *tableWriter {
	return &tableWriter{
		f:          f,
		bw:         bufio.NewWriterSize(f, 256<<10),
		data:       blockBuilder{interval: 16},
		index:      blockBuilder{interval: 1},
		blockSize:  o.BlockSize,
		bitsPerKey: o.BloomBitsPerKey,
		meta:       &fileMeta{num: num},
	}
}

func (w *tableWriter) add(ikey, value []byte) {
	if w.data.entries > 0 && w.data.estimatedSize()+len(ikey)+len(value) > w.blockSize {
		w.flushBlock()
	}
	if w.meta.entries == 0 {
		w.meta.smallest = append([]byte(nil), ikey...)
	}
	uk := userKey(ikey)
	if w.bitsPerKey > 0 && (!w.hasUser || !bytes.Equal(uk, w.lastUser)) {
		w.hashes = append(w.hashes, hash64(uk))
		w.lastUser = append(w.lastUser[:0], uk...)
		w.hasUser = true
	}
	switch kindOf(trailer(ikey)) {
	case kindDelete:
		w.meta.deletes++
	case kindSetExpiring:
		w.meta.expiring++
	}
	w.data.add(ikey, value)
	w.meta.entries++
}

// size is an estimate of the file size so far, for splitting outputs.
func (w *tableWriter) size() uint64 { return w.off + uint64(w.data.estimatedSize()) }

func (w *tableWriter) writeBlock(b []byte) blockHandle {
	h := blockHandle{off: w.off, n: uint64(len(b))}
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
	var crc [4]byte
	binary.LittleEndian.PutUint32(crc[:], blockChecksum(b))
	if w.err == nil {
		_, w.err = w.bw.Write(crc[:])
	}
	w.off += uint64(len(b)) + blockTrailerLen
	return h
}

func (w *tableWriter) flushBlock() {
	h := w.writeBlock(w.data.finish())
	w.handleBuf = binary.AppendUvarint(w.handleBuf[:0], h.off)
	w.handleBuf = binary.AppendUvarint(w.handleBuf, h.n)
	w.index.add(w.data.lastKey, w.handleBuf)
	w.meta.largest = append(w.meta.largest[:0], w.data.lastKey...)
	w.data.reset()
}

// finish writes the filter, index and footer, syncs and closes the file.
func (w *tableWriter) finish() (*fileMeta, error) {
	if w.data.entries > 0 {
		w.flushBlock()
	}
	var fh blockHandle
	if w.bitsPerKey > 0 {
		fh = w.writeBlock(appendBloom(nil, w.hashes, w.bitsPerKey))
	}
	ih := w.writeBlock(w.index.finish())
	var ft [footerLen]byte
	binary.LittleEndian.PutUint64(ft[0:], fh.off)
	binary.LittleEndian.PutUint64(ft[8:], fh.n)
	binary.LittleEndian.PutUint64(ft[16:], ih.off)
	binary.LittleEndian.PutUint64(ft[24:], ih.n)
	binary.LittleEndian.PutUint32(ft[32:], tableVersion)
	binary.LittleEndian.PutUint32(ft[36:], blockChecksum(ft[:36]))
	binary.LittleEndian.PutUint64(ft[40:], tableMagic)
	if w.err == nil {
		_, w.err = w.bw.Write(ft[:])
	}
	w.off += footerLen
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err == nil {
		w.err = w.f.Sync()
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	w.meta.size = w.off
	return w.meta, w.err
}

// abandon closes the file without finishing it; the caller removes it.
func (w *tableWriter) abandon() { _ = w.f.Close() }

// table is an open SSTable. Its index and filter stay in memory for the
// table's lifetime; data blocks go through the block cache.
type table struct {
	num       uint64
	f         vfs.File
	size      uint64
	index     []byte
	indexOff  uint64 // for errors
	filter    bloomFilter
	hasFilter bool
	cache     *blockCache
}

// corruptf reports damage in table num, naming the file as it appears in
// the data directory, so the operator knows which file to look at.
func corruptf(num uint64, off uint64, format string, args ...any) error {
	return fmt.Errorf("%w: %s offset %d: %s", ErrCorrupt, tableName(num), off, fmt.Sprintf(format, args...))
}

func openTable(fs vfs.FS, path string, num uint64, cache *blockCache) (*table, error) {
	return openTableSized(fs, path, num, 0, cache)
}

// openTableSized opens a table the manifest says is want bytes long (0: no
// expectation). A file of another size was cut short or grew after it was
// written, and is reported as damage before its footer is even read.
func openTableSized(fs vfs.FS, path string, num, want uint64, cache *blockCache) (*table, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	if want > 0 {
		size, err := f.Size()
		if err == nil && uint64(size) != want {
			err = corruptf(num, uint64(size), "file is %d bytes, the manifest says %d (truncated or overwritten)", size, want)
		}
		if err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	t, err := loadTable(f, num, cache)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return t, nil
}

// loadTable reads and verifies the footer, the index block (every entry of
// it, and that each data block handle lies inside the data area) and the
// filter block. Data blocks are verified when they are read: a damaged one
// fails the Get or iterator that reaches it (see the package doc).
func loadTable(f vfs.File, num uint64, cache *blockCache) (*table, error) {
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("lsm: %s: %w", tableName(num), err)
	}
	if size < footerLen {
		return nil, corruptf(num, 0, "file too short for a footer (%d bytes)", size)
	}
	var ft [footerLen]byte
	if _, err := f.ReadAt(ft[:], size-footerLen); err != nil {
		return nil, fmt.Errorf("lsm: read %s: %w", tableName(num), err)
	}
	if binary.LittleEndian.Uint64(ft[40:]) != tableMagic {
		return nil, corruptf(num, uint64(size-footerLen), "bad magic number in footer")
	}
	if binary.LittleEndian.Uint32(ft[36:]) != blockChecksum(ft[:36]) {
		return nil, corruptf(num, uint64(size-footerLen), "checksum mismatch in footer")
	}
	if v := binary.LittleEndian.Uint32(ft[32:]); v != tableVersion {
		return nil, fmt.Errorf("lsm: %s has unsupported format version %d", tableName(num), v)
	}
	t := &table{num: num, f: f, size: uint64(size), cache: cache}
	fh := blockHandle{binary.LittleEndian.Uint64(ft[0:]), binary.LittleEndian.Uint64(ft[8:])}
	ih := blockHandle{binary.LittleEndian.Uint64(ft[16:]), binary.LittleEndian.Uint64(ft[24:])}
	if t.index, err = t.readRaw(ih, "index"); err != nil {
		return nil, err
	}
	t.indexOff = ih.off
	dataEnd := ih.off
	if fh.n > 0 {
		dataEnd = fh.off
	}
	if err := checkIndex(num, ih.off, t.index, dataEnd); err != nil {
		return nil, err
	}
	if fh.n > 0 {
		fb, err := t.readRaw(fh, "filter")
		if err != nil {
			return nil, err
		}
		if t.filter, t.hasFilter = decodeBloom(fb); !t.hasFilter {
			return nil, corruptf(num, fh.off, "bad filter block")
		}
	}
	return t, nil
}

// checkIndex walks a whole index block (one entry per data block, so a few
// thousand at most): keys must ascend and each handle must point inside the
// data area, after the block before it. A damaged index would otherwise hide
// data blocks from reads without any error.
func checkIndex(num, off uint64, index []byte, dataEnd uint64) error {
	var it blockIter
	if it.init(index) != nil {
		return corruptf(num, off, "bad index block")
	}
	var prev []byte
	var next uint64 // where the next data block may start
	n := 0
	for ok := it.first(); ok; ok = it.nextEntry() {
		if prev != nil && compareInternal(prev, it.key) >= 0 {
			return corruptf(num, off, "index block keys out of order at entry %d", n)
		}
		prev = append(prev[:0], it.key...)
		h, ok := decodeHandle(it.val)
		if !ok || h.off < next || h.off > dataEnd || dataEnd-h.off < h.n || dataEnd-h.off-h.n < blockTrailerLen {
			return corruptf(num, off, "index block entry %d points outside the data blocks", n)
		}
		next = h.off + h.n + blockTrailerLen
		n++
	}
	if it.err != nil || n == 0 {
		return corruptf(num, off, "bad index block")
	}
	return nil
}

// inFile reports whether block h and its checksum lie inside the file,
// written so that handles near 2^64 cannot wrap around the check.
func (t *table) inFile(h blockHandle) bool {
	return h.n <= t.size && h.off <= t.size-h.n && t.size-h.n-h.off >= blockTrailerLen
}

// readRaw reads and verifies one block, bypassing the cache. what names the
// kind of block ("data", "index", "filter") for the error.
func (t *table) readRaw(h blockHandle, what string) ([]byte, error) {
	if !t.inFile(h) {
		return nil, corruptf(t.num, h.off, "%s block handle beyond end of file", what)
	}
	buf := make([]byte, h.n+blockTrailerLen)
	if _, err := t.f.ReadAt(buf, int64(h.off)); err != nil && err != io.EOF {
		return nil, fmt.Errorf("lsm: read %s: %w", tableName(t.num), err)
	}
	return verifyBlock(t.num, h, buf, what)
}

func verifyBlock(num uint64, h blockHandle, buf []byte, what string) ([]byte, error) {
	b := buf[:h.n]
	if binary.LittleEndian.Uint32(buf[h.n:]) != blockChecksum(b) {
		return nil, corruptf(num, h.off, "checksum mismatch in %s block", what)
	}
	return b, nil
}

// readBlock returns a verified data block, from the cache when it can.
func (t *table) readBlock(h blockHandle) ([]byte, error) {
	if t.cache == nil {
		return t.readRaw(h, "data")
	}
	k := cacheKey{t.num, h.off}
	if b := t.cache.get(k); b != nil {
		return b, nil
	}
	b, err := t.readRaw(h, "data")
	if err != nil {
		return nil, err
	}
	t.cache.put(k, b)
	return b, nil
}

func decodeHandle(v []byte) (blockHandle, bool) {
	off, n1 := binary.Uvarint(v)
	if n1 <= 0 {
		return blockHandle{}, false
	}
	n, n2 := binary.Uvarint(v[n1:])
	if n2 <= 0 {
		return blockHandle{}, false
	}
	return blockHandle{off, n}, true
}

// get looks up the newest entry for ukey with sequence number <= seq. h is
// hash64(ukey), computed once per lookup for every table's filter.
func (t *table) get(ukey []byte, h uint64, seq uint64, bloomUseful *int64) (kind, []byte, bool, error) {
	if t.hasFilter && !t.filter.mayContain(h) {
		*bloomUseful++
		return 0, nil, false, nil
	}
	var ii blockIter
	if ii.init(t.index) != nil {
		return 0, nil, false, corruptf(t.num, t.indexOff, "bad index block")
	}
	if !ii.seekUser(ukey, seq) {
		if ii.err != nil {
			return 0, nil, false, corruptf(t.num, t.indexOff, "bad index block entry")
		}
		return 0, nil, false, nil
	}
	bh, ok := decodeHandle(ii.val)
	if !ok {
		return 0, nil, false, corruptf(t.num, t.indexOff, "bad block handle in index block")
	}
	b, err := t.readBlock(bh)
	if err != nil {
		return 0, nil, false, err
	}
	var bi blockIter
	if bi.init(b) != nil {
		return 0, nil, false, corruptf(t.num, bh.off, "bad data block")
	}
	if !bi.seekUser(ukey, seq) {
		if bi.err != nil {
			return 0, nil, false, corruptf(t.num, bh.off, "bad data block entry")
		}
		return 0, nil, false, nil
	}
	if !bytes.Equal(userKey(bi.key), ukey) {
		return 0, nil, false, nil
	}
	if !entryOK(bi.key, bi.val) {
		return 0, nil, false, corruptf(t.num, bh.off, "bad entry kind or expiry")
	}
	return kindOf(trailer(bi.key)), bi.val, true, nil
}

// entryOK reports whether an entry's kind is known and, for an expiring
// value, whether the value holds its 8-byte expiry: what the readers above
// a table take for granted. (Block decoding already ensures the key holds a
// trailer.)
func entryOK(ikey, value []byte) bool {
	switch kindOf(trailer(ikey)) {
	case kindSet, kindDelete:
		return true
	case kindSetExpiring:
		return len(value) >= 8
	}
	return false
}

func (t *table) close() error { return t.f.Close() }

// tableIter iterates over a whole table. For sequential scans (compactions,
// fillCache false) it reads ahead in large chunks and leaves the cache alone.
type tableIter struct {
	t         *table
	index     blockIter
	data      blockIter
	fillCache bool
	blockOff  uint64 // offset of the current data block, for errors
	ra        []byte // read-ahead buffer
	raOff     uint64
	err       error
}

func newTableIter(t *table, fillCache bool) *tableIter {
	it := &tableIter{t: t, fillCache: fillCache}
	if it.index.init(t.index) != nil {
		it.err = corruptf(t.num, t.indexOff, "bad index block")
	}
	return it
}

func (it *tableIter) loadBlock() bool {
	bh, ok := decodeHandle(it.index.val)
	if !ok {
		it.err = corruptf(it.t.num, it.t.indexOff, "bad block handle in index block")
		return false
	}
	var b []byte
	var err error
	if it.fillCache {
		b, err = it.t.readBlock(bh)
	} else {
		b, err = it.readAhead(bh)
	}
	if err != nil {
		it.err = err
		return false
	}
	it.blockOff = bh.off
	if it.data.init(b) != nil {
		it.err = corruptf(it.t.num, bh.off, "bad data block")
		return false
	}
	return true
}

func (it *tableIter) readAhead(h blockHandle) ([]byte, error) {
	if !it.t.inFile(h) {
		return nil, corruptf(it.t.num, h.off, "data block handle beyond end of file")
	}
	end := h.off + h.n + blockTrailerLen
	if h.off < it.raOff || end > it.raOff+uint64(len(it.ra)) {
		n := max(uint64(readaheadBytes), h.n+blockTrailerLen)
		n = min(n, it.t.size-h.off)
		if uint64(cap(it.ra)) < n {
			it.ra = make([]byte, n)
		}
		it.ra = it.ra[:n]
		if _, err := it.t.f.ReadAt(it.ra, int64(h.off)); err != nil && err != io.EOF {
			return nil, fmt.Errorf("lsm: read %s: %w", tableName(it.t.num), err)
		}
		it.raOff = h.off
	}
	return verifyBlock(it.t.num, h, it.ra[h.off-it.raOff:end-it.raOff], "data")
}

// settle moves to the next block while the current one is exhausted, and
// checks the entry it lands on.
func (it *tableIter) settle(ok bool) bool {
	for !ok {
		if it.data.err != nil {
			it.err = corruptf(it.t.num, it.blockOff, "bad data block entry")
			return false
		}
		if it.err != nil || !it.index.nextEntry() || !it.loadBlock() {
			if it.index.err != nil && it.err == nil {
				it.err = corruptf(it.t.num, it.t.indexOff, "bad index block entry")
			}
			return false
		}
		ok = it.data.first()
	}
	if !entryOK(it.data.key, it.data.val) {
		it.err = corruptf(it.t.num, it.blockOff, "bad entry kind or expiry")
		return false
	}
	return true
}

func (it *tableIter) first() bool {
	it.data.valid = false // until a block is loaded and positioned
	if it.err != nil || !it.index.first() || !it.loadBlock() {
		if it.index.err != nil && it.err == nil {
			it.err = corruptf(it.t.num, it.t.indexOff, "bad index block entry")
		}
		return false
	}
	return it.settle(it.data.first())
}

func (it *tableIter) seekGE(ikey []byte) bool {
	it.data.valid = false // until a block is loaded and positioned
	if it.err != nil || !it.index.seekGE(ikey, compareInternal) || !it.loadBlock() {
		if it.index.err != nil && it.err == nil {
			it.err = corruptf(it.t.num, it.t.indexOff, "bad index block entry")
		}
		return false
	}
	return it.settle(it.data.seekGE(ikey, compareInternal))
}

func (it *tableIter) next() bool {
	if it.err != nil {
		return false
	}
	return it.settle(it.data.nextEntry())
}

// settleBack is settle for reverse iteration: it moves to the last entry
// of the previous block while the current one is exhausted.
func (it *tableIter) settleBack(ok bool) bool {
	for !ok {
		if it.data.err != nil {
			it.err = corruptf(it.t.num, it.blockOff, "bad data block entry")
			return false
		}
		if it.err != nil || !it.index.prev() || !it.loadBlock() {
			if it.index.err != nil && it.err == nil {
				it.err = corruptf(it.t.num, it.t.indexOff, "bad index block entry")
			}
			return false
		}
		ok = it.data.last()
	}
	if !entryOK(it.data.key, it.data.val) {
		it.err = corruptf(it.t.num, it.blockOff, "bad entry kind or expiry")
		return false
	}
	return true
}

func (it *tableIter) last() bool {
	it.data.valid = false // until a block is loaded and positioned
	if it.err != nil || !it.index.last() || !it.loadBlock() {
		if it.index.err != nil && it.err == nil {
			it.err = corruptf(it.t.num, it.t.indexOff, "bad index block entry")
		}
		return false
	}
	return it.settleBack(it.data.last())
}

// seekLT positions at the last entry < ikey: in the first block whose last
// key is >= ikey, or else at the table's last entry.
func (it *tableIter) seekLT(ikey []byte) bool {
	it.data.valid = false // until a block is loaded and positioned
	if it.err != nil {
		return false
	}
	if !it.index.seekGE(ikey, compareInternal) {
		if it.index.err != nil {
			it.err = corruptf(it.t.num, it.t.indexOff, "bad index block entry")
			return false
		}
		return it.last()
	}
	if !it.loadBlock() {
		return false
	}
	return it.settleBack(it.data.seekLT(ikey, compareInternal))
}

func (it *tableIter) prev() bool {
	if it.err != nil {
		return false
	}
	return it.settleBack(it.data.prev())
}

func (it *tableIter) valid() bool   { return it.err == nil && it.data.valid }
func (it *tableIter) key() []byte   { return it.data.key }
func (it *tableIter) value() []byte { return it.data.val }
func (it *tableIter) error() error  { return it.err }
func (it *tableIter) close() error  { return nil }
