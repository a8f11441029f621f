package rdb

import "errors"

// Functions: FUNCTION DUMP's payload is a library's code after each
// RDB_OPCODE_FUNCTION2, sealed as DUMP seals a value:
//
//	| 245 | code (string) | 245 | code | ... | RDB version (2, LE) | CRC64 (8, LE) |
//
// FUNCTION RESTORE also reads RDB_OPCODE_FUNCTION (246), the layout of
// Redis 7.0's release candidates (name, engine, a description flag and
// maybe a description, code), turned into a shebang as Redis does.

// AppendFunctions seals codes as FUNCTION DUMP's payload.
func AppendFunctions(b []byte, codes [][]byte) []byte {
	for _, code := range codes {
		b = AppendString(append(b, opFunction2), code)
	}
	return Seal(b)
}

// DecodeFunctions reads a FUNCTION RESTORE payload as Redis's
// functionRestoreCommand and rdbFunctionLoad do, and returns the
// libraries' codes, or an error whose text is Redis's reply without
// "ERR ". The payload is a client's: every length is checked before it
// is used (FuzzFunctionRestore).
func DecodeFunctions(payload []byte) ([][]byte, error) {
	p, ok := Verify(payload)
	if !ok {
		return nil, errors.New("DUMP payload version or checksum are wrong")
	}
	r := &reader{b: p}
	var codes [][]byte
	// Redis reads until the last 10 bytes, the footer; an object cut
	// short reads into it, as here.
	for len(r.b) > 10 {
		switch r.byte() {
		case opFunction2:
			code := r.str()
			if r.err != nil {
				return nil, errors.New("Failed loading library payload")
			}
			codes = append(codes, code)
		case opFunctionPreGA:
			code, msg := r.preGAFunction()
			if msg != "" {
				return nil, errors.New(msg)
			}
			codes = append(codes, code)
		default:
			return nil, errors.New("given type is not a function")
		}
	}
	return codes, nil
}

// preGAFunction reads a library in the release candidates' layout.
func (r *reader) preGAFunction() (code []byte, msg string) {
	name := r.str()
	if r.err != nil {
		return nil, "Failed loading library name"
	}
	engine := r.str()
	if r.err != nil {
		return nil, "Failed loading engine name"
	}
	hasDesc, enc := r.length()
	if r.err != nil || enc {
		return nil, "Failed loading library description indicator"
	}
	if hasDesc != 0 {
		if r.str(); r.err != nil {
			return nil, "Failed loading library description"
		}
	}
	blob := r.str()
	if r.err != nil {
		return nil, "Failed loading library blob"
	}
	return []byte("#!" + string(engine) + " name=" + string(name) + "\n" + string(blob)), ""
}
