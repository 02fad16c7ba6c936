package jsonfmt

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner walks one JSON document in place. Every function returns the
// position after what it read, or -1 when the text is not something it can
// decide: malformed JSON, or valid JSON it cannot reproduce exactly (a lone
// surrogate escape, invalid UTF-8 that encoding/json would replace). A -1
// never decides a record's fate by itself: the decoder then asks the row
// decode, which is the authority.

// maxDepth bounds nesting in skipped values; deeper documents go to the row
// decode.
const maxDepth = 256

// skipWS skips JSON whitespace except a newline, which ends an NDJSON
// record: DecodeLines walks the records in place, and a walk that met a
// newline between tokens stops there and fails (the line split decides).
// A document whose whitespace has newlines (a pretty-printed Kafka message)
// is walked again with them as tabs (see walkTabbed).
func skipWS(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString reads the string starting at b[i] == '"'. It returns the end of
// its raw content (exclusive; content starts at i+1), the position after
// the closing quote, and whether the content has escapes or non-ASCII
// bytes (which then need a UTF-8 check).
//
// It looks at 32 bytes a turn, as skipString does (SWAR, four words): the
// lowest byte that is a quote, a backslash or a control character stops
// the turn, found without a branch per word. Strings are most of a
// record's bytes, so this is the decoder's inner loop.
//
// Tried and rejected on measurement: finding the closing quote with
// bytes.IndexByte (vectorised) and then checking the span for backslashes
// (IndexByte) and control characters (one SWAR predicate) was 1.3-1.9x
// slower on nexmark bid strings: they are short (3-80 bytes), and two calls
// per string cost more than the predicates they save.
func scanString(b []byte, i int) (end, next int, escaped bool) {
	end, next, escaped, _ = scanStringASCII(b, i)
	return
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// scanStringASCII is scanString that also reports whether the content has
// bytes >= 0x80 (which then need a UTF-8 check).
func scanStringASCII(b []byte, i int) (end, next int, escaped, nonASCII bool) {
	i++
	var high uint64 // high bits of the bytes before i: non-ASCII if any
	for {
		// m: the stops of the 32 bytes from i, bit k for byte i+k; h: their
		// bytes >= 0x80, gathered the same way. A turn without a stop
		// only adds its h.
		var m, h uint32
		switch {
		case i+32 <= len(b):
			c := b[i : i+32 : i+32]
			w0 := binary.LittleEndian.Uint64(c[0:])
			w1 := binary.LittleEndian.Uint64(c[8:])
			w2 := binary.LittleEndian.Uint64(c[16:])
			w3 := binary.LittleEndian.Uint64(c[24:])
			m0, m1, m2, m3 := special(w0), special(w1), special(w2), special(w3)
			if m0|m1|m2|m3 == 0 {
				high |= (w0 | w1 | w2 | w3) & msb
				i += 32
				continue
			}
			m = gather(m0) | gather(m1)<<8 | gather(m2)<<16 | gather(m3)<<24
			h = gather(w0&msb) | gather(w1&msb)<<8 | gather(w2&msb)<<16 | gather(w3&msb)<<24
		case len(b) >= 32:
			// The rest of the buffer is the end of its last 32 bytes;
			// the bits before i are dropped (see skipString on the false
			// stops that can leave).
			sh := uint(i - (len(b) - 32))
			m, h = stops32(b, len(b)-32)>>sh, high32(b, len(b)-32)>>sh
		case i < len(b):
			pad := tailPad
			copy(pad[:], b[i:])
			m, h = stops32(pad[:], 0), high32(pad[:], 0)
		}
		if m == 0 {
			return -1, -1, false, false // no closing quote
		}
		k := bits.TrailingZeros32(m)
		high |= uint64(h & (1<<k - 1)) // the bytes before the stop
		i += k
		switch c := b[i]; {
		case c == '"':
			return i, i + 1, escaped, high != 0
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return -1, -1, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1, -1, false, false
				}
				i += 6
			default:
				return -1, -1, false, false
			}
		case c < 0x20:
			return -1, -1, false, false
		default:
			i++ // a false stop, an ASCII byte: the next turn starts after it
		}
	}
}

