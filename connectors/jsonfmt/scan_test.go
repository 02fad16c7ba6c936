package jsonfmt

import (
	"math/rand"
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

// checkSkip compares skipString and scanString with the reference on the
// string at b[at].
func checkSkip(t *testing.T, b []byte, at int) {
	t.Helper()
	want := refSkip(b, at)
	if got := skipString(b, at); got != want {
		t.Fatalf("skipString(%q, %d) = %d, want %d", b, at, got, want)
	}
	if _, got, _ := scanString(b, at); got != want {
		t.Fatalf("scanString(%q, %d) next = %d, want %d", b, at, got, want)
	}
}

// Every tricky piece at every position of strings of every length up to
// past the four-word loop, so each lands on every word boundary of both
// loops and in the tail; the buffer ends right after the closing quote or
// runs on, with the string at the start or in the middle of the buffer.
func TestSkipStringAtWordBoundaries(t *testing.T) {
	pieces := []string{
		`\"`, `\\`, `\\\"`, `\\\\`, `\/`, `\n`, `\u00e9`, `\uD83D\uDE00`, "é", "\xff", "\x7f",
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
}

// Random strings over an alphabet of the bytes that matter.
func TestSkipStringRandom(t *testing.T) {
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
