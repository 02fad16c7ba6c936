package nexmark

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// valueType is a leaf's Arrow type, as the builders see it.
type valueType uint8

const (
	valInt32 valueType = iota
	valInt64
	valTimestamp
	valString
)

func (v valueType) arrow() arrow.DataType {
	switch v {
	case valInt32:
		return arrow.PrimitiveTypes.Int32
	case valInt64:
		return arrow.PrimitiveTypes.Int64
	case valTimestamp:
		// TIMESTAMP(3): milliseconds, no time zone.
		return &arrow.TimestampType{Unit: arrow.Millisecond}
	}
	return arrow.BinaryTypes.String
}

// leaf is one generated scalar: a column of a flat table or a field of the
// wide table's ROWs. Exactly one of i64 and str is set. The functions are
// method expressions on *gen, so filling a column costs one indirect call
// per value and no closure.
type leaf struct {
	name string
	typ  valueType
	i64  func(g *gen, e *event) int64
	str  func(g *gen, dst []byte, e *event) []byte
	// avgLen is a string's average length: the data buffer of a batch is
	// reserved for 5/4 of it (TestAvgLen keeps it honest).
	avgLen int
}

// column is one top-level generated column: a leaf, or (fields != nil) a
// ROW of the event kind `kind`, null on the rows of other kinds.
type column struct {
	name   string
	leaf   leaf
	kind   uint8
	fields []leaf
}

func (c *column) dataType() arrow.DataType {
	if c.fields == nil {
		return c.leaf.typ.arrow()
	}
	fs := make([]arrow.Field, len(c.fields))
	for i, f := range c.fields {
		fs[i] = arrow.Field{Name: f.name, Type: f.typ.arrow(), Nullable: true}
	}
	return arrow.StructOf(fs...)
}

var (
	personLeaves = []leaf{
		{name: "id", typ: valInt64, i64: (*gen).personID},
		{name: "name", typ: valString, str: (*gen).personName, avgLen: 12},
		{name: "emailAddress", typ: valString, str: (*gen).personEmail, avgLen: 13},
		{name: "creditCard", typ: valString, str: (*gen).personCard, avgLen: 19},
		{name: "city", typ: valString, str: (*gen).personCity, avgLen: 8},
		{name: "state", typ: valString, str: (*gen).personState, avgLen: 2},
		{name: "dateTime", typ: valTimestamp, i64: (*gen).dateTime},
		{name: "extra", typ: valString, str: (*gen).personExtra, avgLen: 138},
	}
	auctionLeaves = []leaf{
		{name: "id", typ: valInt64, i64: (*gen).auctionID},
		{name: "itemName", typ: valString, str: (*gen).auctionItemName, avgLen: 11},
		{name: "description", typ: valString, str: (*gen).auctionDesc, avgLen: 51},
		{name: "initialBid", typ: valInt64, i64: (*gen).auctionInitialBid},
		{name: "reserve", typ: valInt64, i64: (*gen).auctionReserve},
		{name: "dateTime", typ: valTimestamp, i64: (*gen).dateTime},
		{name: "expires", typ: valTimestamp, i64: (*gen).auctionExpires},
		{name: "seller", typ: valInt64, i64: (*gen).auctionSeller},
		{name: "category", typ: valInt64, i64: (*gen).auctionCategory},
		{name: "extra", typ: valString, str: (*gen).auctionExtra, avgLen: 390},
	}
	bidLeaves = []leaf{
		{name: "auction", typ: valInt64, i64: (*gen).bidAuction},
		{name: "bidder", typ: valInt64, i64: (*gen).bidBidder},
		{name: "price", typ: valInt64, i64: (*gen).bidPrice},
		{name: "channel", typ: valString, str: (*gen).bidChannel, avgLen: 9},
		{name: "url", typ: valString, str: (*gen).bidURL, avgLen: 64},
		{name: "dateTime", typ: valTimestamp, i64: (*gen).dateTime},
		{name: "extra", typ: valString, str: (*gen).bidExtra, avgLen: 68},
	}
	eventTypeLeaf = leaf{name: "event_type", typ: valInt32}
	dateTimeLeaf  = leaf{name: "dateTime", typ: valTimestamp, i64: (*gen).dateTime}
)

