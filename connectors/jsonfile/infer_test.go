package jsonfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestInferSchema(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	data := `{"id":1,"name":"a","ts":"2015-07-15 00:00:01.123","score":1,"tags":["x"],"row":{"p":1},"gone":null,"mixed":1}
not json at all
{"id":2,"name":null,"ts":"2015-07-15T00:00:02","score":2.5,"tags":[],"row":{"p":2,"q":true},"extra":"late key","mixed":"one"}
{"row":{"q":false,"p":3},"id":3.5,"tags":[7]}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := inferSchema(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, // 3.5 in a record of known keys
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "row", Type: arrow.StructOf(
			arrow.Field{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "q", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
		{Name: "gone", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "mixed", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	if !s.Equal(want) {
		t.Fatalf("inferred\n%s\nwant\n%s", s, want)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte("nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := inferSchema(empty, 100); err == nil {
		t.Fatal("a file without objects inferred a schema")
	}
}

// inferSchemaRef is the encoding/json inference that inferSchema replaced,
// kept as the reference it must agree with on every input.
func inferSchemaRef(path string, n int) (*arrow.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	root := newShape()
	root.kind = kObject
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line, seen := 0, 0
	for seen < n && sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		// Decoding a record into a map is several times faster than
		// walking its tokens (inference ran for 15 ms of every query on a
		// file), but a map forgets the order of its keys, which orders
		// the columns: a record with a key not seen before is read again
		// token by token. Merging a record twice changes nothing.
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			continue // the decoder reports bad records when scanning
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue // not an object
		}
		if !refMergeKnown(obj, root) {
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			if _, err := dec.Token(); err != nil {
				continue
			}
			if err := refMergeObject(dec, root); err != nil {
				continue
			}
		}
		seen++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if seen == 0 {
		return nil, fmt.Errorf("%s: no JSON object in the first %d lines to infer columns from; declare them in CREATE TABLE", path, line)
	}
	fs := make([]arrow.Field, len(root.fields))
	for i, name := range root.fields {
		fs[i] = arrow.Field{Name: name, Type: root.byName[name].arrowType(), Nullable: true}
	}
	return arrow.NewSchema(fs, nil), nil
}

// refMergeObject reads an object's members (after its '{') into s.
func refMergeObject(dec *json.Decoder, s *shape) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key is not a string")
		}
		child, ok := s.byName[name]
		if !ok {
			child = newShape()
			s.byName[name] = child
			s.fields = append(s.fields, name)
		}
		if err := refMergeValue(dec, child); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// refMergeValue reads one value into s, widening its kind.
func refMergeValue(dec *json.Decoder, s *shape) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case nil:
		return nil
	case bool:
		s.widen(kBool)
	case json.Number:
		if _, err := v.Int64(); err == nil {
			s.widen(kInt)
		} else {
			s.widen(kFloat)
		}
	case string:
		if isTimestamp(v) {
			s.widen(kTimestamp)
		} else {
			s.widen(kString)
		}
	case json.Delim:
		switch v {
		case '{':
			s.widen(kObject)
			if s.kind != kObject {
				return refSkipRest(dec, 1)
			}
			return refMergeObject(dec, s)
		case '[':
			s.widen(kArray)
			if s.kind != kArray {
				return refSkipRest(dec, 1)
			}
			if s.elem == nil {
				s.elem = newShape()
			}
			for dec.More() {
				if err := refMergeValue(dec, s.elem); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ']'
			return err
		}
	}
	return nil
}

// refMergeKnown merges a decoded object into s, as refMergeObject does, and
// reports false, stopping, at a key s (or a nested object's shape) has not
// seen: only the token walk knows where the new key goes in the order.
func refMergeKnown(obj map[string]any, s *shape) bool {
	for name, v := range obj {
		child, ok := s.byName[name]
		if !ok || !refMergeDecoded(v, child) {
			return false
		}
	}
	return true
}

// refMergeDecoded is refMergeValue for a decoded value.
func refMergeDecoded(v any, s *shape) bool {
	switch x := v.(type) {
	case nil:
	case bool:
		s.widen(kBool)
	case json.Number:
		if _, err := x.Int64(); err == nil {
			s.widen(kInt)
		} else {
			s.widen(kFloat)
		}
	case string:
		if isTimestamp(x) {
			s.widen(kTimestamp)
		} else {
			s.widen(kString)
		}
	case map[string]any:
		s.widen(kObject)
		if s.kind == kObject {
			return refMergeKnown(x, s)
		}
	case []any:
		s.widen(kArray)
		if s.kind != kArray {
			return true
		}
		if s.elem == nil {
			s.elem = newShape()
		}
		for _, e := range x {
			if !refMergeDecoded(e, s.elem) {
				return false
			}
		}
	}
	return true
}

// refSkipRest consumes the rest of a container whose opening token was read.
func refSkipRest(dec *json.Decoder, depth int) error {
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	}
	return nil
}

// The tests below hold inferSchema to the reference on generated files:
// valid records with repeated and escaped keys, numbers at the int64 edges,
// timestamps and near misses, and lines that are invalid in many ways.

// inferGen generates NDJSON lines.
type inferGen struct {
	r   *rand.Rand
	bad int // numbers the keys of invalid lines, so accepting one shows
}

// Keys are raw JSON: several decode to the same name ("a" and "\u0061";
// invalid UTF-8, a lone surrogate and U+FFFD itself all decode to U+FFFD).
var genKeys = []string{
	`"a"`, `"b"`, `"c"`, `"ts"`, `"a"`, `"b"`, `"\u0061"`, `"a\"b"`, `"\u00e9"`, "\"\xc3\xa9\"",
	"\"\xff\"", `"\ufffd"`, "\"\xef\xbf\xbd\"", `"\ud800"`, `"\udc00x"`, `"\ud83d\ude00"`,
	"\"\xf0\x9f\x98\x80\"", `""`, `"\/"`, `"/"`, `"\t"`, `"a\u0000b"`, "\"\x7f\"",
}

var genNumbers = []string{
	"0", "-0", "1", "-1", "42", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"12345678901234567890123", "999999999999999999", "1000000000000000000",
	"1.5", "-0.0", "0.0", "1e3", "1E+3", "1e-3", "-2.5e10", "1.0", "0e0", "-0e-0",
	"9223372036854775807.0", "9223372036854775807e0", "1e400", "-1e400",
}

var genStrings = []string{
	`"2015-07-15 00:00:00.000"`, `"2015-07-15 00:00:00"`, `"2015-07-15T00:00:02"`,
	`"2015-07-15T00:00:02Z"`, `"2015-07-15T00:00:02.123+02:00"`, `"2015-07-15T00:00:02.123456789"`,
	`"2015-07-15 00:00:0"`, `"2015-07-15X00:00:00"`, `"2015-13-15 00:00:00"`,
	`"2015-07-15 00:00:00 "`, `"2015-07-15T00:00:00+0200"`, `"2015/07/15 00:00:00"`,
	`"2015-07-15 25:00:00"`, `"2015-07-15 00:00:00.12x"`, `"15-07-15 00:00:00.000000"`,
	`"2015-07-15\u002000:00:00"`, `"2015-07-15\u0020 00:00:00"`, `"\u0032015-07-15 00:00:00"`,
	`"2015-07-15T00:00:00\u005a"`, "\"2015-07-15 00:00:00\xff\"", "\"2015-07-15 00:00:00\xc3\xa9\"",
	`"2015-07-15 00:00:00\/"`, `"2015\u002d07-15 00:00:00"`,
	`"x"`, `""`, `"\n"`, `"\""`, `"\\"`, `"\u00e9"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\xfe\"",
	`"\b\f\r\t"`, "\"\x7f\"", `"channel-593"`,
}

