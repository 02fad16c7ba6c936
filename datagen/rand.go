package datagen

import "math/bits"

// Rand is a small random stream (splitmix64). A generator makes one per
// row (or per entity) from (seed, stream, index) with NewRand, so a row's
// values do not depend on which rows were generated before it: chunks can
// be generated in any order, in parallel, with identical results.
type Rand struct{ s uint64 }

// NewRand starts the stream of row index in stream (a table or a column
// group) under seed.
func NewRand(seed, stream, index uint64) Rand {
	return Rand{s: Mix(seed ^ Mix(stream*0x9E3779B97F4A7C15^Mix(index+0x632BE59BD9B4E019)))}
}

// Mix is splitmix64's finaliser: a bijective scramble of x, also used as
// a stateless hash of an index.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

// Uint64 is the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9E3779B97F4A7C15
	return Mix(r.s)
}

// Intn is uniform in [0, n) (n > 0), by multiply-shift (no modulo bias
// worth the name at these ranges, and no division).
func (r *Rand) Intn(n int64) int64 {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int64(hi)
}

// Range is uniform in [lo, hi].
func (r *Rand) Range(lo, hi int64) int64 { return lo + r.Intn(hi-lo+1) }

// Float64 is uniform in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Weighted picks indexes with fixed integer weights in O(1): the index of
// each item repeated weight times. Fine for the small weights of word
// lists and category mixes.
type Weighted struct{ slots []uint16 }

// NewWeighted builds the picker; weights must be non-negative with a
// positive sum below 65536.
func NewWeighted(weights []int) Weighted {
	var w Weighted
	for i, n := range weights {
		for range n {
			w.slots = append(w.slots, uint16(i))
		}
	}
	return w
}

// Pick draws an index.
func (w Weighted) Pick(r *Rand) int { return int(w.slots[r.Intn(int64(len(w.slots)))]) }
