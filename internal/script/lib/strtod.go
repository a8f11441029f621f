package lib

import (
	"math"
	"strconv"
	"strings"
)

// strtod is glibc's strtod without the leading white space: it parses the
// longest prefix of s that is a number (decimal or hexadecimal, with an
// optional exponent, or inf, infinity, nan, nan(chars), all with an optional
// sign) and returns its value and length, or a length of 0 when s does not
// start with a number. cjson reads JSON numbers with it, so it accepts what
// Redis's cjson.decode accepts ("0x1F", "1.", "-Infinity").
func strtod(s string) (float64, int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	rest := s[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return sign(math.Inf(1)), i + 8
	case hasPrefixFold(rest, "inf"):
		return sign(math.Inf(1)), i + 3
	case hasPrefixFold(rest, "nan"):
		n := i + 3
		if n < len(s) && s[n] == '(' {
			j := n + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				n = j + 1
			}
		}
		nan := math.NaN()
		if neg {
			nan = math.Copysign(nan, -1)
		}
		return nan, n
	}
	if len(rest) >= 3 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		if f, n := strtodHex(rest[2:]); n > 0 {
			return sign(f), i + 2 + n
		}
		// "0x" with no hex digit after it: the number is the "0".
		return sign(0), i + 1
	}
	j := i
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	mant := j
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	text := s[i:mant]
	if text[0] == '.' {
		text = "0" + text
	}
	exp := s[mant:j]
	f, err := strconv.ParseFloat(text+clampExponent(exp), 64)
	if err != nil && !isRangeError(err) {
		return 0, 0
	}
	return sign(f), j
}

// strtodHex parses the hexadecimal digits (with an optional point and binary
// exponent) after "0x", returning the value and the bytes used.
func strtodHex(s string) (float64, int) {
	j := 0
	digits := 0
	for j < len(s) && isHex(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isHex(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	mant := s[:j]
	if mant[0] == '.' {
		mant = "0" + mant
	}
	exp := "p0"
	if j < len(s) && (s[j] == 'p' || s[j] == 'P') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			exp = "p" + clampExponent(s[j+1:k])
			j = k
		}
	}
	f, err := strconv.ParseFloat("0x"+mant+exp, 64)
	if err != nil && !isRangeError(err) {
		return 0, 0
	}
	return f, j
}

// clampExponent keeps an exponent's digits to a size ParseFloat accepts while
// keeping its meaning: any exponent past 99999 overflows or underflows anyway.
func clampExponent(e string) string {
	if e == "" {
		return ""
	}
	prefix := ""
	body := e
	if body[0] == 'e' || body[0] == 'E' {
		prefix, body = body[:1], body[1:]
	}
	sgn := ""
	if body != "" && (body[0] == '+' || body[0] == '-') {
		sgn, body = body[:1], body[1:]
	}
	body = strings.TrimLeft(body, "0")
	if body == "" {
		body = "0"
	}
	if len(body) > 6 {
		body = "999999"
	}
	return prefix + sgn + body
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z')
}
