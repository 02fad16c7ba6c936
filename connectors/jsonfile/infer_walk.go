package jsonfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// This file reads the bytes of one NDJSON record for schema inference. It
// replaced a walk with encoding/json (a decode into a map, then a token walk
// for a record with a new key) that took 8-10 ms of every query over a JSON
// path, and it must accept exactly the records that walk accepted: a record
// is the first JSON value of a line, as json.Decoder.Decode reads it (bytes
// after it are never looked at), and it counts only if that value is a
// valid object. Checking the whole record before merging any of it keeps a
// record that turns out to be invalid from changing the shape.

// maxDepth is encoding/json's limit on nested objects and arrays (its
// scanner's maxNestingDepth); the record's own braces count.
const maxDepth = 10000

// dupKeysInMap is how many keys of one object are compared pairwise before
// a map finds repeats instead, so a wide object costs no more than a map.
const dupKeysInMap = 16

// walker reads one record.
type walker struct {
	b   []byte
	pos int

	// Filled by valid.
	depth int      // objects and arrays open
	keys  [][]byte // keys of the open objects, decoded, innermost last
	dup   bool     // some object repeats a key
}

// valid reports whether line (trimmed, not empty) starts with a valid JSON
// object and notes whether any object in it repeats a key.
func (w *walker) valid(line []byte) bool {
	w.b, w.pos, w.depth, w.keys, w.dup = line, 0, 0, w.keys[:0], false
	if line[0] != '{' {
		return false // another value or not JSON: skipped either way
	}
	return w.validValue()
}

func (w *walker) validValue() bool {
	switch c := w.peek(); {
	case c == '{':
		return w.validObject()
	case c == '[':
		return w.validArray()
	case c == '"':
		_, ok := w.validString()
		return ok
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return w.validNumber()
	}
	return false
}

// The containers do not check the byte after a value: anything but
// whitespace and the next delimiter ("truex", "01", "1-") fails there.

func (w *walker) validObject() bool {
	if w.depth++; w.depth > maxDepth {
		return false
	}
	w.pos++ // '{'
	w.ws()
	if w.peek() == '}' {
		w.pos++
		w.depth--
		return true
	}
	base := len(w.keys)
	var set map[string]bool // the keys once there are many
	for {
		if w.peek() != '"' {
			return false
		}
		start := w.pos
		plain, ok := w.validString()
		if !ok {
			return false
		}
		if !w.dup {
			set = w.noteKey(base, set, w.key(start, plain))
		}
		w.ws()
		if w.peek() != ':' {
			return false
		}
		w.pos++
		w.ws()
		if !w.validValue() {
			return false
		}
		w.ws()
		switch w.peek() {
		case ',':
			w.pos++
			w.ws()
		case '}':
			w.pos++
			w.depth--
			w.keys = w.keys[:base]
			return true
		default:
			return false
		}
	}
}

// noteKey notes key k of the object whose keys so far are w.keys[base:]
// (or set, past dupKeysInMap of them), setting w.dup if it is a repeat.
func (w *walker) noteKey(base int, set map[string]bool, k []byte) map[string]bool {
	if set != nil {
		w.dup = set[string(k)]
		set[string(k)] = true
		return set
	}
	for _, prev := range w.keys[base:] {
		if bytes.Equal(prev, k) {
			w.dup = true
			return nil
		}
	}
	w.keys = append(w.keys, k)
	if len(w.keys)-base < dupKeysInMap {
		return nil
	}
	set = make(map[string]bool, 2*dupKeysInMap)
	for _, k := range w.keys[base:] {
		set[string(k)] = true
	}
	return set
}

// key is the key whose quoted form is w.b[start:w.pos], as encoding/json
// decodes it: only a key with escapes or non-ASCII bytes needs decoding.
func (w *walker) key(start int, plain bool) []byte {
	if plain {
		return w.b[start+1 : w.pos-1]
	}
	return []byte(decodeString(w.b[start:w.pos]))
}

func (w *walker) validArray() bool {
	if w.depth++; w.depth > maxDepth {
		return false
	}
	w.pos++ // '['
	w.ws()
	if w.peek() == ']' {
		w.pos++
		w.depth--
		return true
	}
	for {
		if !w.validValue() {
			return false
		}
		w.ws()
		switch w.peek() {
		case ',':
			w.pos++
			w.ws()
		case ']':
			w.pos++
			w.depth--
			return true
		default:
			return false
		}
	}
}

