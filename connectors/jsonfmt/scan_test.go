package jsonfmt

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"strconv"
	"testing"
)

// refSkip is the byte-at-a-time reference for skipString: the position
// after the closing quote of the string at b[i], or -1.
func refSkip(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 5
			default:
				return -1
			}
		}
	}
	return -1
}

// checkSkip compares skipString and scanStringASCII with the reference on
// the string at b[at]: where it ends, and for a valid string whether its
// content has escapes and bytes >= 0x80.
func checkSkip(t *testing.T, b []byte, at int) {
	t.Helper()
	want := refSkip(b, at)
	if got := skipString(b, at); got != want {
		t.Fatalf("skipString(%q, %d) = %d, want %d", b, at, got, want)
	}
	wantEnd, wantEsc, wantHigh := -1, false, false
	if want >= 0 {
		wantEnd = want - 1
		wantEsc = bytes.IndexByte(b[at+1:wantEnd], '\\') >= 0
		for _, c := range b[at+1 : wantEnd] {
			wantHigh = wantHigh || c >= 0x80
		}
	}
	end, next, esc, high := scanStringASCII(b, at)
	if end != wantEnd || next != want || esc != wantEsc || high != wantHigh {
		t.Fatalf("scanStringASCII(%q, %d) = %d, %d, %v, %v; want %d, %d, %v, %v",
			b, at, end, next, esc, high, wantEnd, want, wantEsc, wantHigh)
	}
}

// Every tricky piece at every position of strings of every length up to
// past the four-word loop, so each lands on every word boundary of both
// loops and in the tail; the buffer ends right after the closing quote or
// runs on, with the string at the start or in the middle of the buffer.
func TestSkipStringAtWordBoundaries(t *testing.T) {
	bothStopScans(t, func(t *testing.T) {
		pieces := []string{
			`\"`, `\\`, `\\\"`, `\\\\`, `\/`, `\n`, `\u00e9`, `\uD83D\uDE00`, "é", "\xff", "\x7f",
			// bytes a borrow from a stop just before them turns into false
			// stops ('#' after a quote, ']' after a backslash)
			"#", "]", "#]#", `\"#`, `\\]`, `\"]`, `\\#`,
			// non-ASCII right before and after a stop
			"\xc3\xa9\\n", "\\n\xc3\xa9", "\x80#",
			// malformed: control characters, bad escapes, cut escapes
			"\x00", "\x1f", "\t", "\n", `\x`, `\u00g9`, `\u12`, `\`, `\'`,
		}
		for n := 0; n <= 72; n++ {
			for p := 0; p <= n; p++ {
				for _, piece := range pieces {
					body := make([]byte, 0, n+len(piece)+8)
					for k := 0; k < p; k++ {
						body = append(body, 'a'+byte(k%26))
					}
					body = append(body, piece...)
					for k := p; k < n; k++ {
						body = append(body, 'A'+byte(k%26))
					}
					str := append(append([]byte{'"'}, body...), '"')
					checkSkip(t, str, 0)                                            // ends at the quote
					checkSkip(t, str[:len(str)-1], 0)                               // no closing quote
					checkSkip(t, append(append([]byte{}, str...), `,"x":1}`...), 0) // runs on
					checkSkip(t, append([]byte(`{"k":`), str...), 5)                // starts mid-buffer
				}
			}
		}
	})
}

// Random strings over an alphabet of the bytes that matter.
func TestSkipStringRandom(t *testing.T) {
	bothStopScans(t, func(t *testing.T) {
		alphabet := []byte{'a', 'z', ' ', '"', '\\', '/', 'n', 'u', '0', 'F', 'g', 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xa9, 0xff}
		rng := rand.New(rand.NewSource(1))
		for k := 0; k < 200000; k++ {
			n := rng.Intn(80)
			b := make([]byte, 1+n)
			b[0] = '"'
			for j := 1; j <= n; j++ {
				// Mostly plain letters, so strings often run long.
				if rng.Intn(8) == 0 {
					b[j] = alphabet[rng.Intn(len(alphabet))]
				} else {
					b[j] = 'a' + byte(rng.Intn(26))
				}
			}
			checkSkip(t, b, 0)
		}
	})
}

// bothStopScans runs f with skipString's vector scan (where this machine
// has it) and with its word-at-a-time scan.
func bothStopScans(t *testing.T, f func(t *testing.T)) {
	saved := haveStopIndex
	defer func() { haveStopIndex = saved }()
	if saved {
		t.Run("vector", f)
	}
	haveStopIndex = false
	t.Run("words", f)
}