// Invalid values: each makes a record invalid wherever it goes.
var genBadValues = []string{
	"tru", "nul", "fals", "truex", "nulll", "01", "-01", "00", "-", "1.", ".5", "+1", "1e", "1e+", "1.e3",
	"0x10", "1_000", "NaN", "Infinity", "-Infinity", "'a'", `"a` + "\x01" + `"`, "\"\t\"", `"\x"`,
	`"\u12"`, `"\u12g4"`, `"\U0041"`, `"unterminated`, `{a:1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`,
	`{"a":1 "b":2}`, `{,}`, `[1 2]`, `{"a"}`, `{"a":}`, `{1:2}`, `}`, `]`, ``, "\x00", "\u00a0", "\v1",
}

func (g *inferGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// ws is JSON whitespace, usually none.
func (g *inferGen) ws() string {
	if g.r.IntN(4) > 0 {
		return ""
	}
	return g.pick([]string{" ", "\t", "\r", "  ", " \t\r "})
}

func (g *inferGen) value(depth int) string {
	n := 9
	if depth >= 4 {
		n = 7 // no more containers
	}
	switch g.r.IntN(n) {
	case 0:
		return "null"
	case 1:
		return g.pick([]string{"true", "false"})
	case 2:
		if g.r.IntN(2) == 0 {
			return strconv.FormatInt((g.r.Int64()>>g.r.IntN(64))*int64(1-2*g.r.IntN(2)), 10)
		}
		return g.pick(genNumbers)
	case 3:
		return strconv.FormatFloat(g.r.NormFloat64()*math.Pow(10, float64(g.r.IntN(40)-20)), 'g', -1, 64)
	case 4, 5, 6:
		return g.pick(genStrings)
	case 7:
		return g.object(depth + 1)
	default:
		return g.array(depth + 1)
	}
}

// object is an object of up to 4 keys, or sometimes a wide one: keys k0,
// k1, ... past dupKeysInMap, shuffled, and perhaps one of them repeated.
func (g *inferGen) object(depth int) string {
	if g.r.IntN(10) == 0 {
		return g.wideObject()
	}
	var b strings.Builder
	b.WriteString("{" + g.ws())
	for i := range g.r.IntN(5) {
		if i > 0 {
			b.WriteString("," + g.ws())
		}
		b.WriteString(g.pick(genKeys) + g.ws() + ":" + g.ws() + g.value(depth) + g.ws())
	}
	b.WriteString("}")
	return b.String()
}

func (g *inferGen) wideObject() string {
	keys := make([]string, dupKeysInMap+g.r.IntN(8))
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d"`, i)
	}
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	if g.r.IntN(2) == 0 {
		keys = slices.Insert(keys, g.r.IntN(len(keys)+1), keys[g.r.IntN(len(keys))])
	}
	members := make([]string, len(keys))
	for i, k := range keys {
		members[i] = k + ":" + g.value(4) // scalars, so records of known keys are common
	}
	return "{" + strings.Join(members, ",") + "}"
}