// tableKinds maps the 'table' option to the event kind a table holds.
var tableKinds = map[string]uint8{
	"nexmark": kindAny,
	"person":  kindPerson,
	"auction": kindAuction,
	"bid":     kindBid,
}

// generatedColumns is the full column list of a table: the wide table of
// ddl_gen.sql (plus its dateTime, which ddl_gen.sql computes from the ROWs)
// or the columns of one ddl_views.sql view.
func generatedColumns(kind uint8) []column {
	flat := func(ls []leaf) []column {
		cols := make([]column, len(ls))
		for i, l := range ls {
			cols[i] = column{name: l.name, leaf: l, kind: kind}
		}
		return cols
	}
	switch kind {
	case kindPerson:
		return flat(personLeaves)
	case kindAuction:
		return flat(auctionLeaves)
	case kindBid:
		return flat(bidLeaves)
	}
	return []column{
		{name: "event_type", leaf: eventTypeLeaf, kind: kindAny},
		{name: "person", kind: kindPerson, fields: personLeaves},
		{name: "auction", kind: kindAuction, fields: auctionLeaves},
		{name: "bid", kind: kindBid, fields: bidLeaves},
		{name: "dateTime", leaf: dateTimeLeaf, kind: kindAny},
	}
}

// bindDeclared matches the CREATE TABLE columns against the generated ones.
// Names match case-insensitively (ROW field names too, in order); types
// must be the same. The declared columns may be a subset in any order: the
// wide table of ddl_gen.sql declares no dateTime, because the planner
// computes it. The returned columns are in declared order, and the schema
// keeps the declared spelling so the planner sees its own names.
func bindDeclared(table string, gen []column, declared *arrow.Schema) (*arrow.Schema, []column, error) {
	if declared == nil {
		fs := make([]arrow.Field, len(gen))
		for i := range gen {
			fs[i] = arrow.Field{Name: gen[i].name, Type: gen[i].dataType(), Nullable: true}
		}
		return arrow.NewSchema(fs, nil), gen, nil
	}
	names := make([]string, len(gen))
	for i := range gen {
		names[i] = gen[i].name
	}
	cols := make([]column, 0, declared.NumFields())
	seen := map[string]bool{}
	for pos, df := range declared.Fields() {
		key := strings.ToLower(df.Name)
		if seen[key] {
			return nil, nil, fmt.Errorf("nexmark: table '%s': column %q (position %d) is declared twice", table, df.Name, pos+1)
		}
		seen[key] = true
		var c *column
		for i := range gen {
			if strings.EqualFold(gen[i].name, df.Name) {
				c = &gen[i]
				break
			}
		}
		if c == nil {
			return nil, nil, fmt.Errorf("nexmark: table '%s': declared column %q (position %d) is not generated; the generated columns are %s",
				table, df.Name, pos+1, strings.Join(names, ", "))
		}
		if want := c.dataType(); !sameType(df.Type, want) {
			return nil, nil, fmt.Errorf("nexmark: table '%s': column %q (position %d) is declared %s but the generator produces %s",
				table, df.Name, pos+1, df.Type, want)
		}
		cols = append(cols, *c)
	}
	return declared, cols, nil
}

// sameType compares a declared type with a generated one: same Arrow type,
// with ROW field names compared case-insensitively and nullability ignored.
func sameType(declared, generated arrow.DataType) bool {
	if declared.ID() != generated.ID() {
		return false
	}
	switch d := declared.(type) {
	case *arrow.StructType:
		g := generated.(*arrow.StructType)
		if d.NumFields() != g.NumFields() {
			return false
		}
		for i := 0; i < d.NumFields(); i++ {
			if !strings.EqualFold(d.Field(i).Name, g.Field(i).Name) || !sameType(d.Field(i).Type, g.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.TimestampType:
		// The values are epoch milliseconds either way; a binder that tags
		// TIMESTAMP(3) with a zone only changes how they print, and the
		// batches are built with the declared type.
		return d.Unit == generated.(*arrow.TimestampType).Unit
	}
	return arrow.TypeEqual(declared, generated)
}
