package history

import (
	"errors"
	"strconv"
	"strings"
)

// Values in a history are JSON. Two values are equal when they are the
// same JSON value (analysis/linear/values.go says exactly when); numbers are
// mathematical values, compared exactly, whatever their spelling. A string
// that begins with "~" holds a value from a Jepsen EDN history that JSON
// cannot hold, such as a keyword or a double (foreign/jepsen/tagged.go
// gives the forms); the EDN reader escapes a string of its own that begins
// with "~" by doubling the "~".

// EDNNaN is the tagged form of EDN's ##NaN, which, as in Clojure, equals
// nothing, itself included.
const EDNNaN = "~d##NaN"

// maxPlainDigits bounds the digits a canonical number spells out: beyond
// it, the canonical form is scientific, so that 1e1000000000 costs a few
// bytes, not a gigabyte.
const maxPlainDigits = 100

// CanonicalNumber renders a decimal number (JSON's syntax, with an optional
// leading "+") in the one form every spelling of its value shares: 1.0,
// 1e0 and 10e-1 are all "1", 1e22 is 10000000000000000000000, 0.50 is
// "0.5", -0 is "0". Values with more than maxPlainDigits digits before or
// after the point are written d.ddde±n. integral tells whether the value
// is an integer. The comparison is exact: no rounding to float64.
func CanonicalNumber(s string) (canon string, integral bool, err error) {
	neg, digits, exp, err := parseDecimal(s)
	if err != nil {
		return "", false, err
	}
	if digits == "" {
		return "0", true, nil
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	n := int64(len(digits))
	switch point := n + exp; { // digits before the point
	case exp >= 0 && point <= maxPlainDigits:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", int(exp)))
	case exp < 0 && -exp <= maxPlainDigits && point > 0:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	case exp < 0 && -exp <= maxPlainDigits:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(-point)))
		b.WriteString(digits)
	default:
		b.WriteString(digits[:1])
		if n > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		b.WriteString(strconv.FormatInt(point-1, 10))
	}
	return b.String(), exp >= 0, nil
}

// maxExponent bounds an exponent, so that the arithmetic on it cannot overflow.
const maxExponent = 1 << 60

// parseDecimal reads [+-]digits[.digits][(e|E)[+-]digits] as digits × 10^exp,
// digits without leading or trailing zeros ("" for zero).
func parseDecimal(s string) (neg bool, digits string, exp int64, err error) {
	bad := errors.New("number " + strconv.Quote(s) + ": expected [-]digits[.digits][e[-]digits]")
	rest := s
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		neg, rest = rest[0] == '-', rest[1:]
	}
	mant, e, hasExp := strings.Cut(strings.ReplaceAll(rest, "E", "e"), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	if whole == "" || !allDigits(whole) || !allDigits(frac) || strings.Contains(frac, ".") {
		return false, "", 0, bad
	}
	if hasExp {
		x, perr := strconv.ParseInt(strings.TrimPrefix(e, "+"), 10, 64)
		if perr != nil && !errors.Is(perr, strconv.ErrRange) {
			return false, "", 0, bad
		}
		if x > maxExponent || x < -maxExponent {
			return false, "", 0, errors.New("number " + strconv.Quote(s) + ": exponent out of range")
		}
		exp = x
	}
	digits = strings.TrimLeft(whole+frac, "0")
	exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	if trimmed == "" {
		return false, "", 0, nil
	}
	return neg, trimmed, exp, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
