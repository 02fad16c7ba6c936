package jsonfmt

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// The columnar walk: one pass over each record, dispatching every field
// straight to its column. Any -1 means "cannot decide here"; the decoder
// then rolls the record back and asks the row decode.

// walker holds the per-decoder walk settings and scratch space.
type walker struct {
	failOnMissing bool
	scratch       []byte
}

// readObject reads the object at b[i] == '{' into st's children, appending
// exactly one value (possibly null) to each.
func (w *walker) readObject(b []byte, i int, st *column) int {
	st.gen++
	gen := st.gen
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for k := 0; ; k++ {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			// Fast path: the k-th key is the one it was last time, checked
			// byte for byte (see keySlot). A mismatch is no harm: the
			// general path scans the key and looks it up.
			if k < len(st.slots) {
				sl := &st.slots[k]
				var match bool
				if i+17 <= len(b) {
					w0 := binary.LittleEndian.Uint64(b[i+1:])
					w1 := binary.LittleEndian.Uint64(b[i+9:])
					match = sl.key.hit(w0, w1) && (sl.key.n > 0 || sl.key.matchSlow(b, i+1))
				} else {
					match = sl.key.matchSlow(b, i+1)
				}
				if match {
					i = skipWS(b, i+1+len(sl.key.tail))
					if h := sl.child; h < 0 {
						if h < -1 {
							j := -2 - h
							if st.checkSeen[j] == gen {
								return -1 // duplicate key: the row decode judges the last
							}
							st.checkSeen[j] = gen
							i = w.check(b, i, st.checks[j])
						} else if i >= len(b) {
							return -1
						} else if c := b[i]; c == '"' {
							i = skipString(b, i) // most unread values
						} else if c == '-' || c-'0' <= 9 {
							i, _ = scanNumber(b, i)
						} else {
							i = skipValue(b, i, 1)
						}
					} else if st.seen[h] == gen {
						return -1 // duplicate key: encoding/json keeps the last
					} else {
						st.seen[h] = gen
						i = w.readValue(b, i, st.children[h])
					}
					if i < 0 {
						return -1
					}
					goto next
				}
			}
			{
				end, next, escaped := scanString(b, i)
				if next < 0 || escaped {
					return -1 // an escaped key is matched by the row decode
				}
				key := b[i+1 : end]
				i = skipWS(b, next)
				if i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipWS(b, i+1)
				idx := w.lookup(st, k, key)
				if idx < -1 {
					j := -2 - idx
					if st.checkSeen[j] == gen {
						return -1
					}
					st.checkSeen[j] = gen
					if i = w.check(b, i, st.checks[j]); i < 0 {
						return -1
					}
				} else if idx < 0 {
					if i = skipValue(b, i, 1); i < 0 {
						return -1
					}
				} else {
					if st.seen[idx] == gen {
						return -1
					}
					st.seen[idx] = gen
					if i = w.readValue(b, i, st.children[idx]); i < 0 {
						return -1
					}
				}
			}
		next:
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
		}
	}
	if w.failOnMissing {
		for _, s := range st.checkSeen {
			if s != gen {
				return -1
			}
		}
	}
	for j, s := range st.seen {
		if s != gen {
			if w.failOnMissing {
				return -1
			}
			st.children[j].appendNull()
		}
	}
	return i
}

// lookup finds the child named key (-1: none; below: a check, see
// checkSlot) and makes it the k-th slot.
func (w *walker) lookup(st *column, k int, key []byte) int {
	idx, ok := st.byName[string(key)]
	if !ok {
		idx = -1
	}
	for len(st.slots) <= k {
		st.slots = append(st.slots, keySlot{child: -1})
	}
	st.slots[k] = keySlot{child: idx, key: newKeyPat(key)}
	return idx
}

// pow10 are the powers of ten scanInt64 shifts a first word of digits by.
var pow10 = [8]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7}

// scanInt64 scans and parses a JSON integer in one pass; -1 for anything
// else (a fraction, an exponent), and -2 when 19+ digits need the exact
// parser's overflow check.
func scanInt64(b []byte, i int) (int64, int) {
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	if i+16 <= len(b) {
		// Up to fifteen digits and what follows them in two words: no
		// loop, no branch per digit.
		w0 := binary.LittleEndian.Uint64(b[i:])
		w1 := binary.LittleEndian.Uint64(b[i+8:])
		var u uint64
		nd := 0
		if m := nonDigits(w0); m != 0 {
			nd = bits.TrailingZeros64(m) >> 3
			u = parseDigits(w0, nd)
		} else if m := nonDigits(w1); m != 0 {
			nd1 := bits.TrailingZeros64(m) >> 3
			nd = 8 + nd1
			u = parseDigits(w0, 8)*pow10[nd1] + parseDigits(w1, nd1)
		} else {
			goto slow
		}
		if nd == 0 || (nd > 1 && b[i] == '0') {
			return 0, -1
		}
		if i += nd; b[i] == '.' || b[i] == 'e' || b[i] == 'E' {
			return 0, -1
		}
		if neg {
			return -int64(u), i
		}
		return int64(u), i
	}
slow:
	d := i
	var u uint64
	for i < len(b) {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		u = u*10 + uint64(c)
		i++
	}
	nd := i - d
	if nd == 0 || (b[d] == '0' && nd > 1) {
		return 0, -1
	}
	if nd > 18 {
		return 0, -2 // may overflow: the caller's exact parser decides
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, -1
	}
	if neg {
		return -int64(u), i
	}
	return int64(u), i
}

