package main

import (
	"fmt"
	"strings"
)

// benchQuery is one query in both dialects. {bids}, {auctions} and {json}
// stand for the data files' paths.
type benchQuery struct {
	Name  string
	About string
	Clink string
	Duck  string
	// Optional: a clink error means the feature is not in this build yet
	// ("not available"), not a failed run.
	Optional bool
}

// duckBidsJSON reads the NDJSON with the types the Parquet file has, so
// DuckDB does not spend time (or guess) sampling the schema.
const duckBidsJSON = `read_json('{json}', format = 'newline_delimited', columns = {auction: 'BIGINT', bidder: 'BIGINT', price: 'BIGINT', channel: 'VARCHAR', url: 'VARCHAR', dateTime: 'TIMESTAMP', extra: 'VARCHAR'})`

// queries are the benchmark, in run order. clink reads files through the
// path query form (FROM 'file.parquet'); DuckDB through read_parquet.
var queries = []benchQuery{
	{
		Name:  "scan",
		About: "full scan: every column of every row",
		Clink: "SELECT COUNT(*), SUM(price), MAX(bidder), MAX(auction), MAX(channel), MAX(url), MAX(dateTime), MAX(extra) FROM '{bids}'",
		Duck:  "SELECT COUNT(*), SUM(price), MAX(bidder), MAX(auction), MAX(channel), MAX(url), MAX(dateTime), MAX(extra) FROM read_parquet('{bids}')",
	},
	{
		Name:  "filter",
		About: "scan + filter + aggregate",
		Clink: "SELECT channel, COUNT(*), SUM(price) FROM '{bids}' WHERE price > 1000 GROUP BY channel",
		Duck:  "SELECT channel, COUNT(*), SUM(price) FROM read_parquet('{bids}') WHERE price > 1000 GROUP BY channel",
	},
	{
		Name:  "groupby-string",
		About: "GROUP BY a string key (url, ~10k groups)",
		Clink: "SELECT url, COUNT(*), MAX(price) FROM '{bids}' GROUP BY url",
		Duck:  "SELECT url, COUNT(*), MAX(price) FROM read_parquet('{bids}') GROUP BY url",
	},
	{
		Name:  "groupby-high",
		About: "high-cardinality GROUP BY (auction)",
		Clink: "SELECT auction, COUNT(*), MAX(price) FROM '{bids}' GROUP BY auction",
		Duck:  "SELECT auction, COUNT(*), MAX(price) FROM read_parquet('{bids}') GROUP BY auction",
	},
	{
		Name:  "join",
		About: "bids JOIN auctions ON auction = id, aggregated by category",
		Clink: "SELECT a.category, COUNT(*), SUM(b.price) FROM '{bids}' AS b JOIN '{auctions}' AS a ON b.auction = a.id GROUP BY a.category",
		Duck:  "SELECT a.category, COUNT(*), SUM(b.price) FROM read_parquet('{bids}') AS b JOIN read_parquet('{auctions}') AS a ON b.auction = a.id GROUP BY a.category",
	},
	{
		Name:     "json",
		About:    "NDJSON decoding (the Kafka JSON shape)",
		Clink:    "SELECT COUNT(*), SUM(price) FROM '{json}'",
		Duck:     "SELECT COUNT(*), SUM(price) FROM " + duckBidsJSON,
		Optional: true,
	},
}

// selectQueries picks the queries named in a comma-separated list ("" or
// "all": every query), in benchmark order.
func selectQueries(list string) ([]benchQuery, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return queries, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := false
		for _, q := range queries {
			found = found || q.Name == n
		}
		if !found {
			return nil, fmt.Errorf("-queries: unknown query %q (known: %s)", n, strings.Join(queryNames(), ", "))
		}
		want[n] = true
	}
	var out []benchQuery
	for _, q := range queries {
		if want[q.Name] {
			out = append(out, q)
		}
	}
	return out, nil
}

func queryNames() []string {
	names := make([]string, len(queries))
	for i, q := range queries {
		names[i] = q.Name
	}
	return names
}

// bind substitutes the data files' paths into a query. A path with a
// quote would need escaping that the two dialects do differently, so it
// is refused instead.
func bind(q string, ds dataset) (string, error) {
	for _, p := range []string{ds.Bids, ds.Auctions, ds.BidsJSON} {
		if strings.ContainsAny(p, `'\`) {
			return "", fmt.Errorf("data path %q contains a quote or backslash; use -data with a plain path", p)
		}
	}
	return strings.NewReplacer("{bids}", ds.Bids, "{auctions}", ds.Auctions, "{json}", ds.BidsJSON).Replace(q), nil
}
