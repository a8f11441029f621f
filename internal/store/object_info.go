package store

// OBJECT's view of a key: what kind of value it holds, in which of
// MiniKV's representations (with Redis's name for it), and how recently
// and how often it was used.

// ObjectInfo is what Store.Object reports about a live key.
type ObjectInfo struct {
	Kind     Kind
	Encoding string // Redis's name for the representation (OBJECT ENCODING)
	Idle     int64  // seconds since the last access (OBJECT IDLETIME)
	Freq     uint8  // in LFU mode Redis's LFU counter, decayed to now (OBJECT FREQ); else the eviction walk's access count, 0-3
	Bytes    int64  // what the key is charged against the memory limit: key, value (or collection) and ItemOverhead (MEMORY USAGE)
}

// Encoding names, as OBJECT ENCODING spells them.
const (
	encNameInt       = "int"
	encNameEmbstr    = "embstr"
	encNameRaw       = "raw"
	encNameListpack  = "listpack"
	encNameIntset    = "intset"
	encNameHashtable = "hashtable"
	encNameQuicklist = "quicklist"
	encNameSkiplist  = "skiplist"
)

// embstrMax is the longest string Redis keeps in one allocation with its
// object header (OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
const embstrMax = 44

// StringEncoding is the name Redis gives a string value's encoding when
// it is stored by SET: "int" for the canonical decimal form of an int64,
// "embstr" up to 44 bytes, "raw" beyond. MiniKV keeps every string as its
// bytes; the name says what Redis would hold for the same value.
func StringEncoding(v []byte) string {
	if len(v) <= 20 {
		if _, ok := lpStringToInt64(v); ok {
			return encNameInt
		}
	}
	if len(v) <= embstrMax {
		return encNameEmbstr
	}
	return encNameRaw
}

// encodingName names the representation of a record of kind k in
// encoding enc, holding value v (a string's bytes).
func encodingName(k Kind, enc uint8, v []byte) string {
	if k == KindString {
		return StringEncoding(v)
	}
	switch enc {
	case encIntset:
		return encNameIntset
	case encBig:
		switch k {
		case KindList:
			return encNameQuicklist
		case KindZSet:
			return encNameSkiplist
		case KindStream:
			return "stream"
		default: // hash, set
			return encNameHashtable
		}
	default:
		return encNameListpack
	}
}

// Object describes the live value under key without counting it as a
// use (Redis's OBJECT looks keys up with LOOKUP_NOTOUCH).
func (s *Store) Object(key []byte) (ObjectInfo, bool) {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok {
		return ObjectInfo{}, false
	}
	k := kindOf(e.meta)
	var v []byte
	if k == KindString {
		v = sh.value(&e)
	}
	return ObjectInfo{
		Kind:     k,
		Encoding: encodingName(k, encOf(e.meta), v),
		Idle:     s.idleOf(&e, &clk),
		Freq:     s.freqOf(&e, &clk),
		Bytes:    sh.costOf(&e),
	}, true
}
