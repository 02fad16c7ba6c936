package jsonfile

import (
	"os"
	"path/filepath"
	"testing"

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
