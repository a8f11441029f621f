package acl

import (
	"crypto/subtle"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// User is one ACL user. Its rules are swapped whole (ACL SETUSER), so a
// connection authenticated as the user sees each change at once, as in
// Redis, where a connection points at the user itself.
type User struct {
	Name    string
	rules   atomic.Pointer[Rules]
	deleted atomic.Bool
}

// Rules are the user's current rules.
func (u *User) Rules() *Rules { return u.rules.Load() }

// Deleted reports whether ACL DELUSER (or ACL LOAD) removed the user: its
// connections are closed.
func (u *User) Deleted() bool { return u.deleted.Load() }

func newUser(name string, r *Rules) *User {
	u := &User{Name: name}
	r.finish()
	u.rules.Store(r)
	return u
}

// Users is the server's user table, shared by both ports.
type Users struct {
	mu        sync.Mutex
	users     map[string]*User
	reqPass   string // requirepass as last set
	def       *User
	pubsubAll bool // acl-pubsub-default allchannels

	logMu   sync.Mutex
	log     []*LogEntry // newest first
	logMax  int
	logNext int64 // the next entry's EntryID

	denied [DeniedChannel + 1]atomic.Int64 // denials by reason (INFO's acl_access_denied_*)

	// OnRemove, when set, is called (without locks held) with users ACL
	// DELUSER or ACL LOAD removed: their connections must close, except
	// keep (the connection asking, which closes after its reply).
	OnRemove func(removed []*User, keep any)

	// OnChannelsChanged, when set, is called (without locks held) after
	// ACL SETUSER changed an existing user whose rules no longer allow
	// every channel: its subscribers to channels it may no longer use
	// must close (Redis's ACLKillPubsubClientsIfNeeded).
	OnChannelsChanged func(u *User)
}

// NewUsers is a table with the default user only: on, nopass, ~* &*
// +@all, or with the password when one is given.
func NewUsers(defaultPass []byte) *Users {
	us := &Users{users: map[string]*User{}, logMax: 128}
	r := DefaultRules()
	if defaultPass != nil {
		_ = r.Apply("resetpass")
		_ = r.Apply(">" + string(defaultPass))
	}
	us.def = newUser("default", r)
	us.reqPass = string(defaultPass)
	us.users["default"] = us.def
	return us
}

// Default is the default user.
func (us *Users) Default() *User { return us.def }

// Get finds a user by name (exact bytes), nil when absent.
func (us *Users) Get(name string) *User {
	us.mu.Lock()
	defer us.mu.Unlock()
	return us.users[name]
}

// Names are the user names in byte order (ACL USERS).
func (us *Users) Names() []string {
	us.mu.Lock()
	defer us.mu.Unlock()
	names := make([]string, 0, len(us.users))
	for n := range us.users {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// List is ACL LIST: "user <name> <rules>" per user, in name order.
func (us *Users) List() []string {
	us.mu.Lock()
	defer us.mu.Unlock()
	names := make([]string, 0, len(us.users))
	for n := range us.users {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "user " + n + " " + us.users[n].Rules().Describe()
	}
	return out
}

// SetPubsubDefault sets acl-pubsub-default: whether new users start with
// allchannels.
func (us *Users) SetPubsubDefault(all bool) {
	us.mu.Lock()
	us.pubsubAll = all
	us.mu.Unlock()
}

// PubsubDefault reports acl-pubsub-default.
func (us *Users) PubsubDefault() bool {
	us.mu.Lock()
	defer us.mu.Unlock()
	return us.pubsubAll
}

// SetUser is ACL SETUSER: the rules apply to a copy of the user (a new
// one when absent) and the copy replaces it only if every rule is valid.
// The error is the reply's text without "ERR ".
func (us *Users) SetUser(name string, ops []string) string {
	if hasSpaces(name) {
		return "Usernames can't contain spaces or null characters"
	}
	merged, bad := MergeSelectorArgs(ops)
	if bad >= 0 {
		return "Unmatched parenthesis in acl selector starting at '" + cstr(ops[bad]) + "'."
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	u := us.users[name]
	var r *Rules
	if u != nil {
		r = u.Rules().Clone()
	} else {
		r = NewRules(us.pubsubAll)
	}
	for _, op := range merged {
		if err := r.Apply(op); err != nil {
			return "Error in ACL SETUSER modifier '" + cstr(op) + "': " + err.Error()
		}
	}
	r.finish()
	if u == nil {
		us.users[name] = newUser(name, r)
		return ""
	}
	u.rules.Store(r)
	if cb := us.OnChannelsChanged; cb != nil && !r.AllChannels() {
		us.mu.Unlock()
		cb(u)
		us.mu.Lock() // for the deferred unlock
	}
	return ""
}

// DelUser is ACL DELUSER: how many of the named users existed and were
// removed. The default user cannot be removed.
func (us *Users) DelUser(names []string, keep any) (int, string) {
	if slices.Contains(names, "default") {
		return 0, "The 'default' user cannot be removed"
	}
	us.mu.Lock()
	var removed []*User
	for _, n := range names {
		if u := us.users[n]; u != nil {
			delete(us.users, n)
			u.deleted.Store(true)
			removed = append(removed, u)
		}
	}
	cb := us.OnRemove
	us.mu.Unlock()
	if cb != nil && len(removed) > 0 {
		cb(removed, keep)
	}
	return len(removed), ""
}

// SetDefaultPassword is requirepass: the default user's passwords are
// reset and, when pass is not nil, pass is its only one (else nopass).
func (us *Users) SetDefaultPassword(pass []byte) {
	us.mu.Lock()
	defer us.mu.Unlock()
	us.reqPass = string(pass)
	r := us.def.Rules().Clone()
	_ = r.Apply("resetpass")
	if pass != nil {
		_ = r.Apply(">" + string(pass))
	} else {
		_ = r.Apply("nopass")
	}
	r.finish()
	us.def.rules.Store(r)
}

// RequirePass is requirepass as last set ("" when never, or nopass).
func (us *Users) RequirePass() string {
	us.mu.Lock()
	defer us.mu.Unlock()
	return us.reqPass
}

// AuthRequired reports whether a new connection must authenticate: the
// default user has a password or is off (Redis's authRequired).
func (us *Users) AuthRequired() bool {
	r := us.def.Rules()
	return !r.NoPass || !r.Enabled
}

// Authenticate checks a name and password (ACLCheckUserCredentials): the
// user, or nil when unknown, off or the password is wrong. Every
// password hash is compared in constant time.
func (us *Users) Authenticate(name, pass []byte) *User {
	u := us.Get(string(name))
	if u == nil {
		return nil
	}
	r := u.Rules()
	if !r.Enabled {
		return nil
	}
	if r.NoPass {
		return u
	}
	h := HashPassword(pass)
	ok := 0
	for _, p := range r.passwords {
		ok |= subtle.ConstantTimeCompare([]byte(h), []byte(p))
	}
	if ok == 1 {
		return u
	}
	return nil
}

// Replace swaps in a whole new table (ACL LOAD): users absent from the
// new one are removed (their connections close); the default user keeps
// its identity and takes the new rules.
func (us *Users) Replace(users map[string]*Rules, keep any) {
	us.mu.Lock()
	var removed []*User
	next := map[string]*User{}
	for name, r := range users {
		if name == "default" {
			continue
		}
		r.finish()
		old := us.users[name]
		removed = append(removed, old) // Redis frees every old user and kills its clients
		next[name] = newUser(name, r)
	}
	for name, u := range us.users {
		if name != "default" {
			if _, ok := users[name]; !ok {
				removed = append(removed, u)
			}
		}
	}
	removed = slices.DeleteFunc(removed, func(u *User) bool { return u == nil })
	for _, u := range removed {
		u.deleted.Store(true)
	}
	d := users["default"]
	if d == nil {
		d = DefaultRules()
	}
	d.finish()
	us.def.rules.Store(d)
	next["default"] = us.def
	us.users = next
	cb := us.OnRemove
	us.mu.Unlock()
	if cb != nil && len(removed) > 0 {
		cb(removed, keep)
	}
}

// File is the table in ACL file form (ACL SAVE): a line per user.
func (us *Users) File() string {
	var b strings.Builder
	for _, l := range us.List() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Log reasons, in Redis's order of severity (ACL_DENIED_*).
const (
	OK            = 0
	DeniedCommand = 1
	DeniedKey     = 2
	DeniedAuth    = 3
	DeniedChannel = 4
)

// Log contexts.
const (
	CtxTopLevel = iota
	CtxMulti
	CtxLua
)

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count      int64
	Reason     int
	Context    int
	Object     string
	Username   string
	CTime      time.Time // the last denial folded in (age-seconds, timestamp-last-updated)
	ClientInfo string
	EntryID    int64     // Redis 7.2's entry-id: the server's count of entries before it
	Created    time.Time // the first denial (timestamp-created)
}

// Denied is the number of denials for reason since the start or the last
// ResetDenied (INFO stats' acl_access_denied_auth, _cmd, _key and
// _channel), every one counted, folded into a log entry or not.
func (us *Users) Denied(reason int) int64 { return us.denied[reason].Load() }

// ResetDenied zeroes the denial counts (CONFIG RESETSTAT).
func (us *Users) ResetDenied() {
	for i := range us.denied {
		us.denied[i].Store(0)
	}
}

// SetLogMax sets acllog-max-len.
func (us *Users) SetLogMax(n int) {
	us.logMu.Lock()
	us.logMax = n
	if len(us.log) > n {
		us.log = us.log[:n]
	}
	us.logMu.Unlock()
}

// LogMax is acllog-max-len.
func (us *Users) LogMax() int {
	us.logMu.Lock()
	defer us.logMu.Unlock()
	return us.logMax
}

// AddLog records a denial, folding it into one of the ten newest entries
// when that has the same reason, context, object and user and is under a
// minute old (Redis's addACLLogEntry).
func (us *Users) AddLog(reason, context int, object, username, clientInfo string) {
	if reason > OK && reason <= DeniedChannel {
		us.denied[reason].Add(1)
	}
	now := time.Now()
	us.logMu.Lock()
	defer us.logMu.Unlock()
	for i, e := range us.log {
		if i >= 10 {
			break
		}
		d := now.Sub(e.CTime)
		if d < 0 {
			d = -d
		}
		if e.Reason == reason && e.Context == context && d <= time.Minute && e.Object == object && e.Username == username {
			e.Count++
			e.CTime = now
			e.ClientInfo = clientInfo
			copy(us.log[1:i+1], us.log[:i])
			us.log[0] = e
			return
		}
	}
	us.log = slices.Insert(us.log, 0, &LogEntry{Count: 1, Reason: reason, Context: context, Object: object,
		Username: username, CTime: now, ClientInfo: clientInfo, EntryID: us.logNext, Created: now})
	us.logNext++ // never reset, as Redis's ACL LOG RESET keeps its counter
	if len(us.log) > us.logMax {
		us.log = us.log[:us.logMax]
	}
}

// Log returns up to n entries, newest first (copies).
func (us *Users) Log(n int) []LogEntry {
	us.logMu.Lock()
	defer us.logMu.Unlock()
	n = min(n, len(us.log))
	out := make([]LogEntry, n)
	for i := range n {
		out[i] = *us.log[i]
	}
	return out
}

// ResetLog is ACL LOG RESET.
func (us *Users) ResetLog() {
	us.logMu.Lock()
	us.log = nil
	us.logMu.Unlock()
}

// AllCommands reports whether the root selector has +@all and nothing
// taken away: what a command outside Redis's table needs.
func (r *Rules) AllCommands() bool { return r.root.allCommands }

// SetChannelsHook sets OnChannelsChanged.
func (us *Users) SetChannelsHook(f func(u *User)) {
	us.mu.Lock()
	us.OnChannelsChanged = f
	us.mu.Unlock()
}

// AllChannels reports whether some selector allows every channel.
func (r *Rules) AllChannels() bool {
	if r.root.allChannels {
		return true
	}
	for _, s := range r.selectors {
		if s.allChannels {
			return true
		}
	}
	return false
}

// ChannelAllowed reports whether a subscription may stay: ch matches one
// of the rules' channel patterns (as a glob; literally for a pattern
// subscription), as Redis's ACLCheckChannelAgainstList over every
// selector's channels.
func (r *Rules) ChannelAllowed(ch []byte, literal bool) bool {
	if r.AllChannels() {
		return true
	}
	if r.root.channelOK(ch, literal) {
		return true
	}
	for _, s := range r.selectors {
		if s.channelOK(ch, literal) {
			return true
		}
	}
	return false
}