// special has the high bit set in (at least) the lowest byte of w that is a
// quote, a backslash or a control character, in two tests instead of three:
// c^0x02 is below 0x21 exactly for the control
// characters (0x00-0x1f map among themselves) and the quote (0x22 maps to
// 0x20). Bytes above the lowest hit may be false hits (the subtraction
// borrows); bytes >= 0x80 never hit.
func special(w uint64) uint64 {
	t := w ^ (lsb * 0x02)
	bs := w ^ (lsb * '\\')
	return (((t - lsb*0x21) &^ t) | ((bs - lsb) &^ bs)) & msb
}

// gather packs the high bits of a special mask's eight bytes into the low
// eight bits of the result, byte k's into bit k: the multiplication moves
// bit 8k to bit 56+k, and no two partial products meet below the top byte
// (8k+56-7j is the same for two pairs only if 7 divides k-k'), so no carry
// reaches it.
func gather(m uint64) uint32 {
	return uint32((m >> 7) * 0x0102040810204080 >> 56)
}

// tailPad fills the bytes past the end of a buffer shorter than 32 bytes
// for skipString: a letter, which no test stops at.
var tailPad = [32]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
	'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}

// stops32 is the 32-bit stop mask of the 32 bytes at b[i:], bit k for byte
// i+k: each word's special mask gathers into one byte. A word's lowest hit
// is exact (false hits only follow a real one), so the lowest bit of the
// mask is the first stop.
func stops32(b []byte, i int) uint32 {
	c := b[i : i+32 : i+32]
	m0 := special(binary.LittleEndian.Uint64(c[0:]))
	m1 := special(binary.LittleEndian.Uint64(c[8:]))
	m2 := special(binary.LittleEndian.Uint64(c[16:]))
	m3 := special(binary.LittleEndian.Uint64(c[24:]))
	if m0|m1|m2|m3 == 0 {
		return 0
	}
	return gather(m0) | gather(m1)<<8 | gather(m2)<<16 | gather(m3)<<24
}

// high32 gathers the high bits of the 32 bytes at b[i:] as stops32 gathers
// their stops: bit k is set when byte i+k is not ASCII.
func high32(b []byte, i int) uint32 {
	c := b[i : i+32 : i+32]
	return gather(binary.LittleEndian.Uint64(c[0:])&msb) | gather(binary.LittleEndian.Uint64(c[8:])&msb)<<8 |
		gather(binary.LittleEndian.Uint64(c[16:])&msb)<<16 | gather(binary.LittleEndian.Uint64(c[24:])&msb)<<24
}

