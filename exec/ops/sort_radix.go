package ops

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Entries are what a full sort sorts: per row its normalised key (width
// bytes) followed by its row number (4 bytes, little-endian), in one flat
// buffer. Moving a row's key with its number keeps every comparison a
// memory compare of neighbouring bytes.
const entryIdx = 4

// radixSort sorts n entries of buf (stride bytes each, the key the first
// width) by key, stably: equal keys keep their row order, which makes the
// result the one a stable comparison sort gives. It is an MSD radix sort:
// one counting pass per key byte over a range, skipping a byte every entry
// of the range shares, with insertion sort for small ranges.
//
// str, when set (a string longer than its key's prefix was seen), gives a
// row's full string: a range whose keys are equal up to the end of such a
// string has that key rewritten with the string's next window
// (encodeWindow) and is sorted on from its first byte, as a string radix
// sort goes on past a prefix. The bytes after a string key are only read
// once the window holds the strings' ends. Small ranges compare exactly
// (compareKeys with the full strings, then row numbers).
func radixSort(buf []byte, n, stride int, nk *normKeys, str func(row int32, col int) []byte) {
	if n < 2 {
		return
	}
	s := radixSorter{buf: buf[:n*stride], tmp: make([]byte, n*stride), stride: stride, width: nk.width,
		nk: nk, str: str, entry: make([]byte, stride)}
	s.sort(0, n, 0, nil)
}

type radixSorter struct {
	buf, tmp      []byte
	stride, width int
	nk            *normKeys
	str           func(row int32, col int) []byte
	entry         []byte   // insertion sort's held entry
	vals          [][]byte // nextWindow's strings
}

// insertionMax is the largest range insertion sort takes: below it, a
// counting pass's 256 buckets cost more than the comparisons.
const insertionMax = 24

// sort sorts [lo, hi), whose keys share their first d bytes. pos[k] is
// where the window of string key k starts in this range (nil: all 0).
func (s *radixSorter) sort(lo, hi, d int, pos []int) {
	st := s.stride
	for {
		n := hi - lo
		if n < 2 {
			return
		}
		if s.str != nil {
			if k := s.nk.longEndsAt(s.buf[lo*st:], d); k >= 0 {
				d, pos = s.nextWindow(lo, hi, k, pos)
				continue
			}
		}
		if d == s.width {
			return // equal keys, in row order
		}
		if n <= insertionMax {
			s.insertion(lo, hi, d, pos)
			return
		}
		var count [256]int
		for o := lo*st + d; o < hi*st; o += st {
			count[s.buf[o]]++
		}
		if count[s.buf[lo*st+d]] == n {
			d++ // every entry has this byte: nothing to move
			continue
		}
		var next [256]int
		sum := lo
		for b, c := range count {
			next[b] = sum
			sum += c
		}
		start := next
		for o := lo * st; o < hi*st; o += st {
			e := s.buf[o : o+st]
			b := e[d]
			copy(s.tmp[next[b]*st:], e)
			next[b]++
		}
		copy(s.buf[lo*st:hi*st], s.tmp[lo*st:hi*st])
		for b, c := range count {
			if c > 1 {
				s.sort(start[b], start[b]+c, d+1, pos)
			}
		}
		return
	}
}

// nextWindow rewrites string key k of every entry in [lo, hi) with the
// window that starts where the range's strings first differ (they share
// at least the current window: it was equal and long), and returns where
// sorting resumes, that key's first byte, and the windows. Jumping to the
// longest common prefix at once, rather than one window after another,
// reads the strings of a large range of equal or near-equal values once.
func (s *radixSorter) nextWindow(lo, hi, k int, pos []int) (int, []int) {
	st := s.stride
	c := &s.nk.cols[s.nk.strs[k]]
	p := strPrefix
	if pos != nil {
		p += pos[k]
	}
	s.vals = s.vals[:0]
	for o := lo * st; o < hi*st; o += st {
		s.vals = append(s.vals, s.str(entryRow(s.buf[o:], st), c.Col))
	}
	first := s.vals[0]
	lcp := len(first)
	for _, v := range s.vals[1:] {
		lcp = p + commonPrefix(first[p:lcp], v[p:min(lcp, len(v))])
		if lcp == p {
			break
		}
	}
	for i, o := 0, lo*st; o < hi*st; i, o = i+1, o+st {
		c.encodeWindow(s.buf[o:o+st], s.vals[i], lcp)
	}
	next := make([]int, len(s.nk.strs))
	copy(next, pos)
	next[k] = lcp
	return c.off + 1, next
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	// Eight bytes at a time: ranges of equal strings compare them whole.
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// insertion sorts [lo, hi), whose keys share their first d bytes,
// stably; with long strings, exactly.
func (s *radixSorter) insertion(lo, hi, d int, pos []int) {
	st, w, buf := s.stride, s.width, s.buf
	for i := lo + 1; i < hi; i++ {
		e := buf[i*st : (i+1)*st]
		j := i
		if s.str != nil {
			for j > lo && s.exact(buf[(j-1)*st:j*st], e, pos) > 0 {
				j--
			}
		} else {
			for j > lo && bytes.Compare(buf[(j-1)*st+d:(j-1)*st+w], e[d:w]) > 0 {
				j--
			}
		}
		if j < i {
			copy(s.entry, e)
			copy(buf[(j+1)*st:(i+1)*st], buf[j*st:i*st])
			copy(buf[j*st:], s.entry)
		}
	}
}

// exact orders two entries of a range whose string keys hold the windows
// at pos: by compareKeys, on the strings from their windows on (the range
// shares what comes before), then by row number.
func (s *radixSorter) exact(a, b []byte, pos []int) int {
	ra, rb := entryRow(a, s.stride), entryRow(b, s.stride)
	if c := compareKeys(s.nk, a[:s.width], b[:s.width], ra, rb, s.str, pos); c != 0 {
		return c
	}
	return cmpOrdered(ra, rb)
}

// entryRow is the row number of the entry at e.
func entryRow(e []byte, stride int) int32 {
	return int32(binary.LittleEndian.Uint32(e[stride-entryIdx:]))
}

func setEntryRow(e []byte, stride int, row int32) {
	binary.LittleEndian.PutUint32(e[stride-entryIdx:], uint32(row))
}