// validString reads the string at w.pos and reports whether it is plain:
// no escapes and only ASCII, so its bytes are the string encoding/json
// decodes (which replaces invalid UTF-8 with U+FFFD).
func (w *walker) validString() (plain, ok bool) {
	plain = true
	for i := w.pos + 1; ; i++ {
		if i = stringStop(w.b, i); i == len(w.b) {
			return false, false
		}
		switch c := w.b[i]; {
		case c == '"':
			w.pos = i + 1
			return plain, true
		case c == '\\':
			plain = false
			if i++; i >= len(w.b) {
				return false, false
			}
			switch w.b[i] {
			case 'b', 'f', 'n', 'r', 't', '\\', '/', '"':
			case 'u':
				if i+4 >= len(w.b) {
					return false, false
				}
				for _, h := range w.b[i+1 : i+5] {
					if !isHex(h) {
						return false, false
					}
				}
				i += 4
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		default: // >= 0x80
			plain = false
		}
	}
}

// stringStop is the index of the first byte of b from i on that a string
// scan must look at: '"', '\\', a control character or a byte >= 0x80; or
// len(b). Strings are most of a record's bytes, so it tests 8 bytes at a
// time: a byte's high bit in stops is set if it is one of those (the
// lowest set bit is exact; borrows can only mark bytes above it).
func stringStop(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		stops := (x - ones*0x20) | (quote-ones)&^quote | (backslash-ones)&^backslash | x
		if stops&highs != 0 {
			return i + bits.TrailingZeros64(stops&highs)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (w *walker) validNumber() bool {
	if w.peek() == '-' {
		w.pos++
	}
	switch c := w.peek(); {
	case c == '0':
		w.pos++
	case '1' <= c && c <= '9':
		w.digits()
	default:
		return false
	}
	if w.peek() == '.' {
		w.pos++
		if w.digits() == 0 {
			return false
		}
	}
	if c := w.peek(); c == 'e' || c == 'E' {
		w.pos++
		if c := w.peek(); c == '+' || c == '-' {
			w.pos++
		}
		if w.digits() == 0 {
			return false
		}
	}
	return true
}

func (w *walker) digits() int {
	start := w.pos
	for w.pos < len(w.b) && '0' <= w.b[w.pos] && w.b[w.pos] <= '9' {
		w.pos++
	}
	return w.pos - start
}

func (w *walker) literal(lit string) bool {
	if !bytes.HasPrefix(w.b[w.pos:], []byte(lit)) {
		return false
	}
	w.pos += len(lit)
	return true
}

// peek is the byte at w.pos, or 0 (which no JSON value starts with) at the
// end of the line.
func (w *walker) peek() byte {
	if w.pos < len(w.b) {
		return w.b[w.pos]
	}
	return 0
}

// ws skips JSON whitespace.
func (w *walker) ws() {
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case ' ', '\t', '\r', '\n':
			w.pos++
		default:
			return
		}
	}
}

// The readers below run only over a record valid has accepted.

// skipString skips the string at w.pos and reports whether it is plain, as
// validString does.
func (w *walker) skipString() (plain bool) {
	plain = true
	for i := w.pos + 1; ; i++ {
		i = stringStop(w.b, i)
		switch w.b[i] {
		case '"':
			w.pos = i + 1
			return plain
		case '\\':
			i++ // the escaped byte; \uXXXX's hex digits need no care
		}
		plain = false
	}
}

// skipValue skips the value at w.pos.
func (w *walker) skipValue() {
	depth := 0
	for {
		switch w.b[w.pos] {
		case '"':
			w.skipString()
		case '{', '[':
			depth++
			w.pos++
		case '}', ']':
			depth--
			w.pos++
		default: // a literal or number, or whitespace, ',' or ':' inside a container
			w.pos++
			for w.pos < len(w.b) && !isDelim(w.b[w.pos]) {
				w.pos++
			}
		}
		if depth == 0 {
			return
		}
	}
}

// isDelim reports whether c ends a literal or number.
func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ':', '"', '{', '[', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// number skips the number at w.pos and reports whether encoding/json's
// json.Number.Int64 would take it: an integer literal within int64.
func (w *walker) number() (isInt bool) {
	start := w.pos
	isInt = true
	for ; w.pos < len(w.b) && !isDelim(w.b[w.pos]); w.pos++ {
		switch w.b[w.pos] {
		case '.', 'e', 'E':
			isInt = false
		}
	}
	return isInt && fitsInt64(w.b[start:w.pos])
}

// fitsInt64 reports whether the valid JSON integer lit is within int64.
func fitsInt64(lit []byte) bool {
	limit := "9223372036854775807"
	if lit[0] == '-' {
		lit, limit = lit[1:], "9223372036854775808"
	}
	// JSON has no leading zeros, so more digits is a larger number and
	// as many digits compare as text.
	return len(lit) < len(limit) || len(lit) == len(limit) && string(lit) <= limit
}

// decodeString decodes a valid quoted string as encoding/json does; it is
// for the rare string with escapes or non-ASCII bytes.
func decodeString(quoted []byte) string {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		panic("jsonfile: decoding a validated string: " + err.Error())
	}
	return s
}
