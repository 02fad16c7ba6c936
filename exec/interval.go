package exec

import "github.com/apache/arrow-go/v18/arrow"

const nsPerDay = int64(86400e9)

// IntervalKey is an INTERVAL normalised for comparison, as PostgreSQL's
// interval_cmp normalises: whole days (a month counts 30, 24 hours make a
// day) and the nanoseconds left, 0 <= rem < one day. Two intervals are
// equal (=, GROUP BY, DISTINCT, join keys, set operations) exactly when
// their keys are, and order as their keys do, though '1 month' and '30
// days' stay different values in arithmetic.
func IntervalKey(v arrow.MonthDayNanoInterval) (days, rem int64) {
	q := v.Nanoseconds / nsPerDay
	r := v.Nanoseconds % nsPerDay
	if r < 0 {
		q--
		r += nsPerDay
	}
	return int64(v.Months)*30 + int64(v.Days) + q, r
}

// CompareIntervals orders two intervals by IntervalKey: -1, 0 or 1.
func CompareIntervals(a, b arrow.MonthDayNanoInterval) int {
	da, ra := IntervalKey(a)
	db, rb := IntervalKey(b)
	switch {
	case da < db, da == db && ra < rb:
		return -1
	case da == db && ra == rb:
		return 0
	}
	return 1
}
