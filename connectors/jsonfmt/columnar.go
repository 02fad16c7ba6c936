package jsonfmt

import (
	"encoding/base64"
	"math"
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
			if idx < 0 {
				if i = skipValue(b, i, 1); i < 0 {
					return -1
				}
			} else {
				if st.seen[idx] == gen {
					return -1 // duplicate key: encoding/json keeps the last
				}
				st.seen[idx] = gen
				if i = w.readValue(b, i, st.children[idx]); i < 0 {
					return -1
				}
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

// lookup finds the child named key. The k-th key's last match is tried
// first, which makes a homogeneous stream one comparison per field; the
// guess is ALWAYS verified against the name, because trusting it would
// file a value under the wrong column of the same type silently.
func (w *walker) lookup(st *column, k int, key []byte) int {
	if k < len(st.hint) {
		if h := st.hint[k]; h >= 0 && string(key) == st.children[h].name {
			return h
		}
	}
	return w.lookupSlow(st, k, key)
}

//go:noinline
func (w *walker) lookupSlow(st *column, k int, key []byte) int {
	idx, ok := st.byName[string(key)]
	if !ok {
		idx = -1
	}
	for len(st.hint) <= k {
		st.hint = append(st.hint, -1)
	}
	st.hint[k] = idx
	return idx
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
		next, isInt := scanNumber(b, i)
		if next < 0 || !isInt {
			return -1
		}
		v, err := parseInt(b[i:next], 64)
		if err != nil {
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
			ts, err := parseTimestamp(raw, c.unit)
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
