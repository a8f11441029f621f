package memcache

// Request is one parsed command. Byte slices alias the Reader's buffers and
// stay valid only until the next call to Read.
//
// When Read returns an error that has a reply, Command and Noreply are set
// (the server needs both to decide whether and what to answer); the other
// fields hold whatever was parsed before the error. After ErrTooLarge and
// ErrBadChunk every field but Value is set.
type Request struct {
	Command    Command
	Keys       [][]byte // retrieval: the keys in order; other keyed commands: Keys[0]
	Flags      uint32
	Exptime    int64 // set family, touch, gat/gats, flush_all delay
	HasExptime bool  // flush_all: a delay was given
	Bytes      int   // storage: declared data length
	CAS        uint64
	Delta      uint64
	Value      []byte   // storage: the data block without its CRLF
	Noreply    bool     // classic noreply: suppress every reply to this command
	Args       [][]byte // stats arguments, verbosity level, auth token
	Meta       Meta     // meta commands: flags in request order and their tokens

	hasData bool // ms: the length is known, so the data block is read or swallowed
}

// Key is the first key of the request (nil when there is none).
func (r *Request) Key() []byte {
	if len(r.Keys) == 0 {
		return nil
	}
	return r.Keys[0]
}

// Reset clears the request and keeps the capacity of Keys and Args, so a
// Request reused across Read calls does not allocate.
//
// Meta (200 bytes) is cleared only after a meta command, so the classic
// commands' hot path does not pay for zeroing it: it is meaningful only
// when Command is a meta command.
func (r *Request) Reset() {
	clear(r.Keys) // drop references into old buffers
	clear(r.Args)
	if r.Command.IsMeta() {
		r.Meta = Meta{}
	}
	keys, args := r.Keys[:0], r.Args[:0]
	r.Command, r.Keys, r.Flags, r.Exptime, r.HasExptime = CmdNone, keys, 0, 0, false
	r.Bytes, r.CAS, r.Delta, r.Value, r.Noreply = 0, 0, 0, nil, false
	r.Args, r.hasData = args, false
}
