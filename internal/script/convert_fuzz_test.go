package script

import (
	"bytes"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// FuzzScriptReply feeds arbitrary bytes as a command's reply to the
// RESP -> Lua conversion, and what it makes back through Lua -> RESP in
// both protocols: neither may panic, and what the second writes must be
// one well-formed reply.
func FuzzScriptReply(f *testing.F) {
	for _, s := range []string{":1\r\n", "$3\r\nbar\r\n", "$-1\r\n", "*-1\r\n", "+OK\r\n", "-ERR x\r\n", "_\r\n", "#t\r\n", "#f\r\n",
		",3.5\r\n", ",inf\r\n", ",nan\r\n", "(12345678901234567890\r\n", "=7\r\ntxt:abc\r\n", "*2\r\n:1\r\n$1\r\na\r\n",
		"%1\r\n$1\r\na\r\n:1\r\n", "~2\r\n$1\r\na\r\n$1\r\nb\r\n", "|1\r\n+a\r\n+b\r\n:5\r\n", "*3\r\n*1\r\n*0\r\n_\r\n:2\r\n",
		"$5\r\nab\r\n", "*99999999\r\n", ":abc\r\n", "%-1\r\n"} {
		f.Add([]byte(s))
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _, err := parseReply(L, b)
		if err != nil {
			return
		}
		for _, resp3 := range []bool{false, true} {
			for _, scriptRESP3 := range []bool{false, true} {
				out := appendReply(nil, v, resp3, scriptRESP3, 0)
				w, rest, err := parseReply(L, out)
				if err != nil || len(rest) != 0 {
					t.Fatalf("reply %q -> %v -> %q (resp3 %v): not one reply (%v, rest %q)", b, v, out, resp3, err, rest)
				}
				_ = w
				if !resp3 && bytes.ContainsAny(out[:1], "_#,(=%~|") {
					t.Fatalf("reply %q -> %q: a RESP3 type written for a RESP2 client", b, out)
				}
			}
		}
	})
}