func (g *inferGen) array(depth int) string {
	var b strings.Builder
	b.WriteString("[" + g.ws())
	for i := range g.r.IntN(4) {
		if i > 0 {
			b.WriteString("," + g.ws())
		}
		b.WriteString(g.value(depth) + g.ws())
	}
	b.WriteString("]")
	return b.String()
}

// badKey is a key no valid line has: an invalid line accepted adds it.
func (g *inferGen) badKey() string {
	g.bad++
	return fmt.Sprintf(`"bad%d"`, g.bad)
}

// line is one line of a file: mostly valid objects, then lines that are
// invalid in many ways, blank and non-object lines.
func (g *inferGen) line() string {
	switch g.r.IntN(20) {
	case 0: // truncated
		obj := `{` + g.badKey() + `:1,` + g.object(0)[1:]
		return obj[:g.r.IntN(len(obj))]
	case 1: // an invalid value somewhere
		return `{` + g.badKey() + `:[` + g.value(3) + `],"x":{"y":` + g.pick(genBadValues) + `}}`
	case 2: // a byte replaced, inserted or dropped
		obj := []byte(`{` + g.badKey() + `:1,` + g.object(0)[1:])
		i := g.r.IntN(len(obj))
		c := "{}[]\",:0-.eE tfnu\\\x01\xff"[g.r.IntN(19)]
		switch g.r.IntN(3) {
		case 0:
			obj[i] = c
		case 1:
			obj = append(obj[:i], append([]byte{c}, obj[i:]...)...)
		default:
			obj = append(obj[:i], obj[i+1:]...)
		}
		return string(obj)
	case 3: // trailing bytes, which json.Decoder.Decode never reads
		return g.object(0) + g.pick([]string{" garbage", "}", ",", "]", `{"z":1}`, ` {"z":`, "tru", " \x01"})
	case 4: // blank or not an object
		return g.pick([]string{"", "   ", "\t", "\f", "\v", "\u00a0", "\u0085", "\r", "[1,2]", "5", `"s"`, "null",
			"true", `[{"a":1}]`, "-", "\xef\xbb\xbf{\"a\":1}", "{", "}", `{"a":1`, "x"})
	case 5: // leading whitespace encoding/json would not skip, trimmed first
		return g.pick([]string{" ", "\t", "\f", "\v", "\u00a0", "\u0085", "\u2028"}) + g.object(0)
	}
	return g.ws() + g.object(0)
}

