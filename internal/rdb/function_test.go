package rdb

import "testing"

// FuzzFunctionRestore feeds arbitrary payloads to FUNCTION RESTORE's
// decoder, sealed (so they get past the checksum) and not: it must never
// panic, and it returns codes or an error, never both.
func FuzzFunctionRestore(f *testing.F) {
	for _, code := range []string{"#!lua name=lib1\nredis.register_function('f1', function() return 1 end)", "#!lua name=x\nreturn +", ""} {
		f.Add(AppendString([]byte{opFunction2}, []byte(code)))
	}
	f.Add(AppendString(AppendString([]byte{opFunctionPreGA}, []byte("lib")), []byte("LUA")))
	f.Add([]byte{opFunctionPreGA, 1, 'a', 3, 'L', 'U', 'A', 1, 0, 0})
	f.Add([]byte{0xC3, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range [][]byte{b, Seal(append([]byte(nil), b...))} {
			codes, err := DecodeFunctions(p)
			if err != nil && codes != nil {
				t.Fatalf("DecodeFunctions(%q) = %q and error %v", p, codes, err)
			}
		}
	})
}

// TestFunctionsRoundTrip: what AppendFunctions seals, DecodeFunctions
// reads back; the release candidates' layout is refused (Redis 7.2).
func TestFunctionsRoundTrip(t *testing.T) {
	codes := [][]byte{[]byte("#!lua name=a\nredis.register_function('f', function() return 1 end)"), []byte("#!lua name=b\n" + string(make([]byte, 300)))}
	got, err := DecodeFunctions(AppendFunctions(nil, codes))
	if err != nil || len(got) != 2 || string(got[0]) != string(codes[0]) || string(got[1]) != string(codes[1]) {
		t.Fatalf("round trip = %q, %v", got, err)
	}
	old := AppendString(AppendLen(AppendString(AppendString([]byte{opFunctionPreGA}, []byte("lib")), []byte("LUA")), 0), []byte("redis.register_function('g', function() end)"))
	got, err = DecodeFunctions(Seal(old))
	if want := "Pre-GA function format not supported"; err == nil || err.Error() != want || got != nil {
		t.Fatalf("release candidate layout = %q, %v; want error %q", got, err, want)
	}
	if _, err := DecodeFunctions(Seal([]byte{opFunction2})); err == nil || err.Error() != "Failed loading library payload" {
		t.Errorf("a cut payload: %v", err)
	}
}
