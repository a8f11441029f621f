package rdb

import "errors"

// Functions: FUNCTION DUMP's payload is a library's code after each
// RDB_OPCODE_FUNCTION2, sealed as DUMP seals a value:
//
//	| 245 | code (string) | 245 | code | ... | RDB version (2, LE) | CRC64 (8, LE) |
//
// RDB_OPCODE_FUNCTION (246), the layout of Redis 7.0's release
// candidates, is refused, as Redis 7.2 refuses it (7.0 read it).

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
			return nil, errors.New("Pre-GA function format not supported")
		default:
			return nil, errors.New("given type is not a function")
		}
	}
	return codes, nil
}