// file is a file of up to 12 lines, sometimes with CRLF endings and no
// final newline.
func (g *inferGen) file() string {
	lines := make([]string, 1+g.r.IntN(12))
	for i := range lines {
		lines[i] = g.line()
	}
	sep := "\n"
	if g.r.IntN(8) == 0 {
		sep = "\r\n"
	}
	s := strings.Join(lines, sep)
	if g.r.IntN(2) == 0 {
		s += sep
	}
	return s
}

// agree infers the schema of data with both implementations, reading up to
// n records, and fails unless they agree.
func agree(t *testing.T, path, data string, n int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotErr := inferSchema(path, n)
	want, wantErr := inferSchemaRef(path, n)
	switch {
	case gotErr != nil || wantErr != nil:
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("n=%d, file %q:\nerror %v\nwant  %v", n, data, gotErr, wantErr)
		}
	case !got.Equal(want):
		t.Fatalf("n=%d, file %q:\ninferred\n%s\nwant\n%s", n, data, got, want)
	}
}

func TestInferSchemaMatchesReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := &inferGen{r: rand.New(rand.NewPCG(seed, 1))}
	path := filepath.Join(t.TempDir(), "x.json")
	files := 5000
	if testing.Short() {
		files = 500
	}
	for range files {
		n := []int{1, 2, 3, 5, 1000}[g.r.IntN(5)]
		agree(t, path, g.file(), n)
	}
}

// TestInferSchemaMatchesReferenceOnTrickyFiles covers what random files
// reach rarely: repeated keys whose earlier value would widen, nesting at
// encoding/json's depth limit, a file without objects.
func TestInferSchemaMatchesReferenceOnTrickyFiles(t *testing.T) {
	deep := func(depth int) string { // an object depth containers deep
		return `{"d":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	files := []string{
		"{\"a\":1}\n{\"a\":\"x\",\"a\":2}\n",       // known keys: only the last value counts
		"{\"a\":\"x\",\"a\":2}\n",                  // a new key: every value counts
		"{\"a\":1}\n{\"a\":\"x\",\"\\u0061\":2}\n", // repeated once decoded
		"{\"a\":1,\"o\":{\"p\":1}}\n{\"o\":{\"p\":\"x\",\"p\":2},\"a\":3}\n",
		"{\"o\":{\"p\":1}}\n{\"o\":{\"q\":1},\"o\":{\"p\":2}}\n", // the earlier value's new key is not read
		"{\"o\":{\"p\":1}}\n{\"o\":{\"p\":2},\"o\":{\"q\":1}}\n",
		"{\"l\":[{\"p\":1}]}\n{\"l\":[{\"p\":\"x\",\"p\":2},{\"p\":3}]}\n",
		"{\"l\":[{\"p\":1}]}\n{\"l\":[{\"p\":\"x\",\"p\":2},{\"q\":3}]}\n",
		"{\"a\":1}\n{\"a\":[1],\"a\":2,\"b\":1}\n",
		"{\"\xff\":1}\n{\"\\ufffd\":\"x\",\"\xfe\":2}\n",
		"{\"d\":1}\n" + deep(maxDepth) + "\n",   // valid: d widens to VARCHAR
		"{\"d\":1}\n" + deep(maxDepth+1) + "\n", // too deep: skipped
		"{\"a\":9223372036854775807}\n{\"b\":9223372036854775808}\n{\"c\":-9223372036854775808}\n{\"d\":-0}\n",
		"nope\n\n[1]\n",
		"",
	}
	path := filepath.Join(t.TempDir(), "x.json")
	for _, f := range files {
		for _, n := range []int{1, 1000} {
			agree(t, path, f, n)
		}
	}
}

// Issue 19: a line over the line scanner's 64 MB buffer failed inference
// with "bufio.Scanner: token too long". Lines up to maxInferLine infer; a
// longer one fails with an error that says what to do.
func TestInferSchemaLongLines(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MB")
	}
	path := filepath.Join(t.TempDir(), "x.json")
	data := `{"a":"` + strings.Repeat("x", 80<<20) + `","b":1}` + "\n" + `{"a":"y","b":2.5}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := inferSchema(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); !strings.Contains(got, "a: type=utf8") || !strings.Contains(got, "b: type=float64") {
		t.Fatalf("inferred %s, want a VARCHAR and b DOUBLE", got)
	}
}

func TestInferSchemaLineLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	const limit = 1 << 20
	ok := `{"a":"` + strings.Repeat("x", limit-8) + `"}` // limit bytes exactly
	for _, c := range []struct {
		data    string
		wantErr string
	}{
		{ok, ""},
		{ok + "\n", ""},
		{ok + "\r\n" + `{"b":1}`, "line 1 is longer than 1 MiB"},
		{`{"b":1}` + "\n" + ok + "x", "line 2 is longer than 1 MiB, the most schema inference reads; declare the columns in CREATE TABLE"},
		{`{"b":1}` + "\n" + ok + "x\n", "line 2 is longer than 1 MiB"},
	} {
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := inferSchemaUpTo(path, 1000, limit)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("line of %d bytes: %v, want %q", len(c.data), err, c.wantErr)
		}
	}
}

