package engine

import "testing"

// ORDER BY over the 2M generated bids: a top-5 and a full sort, by one and
// two keys, BIGINT and VARCHAR. The full sorts return every row (the
// result writer counts them without reading them).

func BenchmarkOrderByLimit5Bigint(b *testing.B) {
	benchQuery(b, "SELECT auction, price FROM '%s' ORDER BY price DESC LIMIT 5")
}

func BenchmarkOrderByLimit5TwoKeys(b *testing.B) {
	benchQuery(b, "SELECT auction, bidder, price FROM '%s' ORDER BY auction, price DESC LIMIT 5")
}

func BenchmarkOrderByLimit5Varchar(b *testing.B) {
	benchQuery(b, "SELECT url, price FROM '%s' ORDER BY url DESC LIMIT 5")
}

func BenchmarkOrderByLimit5VarcharTwoKeys(b *testing.B) {
	benchQuery(b, "SELECT channel, url, price FROM '%s' ORDER BY channel, url LIMIT 5")
}

func BenchmarkOrderByBigint(b *testing.B) {
	benchQuery(b, "SELECT auction, price FROM '%s' ORDER BY price DESC")
}

func BenchmarkOrderByTwoKeys(b *testing.B) {
	benchQuery(b, "SELECT auction, bidder, price FROM '%s' ORDER BY auction, price DESC")
}

func BenchmarkOrderByVarchar(b *testing.B) {
	benchQuery(b, "SELECT url, price FROM '%s' ORDER BY url")
}

func BenchmarkOrderByVarcharTwoKeys(b *testing.B) {
	benchQuery(b, "SELECT channel, url, price FROM '%s' ORDER BY channel, url")
}