// skipString skips the string starting at b[i] == '"' and returns the
// position after its closing quote, or -1 when scanString would: a control
// character, a bad escape or no closing quote. It is scanString without
// the bookkeeping a value needs (escape and non-ASCII flags, the content's
// end): the strings of fields no column reads are most of a record's bytes
// (nexmark's url and extra), and they only need their end found and their
// validity checked. Invalid UTF-8 is no error here, as in scanString:
// encoding/json replaces it.
//
// It tests 32 bytes per turn and finds the first stop of a turn without a
// branch per word. The last turn of a buffer tests its last 32 bytes and
// drops the bits before i; a real stop among the dropped bytes (the
// opening quote, right before i) can make a false stop after them (a
// borrow into the next byte of its word), so every stop is checked
// against the byte itself, and a byte that is no stop is stepped over.
// A backslash stops the turn and its escape is checked in place, so an
// escaped quote never ends the string whatever word boundary it
// straddles.
func skipString(b []byte, i int) int {
	i++
	for {
		var m uint32
		switch {
		case haveStopIndex && i+32 <= len(b):
			k := stopIndex(b[i:])
			if k < 0 {
				i += (len(b) - i) &^ 31
				continue // no stop in the whole blocks: the tail turn next
			}
			i, m = i+k, 1 // the exact stop
		case i+32 <= len(b):
			// stops32, written out: the call would cost a fifth of a turn.
			c := b[i : i+32 : i+32]
			m0 := special(binary.LittleEndian.Uint64(c[0:]))
			m1 := special(binary.LittleEndian.Uint64(c[8:]))
			m2 := special(binary.LittleEndian.Uint64(c[16:]))
			m3 := special(binary.LittleEndian.Uint64(c[24:]))
			if m0|m1|m2|m3 == 0 {
				i += 32
				continue
			}
			m = gather(m0) | gather(m1)<<8 | gather(m2)<<16 | gather(m3)<<24
		case len(b) >= 32:
			// The rest of the buffer is the end of its last 32 bytes.
			if m = stops32(b, len(b)-32) >> uint(i-(len(b)-32)); m == 0 {
				return -1 // no closing quote
			}
		case i < len(b):
			pad := tailPad
			copy(pad[:], b[i:])
			if m = stops32(pad[:], 0); m == 0 {
				return -1
			}
		default:
			return -1
		}
		i += bits.TrailingZeros32(m)
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			if b[i] < 0x20 {
				return -1 // a control character
			}
			i++ // a false stop (see above)
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	}
	return rune(c-'A') + 10
}

// unescape appends the decoded content of a scanned string to dst. ok is
// false for a lone surrogate, which encoding/json replaces with U+FFFD.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			dst = append(dst, raw[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hexVal(raw[i+2])<<12 | hexVal(raw[i+3])<<8 | hexVal(raw[i+4])<<4 | hexVal(raw[i+5])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
					return dst, false
				}
				r2 := hexVal(raw[i+2])<<12 | hexVal(raw[i+3])<<8 | hexVal(raw[i+4])<<4 | hexVal(raw[i+5])
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return dst, false
				}
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		i += 2
	}
	return dst, true
}

// validUTF8 reports whether s is valid UTF-8, fast on ASCII.
func validUTF8(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return utf8.Valid(s)
		}
	}
	return true
}

// nonDigits has the high bit set in (at least) the lowest byte of w that is
// not an ASCII digit: x = c-'0' is below 10 exactly for the digits, and
// x+0x76 carries into the high bit from 10 up (bytes below '0' wrap to
// 0xd0 and up and have it already). Borrows and carries start only at a
// non-digit, so the lowest hit is exact.
func nonDigits(w uint64) uint64 {
	x := w - lsb*'0'
	return ((x + lsb*0x76) | x) & msb
}

// parseDigits is the value of the nd (1-8) ASCII digits in the low bytes
// of w, the first digit lowest: shifted so that they end the word (the
// vacated low bytes read as leading zeros), then adjacent digits, pairs
// and quads are combined by three multiplications.
func parseDigits(w uint64, nd int) uint64 {
	w <<= 8 * uint(8-nd)
	w = (w & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	w = (w & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return (w & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
}

// skipDigits returns the position of the first byte at or after i that is
// not an ASCII digit, a word at a time.
func skipDigits(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := nonDigits(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// scanNumber reads a JSON number at b[i]. isInt: no fraction or exponent.
func scanNumber(b []byte, i int) (next int, isInt bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1, false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		i = skipDigits(b, i+1)
	} else {
		return -1, false
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		d := i
		if i = skipDigits(b, i); i == d {
			return -1, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return -1, false
		}
	}
	if i == start {
		return -1, false
	}
	return i, isInt
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipValue validates and skips one value at b[i] (whitespace skipped).
func skipValue(b []byte, i, depth int) int {
	i = skipWS(b, i)
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		if depth >= maxDepth {
			return -1
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i = skipString(b, i); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = skipValue(b, i+1, depth+1); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == '}' {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		if depth >= maxDepth {
			return -1
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == ']' {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i++
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	default:
		next, _ := scanNumber(b, i)
		return next
	}
}