// unsafeString views b as a string for strconv without copying; the string
// does not outlive the call.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// readValue reads one value at b[i] (not whitespace) into c.
func (w *walker) readValue(b []byte, i int, c *column) int {
	if i >= len(b) {
		return -1
	}
	ch := b[i]
	if ch == 'n' {
		if i = literal(b, i, "null"); i < 0 {
			return -1
		}
		c.appendNull()
		return i
	}
	if c.n >= c.capN {
		c.grow(c.n + 1)
	}
	switch c.kind {
	case kInt64:
		v, next := scanInt64(b, i)
		if next == -2 {
			// 19 or more digits: the exact parser decides (overflow).
			var isInt bool
			if next, isInt = scanNumber(b, i); next < 0 || !isInt {
				return -1
			}
			var err error
			if v, err = parseInt(b[i:next], 64); err != nil {
				return -1
			}
		}
		if next < 0 {
			return -1
		}
		c.i64[c.n] = v
		c.setValid()
		return next
	case kInt32:
		next, isInt := scanNumber(b, i)
		if next < 0 || !isInt {
			return -1
		}
		v, err := parseInt(b[i:next], 32)
		if err != nil {
			return -1
		}
		c.i32[c.n] = int32(v)
		c.setValid()
		return next
	case kFloat64, kFloat32:
		next, isInt := scanNumber(b, i)
		if next < 0 {
			return -1
		}
		var f float64
		if v, err := parseInt(b[i:next], 64); isInt && err == nil && v > -1<<53 && v < 1<<53 {
			f = float64(v) // exact, and what ParseFloat returns
		} else {
			bits := 64
			if c.kind == kFloat32 {
				bits = 32
			}
			var err error
			if f, err = strconv.ParseFloat(unsafeString(b[i:next]), bits); err != nil {
				return -1
			}
		}
		if c.kind == kFloat32 {
			if math.Abs(f) > math.MaxFloat32 {
				return -1
			}
			c.f32[c.n] = float32(f)
		} else {
			c.f64[c.n] = f
		}
		c.setValid()
		return next
	case kDecimal:
		next, _ := scanNumber(b, i)
		if next < 0 {
			return -1
		}
		v, err := parseDecimal(b[i:next], c.prec, c.scale)
		if err != nil {
			return -1
		}
		c.dec[c.n] = v
		c.setValid()
		return next
	case kBool:
		var next int
		var v bool
		switch ch {
		case 't':
			next, v = literal(b, i, "true"), true
		case 'f':
			next = literal(b, i, "false")
		default:
			return -1
		}
		if next < 0 {
			return -1
		}
		if v {
			c.bytes[c.n>>3] |= 1 << (c.n & 7)
		} else {
			c.bytes[c.n>>3] &^= 1 << (c.n & 7)
		}
		c.setValid()
		return next
	case kString:
		if ch != '"' {
			return -1 // a non-string becomes its JSON text: the row decode's job
		}
		end, next, escaped, nonASCII := scanStringASCII(b, i)
		if next < 0 {
			return -1
		}
		raw := b[i+1 : end]
		if !escaped {
			if nonASCII && !validUTF8(raw) {
				return -1
			}
			c.appendBytes(raw)
			return next
		}
		var ok bool
		if w.scratch, ok = unescape(w.scratch[:0], raw); !ok || !validUTF8(w.scratch) {
			return -1
		}
		c.appendBytes(w.scratch)
		return next
	case kBinary:
		if ch != '"' {
			return -1
		}
		end, next, escaped := scanString(b, i)
		if next < 0 || escaped {
			return -1
		}
		raw := b[i+1 : end]
		n := base64.StdEncoding.DecodedLen(len(raw))
		w.scratch = append(w.scratch[:0], make([]byte, n)...)
		m, err := base64.StdEncoding.Decode(w.scratch, raw)
		if err != nil {
			return -1
		}
		c.appendBytes(w.scratch[:m])
		return next
	case kTimestamp, kDate32:
		if ch != '"' {
			return -1
		}
		end, next, escaped := scanString(b, i)
		if next < 0 || escaped {
			return -1
		}
		raw := b[i+1 : end]
		if c.kind == kDate32 {
			d, err := parseDate(raw)
			if err != nil {
				return -1
			}
			c.i32[c.n] = int32(d)
		} else {
			ts, err := parseTimestampCached(raw, c.unit, &c.days)
			if err != nil {
				return -1
			}
			c.i64[c.n] = int64(ts)
		}
		c.setValid()
		return next
	case kStruct:
		if ch != '{' {
			return -1
		}
		next := w.readObject(b, i, c)
		if next < 0 {
			return -1
		}
		c.setValid()
		return next
	case kList:
		if ch != '[' {
			return -1
		}
		elem := c.children[0]
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			i++
		} else {
			for {
				if i = w.readValue(b, i, elem); i < 0 {
					return -1
				}
				i = skipWS(b, i)
				if i >= len(b) {
					return -1
				}
				if b[i] == ']' {
					i++
					break
				}
				if b[i] != ',' {
					return -1
				}
				i = skipWS(b, i+1)
			}
		}
		c.off[c.n+1] = int32(elem.n)
		c.setValid()
		return i
	}
	return -1
}
