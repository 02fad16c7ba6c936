package nexmark

import (
	"math"
	"math/bits"
	"slices"
)

// The reference generator seeds java.util.Random with the event id, so event
// n is the same whoever generates it. We keep that property with splitmix64
// and go one step further: every field draws from its own stream, derived
// from (seed, event id, field). A field's value therefore does not depend on
// which other fields were generated, which is what lets a projected scan skip
// the columns it was not asked for and still produce the same values.

const (
	gamma = 0x9e3779b97f4a7c15
	// streamStep separates the per-field streams of one event. It is odd and
	// unrelated to gamma, so the streams of an event do not overlap within the
	// few dozen draws a field makes.
	streamStep = 0xd1b54a32d192ed03
)

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// rng is a splitmix64 stream: tiny, lock-free and fast, unlike math/rand's
// global source.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += gamma
	return mix64(r.s)
}

// intn returns a value in [0, n) for n > 0 (Lemire's multiply-shift; the
// bias is below 2^-40 for the small n used here).
func (r *rng) intn(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// float returns a value in [0, 1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) * 0x1p-53
}

// field names a per-field stream. The values are part of the generator's
// output: renumbering them changes every generated value.
type field uint8

const (
	fPersonName field = iota + 1
	fPersonEmailUser
	fPersonEmailDomain
	fPersonCard
	fPersonCity
	fPersonState
	fPersonExtra
	fAuctionItemName
	fAuctionDesc
	fAuctionInitialBid
	fAuctionReserve
	fAuctionExpires
	fAuctionSeller
	fAuctionCategory
	fAuctionExtra
	fBidAuction
	fBidBidder
	fBidPrice
	fBidChannel
	fBidExtra
)

const minStringLength = 3

// nextString is the reference StringsGenerator.nextString: 3..maxLength-1
// characters, lower-case letters with 1 in 13 replaced by special, trimmed
// of spaces at both ends. It consumes one draw for the length and one per
// six characters.
func nextString(dst []byte, r *rng, maxLength int64, special byte) []byte {
	n := int(minStringLength + r.intn(maxLength-minStringLength))
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	s := dst[start:]
	var x uint64
	for i := range s {
		if i%6 == 0 {
			x = r.next()
		}
		// Each character takes the next base-338 digit of x (13*26
		// outcomes, ~8.4 bits): 26 of them (1 in 13) are the special
		// character, the rest spread evenly over the letters.
		v, lo := bits.Mul64(x, 338)
		x = lo
		if v < 26 {
			s[i] = special
		} else {
			s[i] = 'a' + byte(v%26)
		}
	}
	if special == ' ' {
		lo, hi := 0, len(s)
		for lo < hi && s[lo] == ' ' {
			lo++
		}
		for hi > lo && s[hi-1] == ' ' {
			hi--
		}
		if lo > 0 {
			copy(s, s[lo:hi])
		}
		dst = dst[:start+hi-lo]
	}
	return dst
}

// stringLength is the untrimmed length nextString will draw from a fresh
// stream; the extra-size computations use it so they need not build the
// string.
func stringLength(r rng, maxLength int64) int {
	return int(minStringLength + r.intn(maxLength-minStringLength))
}

// nextExactString appends n lower-case letters. Each draw gives eight: the
// first eight base-26 digits of the draw read as a fraction (~38 of its 64
// bits). It writes by index into grown space; appending a few bytes at a
// time cost a memmove call per draw.
func nextExactString(dst []byte, r *rng, n int) []byte {
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	s := dst[start:]
	for len(s) >= 8 {
		x := r.next()
		_ = s[7]
		for j := 0; j < 8; j++ {
			hi, lo := bits.Mul64(x, 26)
			s[j] = 'a' + byte(hi)
			x = lo
		}
		s = s[8:]
	}
	if len(s) > 0 {
		x := r.next()
		for i := range s {
			hi, lo := bits.Mul64(x, 26)
			s[i] = 'a' + byte(hi)
			x = lo
		}
	}
	return dst
}

// nextExtra is the reference StringsGenerator.nextExtra: pads an event to
// desiredAverage bytes on average (+-20%) given currentSize bytes of other
// fields.
func nextExtra(dst []byte, r *rng, currentSize, desiredAverage int) []byte {
	if currentSize > desiredAverage {
		return dst
	}
	d := desiredAverage - currentSize
	delta := int(math.Round(float64(d) * 0.2))
	size := d - delta
	if delta != 0 {
		size += int(r.intn(int64(2 * delta)))
	}
	return nextExactString(dst, r, size)
}

// nextPrice is the reference PriceGenerator: 10^(6u) * 100 cents, a
// log-uniform price between $1 and $1,000,000. exp is cheaper than pow.
func nextPrice(r *rng) int64 {
	return int64(math.Round(math.Exp(r.float()*6*math.Ln10) * 100))
}

// appendPadded4 appends v (0..9999) as four digits, like "%04d".
func appendPadded4(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