// TestWalkerValidMatchesDecoder holds the walker's validation to what the
// reference accepted: lines whose first value json.Decoder decodes to an
// object. Lines of random JSON-ish bytes find what generated lines miss.
func TestWalkerValidMatchesDecoder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	g := &inferGen{r: r}
	const alphabet = "{}[]\":, \t0123456789-+.eEtrufalsn\\/\x01\x7f\xc3\xa9\xff"
	var w walker
	for i := range 200000 {
		var line []byte
		if i%2 == 0 {
			line = []byte(g.line())
		} else {
			line = []byte{'{'}
			for range r.IntN(12) {
				line = append(line, alphabet[r.IntN(len(alphabet))])
			}
		}
		text := bytes.TrimSpace(line)
		if len(text) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		var v any
		isObject := false
		if dec.Decode(&v) == nil {
			_, isObject = v.(map[string]any)
		}
		if got := w.valid(text); got != isObject {
			t.Fatalf("%q: valid %v, encoding/json decodes an object: %v", text, got, isObject)
		}
	}
}

// FuzzInferSchemaMatchesReference runs the reference comparison on
// arbitrary files (go test -fuzz=FuzzInferSchemaMatchesReference).
func FuzzInferSchemaMatchesReference(f *testing.F) {
	g := &inferGen{r: rand.New(rand.NewPCG(1, 3))}
	for range 50 {
		f.Add(g.file())
	}
	path := filepath.Join(f.TempDir(), "x.json")
	f.Fuzz(func(t *testing.T, data string) {
		agree(t, path, data, 1000)
	})
}

// nexmarkLines is n bid records like those of the benchmarks' bids.json.
func nexmarkLines(n int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"auction":%d,"bidder":%d,"price":%d,"channel":"channel-%d","url":"https://www.nexmark.com/%s/%s/%s/item.htm?query=1&channel_id=%d","dateTime":"2015-07-15 00:%02d:%02d.%03d","extra":"%s"}`+"\n",
			1000+r.IntN(1000), 1000+r.IntN(10000), r.IntN(10000000), r.IntN(10000), word(4), word(4), word(4),
			r.Uint32(), i/60%60, i%60, r.IntN(1000), word(40+r.IntN(40)))
	}
	return b.Bytes()
}

func BenchmarkInferSchema(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bids.json")
	if err := os.WriteFile(path, nexmarkLines(inferRecords), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, impl := range []struct {
		name  string
		infer func(string, int) (*arrow.Schema, error)
	}{{"walker", inferSchema}, {"encoding-json", inferSchemaRef}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := impl.infer(path, inferRecords); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestStringStop(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 4))
	const alphabet = "ab \"\\\x00\x01\x1f\x20\x21\x7f\x80\xff\x5b\x5d\x22\x23"
	for range 100000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		from := r.IntN(len(b) + 1)
		want := from
		for want < len(b) && b[want] != '"' && b[want] != '\\' && b[want] >= 0x20 && b[want] < 0x80 {
			want++
		}
		if got := stringStop(b, from); got != want {
			t.Fatalf("stringStop(%q, %d) = %d, want %d", b, from, got, want)
		}
	}
}