// stopIndex against a byte-at-a-time search, with every byte value at
// every position of buffers up to three blocks and a tail long.
func TestStopIndex(t *testing.T) {
	if !haveStopIndex {
		t.Skip("no AVX2 here: skipString scans words, covered by the other tests")
	}
	ref := func(b []byte) int {
		for i, c := range b[:len(b)&^31] {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return -1
	}
	for n := 0; n <= 100; n++ {
		b := bytes.Repeat([]byte{'a'}, n)
		if got := stopIndex(b); got != -1 {
			t.Fatalf("stopIndex(%d plain bytes) = %d, want -1", n, got)
		}
		for p := 0; p < n; p++ {
			for c := 0; c < 256; c++ {
				b[p] = byte(c)
				if got, want := stopIndex(b), ref(b); got != want {
					t.Fatalf("stopIndex with %#x at %d of %d = %d, want %d", c, p, n, got, want)
				}
			}
			// A second stop after the first: the first is the answer.
			if p+1 < n {
				b[p], b[n-1] = '"', '\\'
				if got, want := stopIndex(b), ref(b); got != want {
					t.Fatalf("stopIndex with stops at %d and %d of %d = %d, want %d", p, n-1, n, got, want)
				}
				b[n-1] = 'a'
			}
			b[p] = 'a'
		}
	}
}

// gather against a bit-by-bit packing, for every pattern of byte hits.
func TestGather(t *testing.T) {
	for p := 0; p < 256; p++ {
		var m uint64
		for k := 0; k < 8; k++ {
			if p&(1<<k) != 0 {
				m |= 0x80 << (8 * k)
			}
		}
		if got := gather(m); got != uint32(p) {
			t.Fatalf("gather(%#x) = %#x, want %#x", m, got, p)
		}
	}
}

// refScanInt64 and refScanNumber are the byte-at-a-time scanners the word
// versions replaced, kept as their references.
func refScanInt64(b []byte, i int) (int64, int) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	d := i
	var u uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		u = u*10 + uint64(b[i]-'0')
		i++
	}
	nd := i - d
	if nd == 0 || (b[d] == '0' && nd > 1) {
		return 0, -1
	}
	if nd > 18 {
		return 0, -2
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, -1
	}
	if neg {
		return -int64(u), i
	}
	return int64(u), i
}

func refScanNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return -1, false
	}
	isInt := true
	if i < len(b) && b[i] == '.' {
		isInt = false
		d := i + 1
		if i = digits(d); i == d {
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
		if i = digits(d); i == d {
			return -1, false
		}
	}
	if i == start {
		return -1, false
	}
	return i, isInt
}

// Numbers of every length from one to twenty digits, signed or not, with
// leading zeros, fractions and exponents, followed by every kind of byte
// or by the end of the buffer, at every offset: the word scanners agree
// with the byte scanners.
func TestScanNumbersAgreeWithReference(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var bodies []string
	for nd := 1; nd <= 20; nd++ {
		for k := 0; k < 20; k++ {
			d := make([]byte, nd)
			for j := range d {
				d[j] = '0' + byte(rng.Intn(10))
			}
			if k%2 == 0 {
				d[0] = '1' + byte(rng.Intn(9)) // no leading zero
			}
			bodies = append(bodies, string(d))
		}
	}
	bodies = append(bodies, "0", "00", "9999999", "99999999", "999999999", "922337203685477580", "9223372036854775807")
	var nums []string
	for _, d := range bodies {
		nums = append(nums, d, "-"+d, d+".5", d+".", d+"e7", d+"E-2", d+"e", "-"+d+".25e+3")
	}
	nums = append(nums, "-", "", "-a", "+1", ".5")
	tails := []string{"", ",", "}", " ", "]", "\n", "x", "/", ":", "\xff", ",\"k\":\"0123456789\"}"}
	for _, n := range nums {
		for _, tail := range tails {
			for _, pre := range []string{"", "[", `{"k":`} {
				b := []byte(pre + n + tail)
				at := len(pre)
				gv, gn := scanInt64(b, at)
				wv, wn := refScanInt64(b, at)
				if gv != wv || gn != wn {
					t.Fatalf("scanInt64(%q, %d) = %d, %d; want %d, %d", b, at, gv, gn, wv, wn)
				}
				gn, gi := scanNumber(b, at)
				wn, wi := refScanNumber(b, at)
				if gn != wn || gi != wi {
					t.Fatalf("scanNumber(%q, %d) = %d, %v; want %d, %v", b, at, gn, gi, wn, wi)
				}
			}
		}
	}
}

func TestParseDigits(t *testing.T) {
	for _, s := range []string{"0", "7", "10", "99", "123", "4096", "65535", "1234567", "98765432", "00000001", "90000000"} {
		var buf [8]byte
		copy(buf[:], s+",,,,,,,,")
		w := binary.LittleEndian.Uint64(buf[:])
		want, _ := strconv.ParseUint(s, 10, 64)
		if got := parseDigits(w, len(s)); got != want {
			t.Fatalf("parseDigits(%q) = %d, want %d", s, got, want)
		}
	}
}
