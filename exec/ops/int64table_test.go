package ops

import (
	"math"
	"math/rand"
	"testing"
)

// The table agrees with a Go map across growth, for keys that collide in
// their home slots and for 0, negative and extreme keys.
func TestInt64TableMatchesMap(t *testing.T) {
	tab := newInt64Table()
	ref := map[int64]int32{}
	r := rand.New(rand.NewSource(1))
	keys := []int64{0, -1, 1, math.MinInt64, math.MaxInt64}
	for i := 0; i < 50000; i++ {
		switch i % 3 {
		case 0:
			keys = append(keys, r.Int63n(1000)) // many repeats
		case 1:
			keys = append(keys, int64(i)<<20) // same low bits
		default:
			keys = append(keys, -r.Int63())
		}
	}
	for _, k := range keys {
		id, ok := tab.get(k)
		want, wok := ref[k]
		if ok != wok || (ok && id != want) {
			t.Fatalf("get(%d) = %d, %v; want %d, %v", k, id, ok, want, wok)
		}
		if !ok {
			next := int32(len(ref))
			tab.put(k, next)
			ref[k] = next
		}
	}
	if tab.n != len(ref) {
		t.Fatalf("%d keys in the table, %d distinct", tab.n, len(ref))
	}
	for k, want := range ref {
		if id, ok := tab.get(k); !ok || id != want {
			t.Fatalf("after growth get(%d) = %d, %v; want %d", k, id, ok, want)
		}
	}
	if _, ok := tab.get(12345678901); ok {
		t.Fatal("found a key never put")
	}
}
