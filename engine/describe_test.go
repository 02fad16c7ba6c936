package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// DESCRIBE shows what Flink's does: each column's name, type (the time
// attribute marked *ROWTIME*), nullability (a primary key column NOT
// NULL), key, extras (a computed column's expression as written, a
// METADATA column's key) and the watermark on its column.
func TestDescribeShowsKeyComputedMetadataWatermark(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, `CREATE TABLE ev (
		id BIGINT,
		ts TIMESTAMP(3),
		part INT METADATA FROM 'partition' VIRTUAL,
		"offset" BIGINT METADATA,
		d AS id  *  2,
		PRIMARY KEY (id) NOT ENFORCED,
		WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
	) WITH ('connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = 'localhost:1', 'format' = 'json')`)
	got := runRows(t, s, "DESCRIBE ev")
	want := []exec.Row{
		{"id", "BIGINT", "false", "PRI(id)", "", ""},
		{"ts", "TIMESTAMP(3) *ROWTIME*", "true", "", "", "ts - INTERVAL '5' SECOND"},
		{"part", "INT", "true", "", "METADATA FROM 'partition'", ""},
		{"offset", "BIGINT", "true", "", "METADATA", ""},
		{"d", "BIGINT", "true", "", "AS id  *  2", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DESCRIBE ev:\n%v\nwant\n%v", got, want)
	}
}

// DESCRIBE 'path' reads a file's columns without a table: Parquet by its
// footer (every column nullable, as DuckDB shows Parquet columns), NDJSON
// by inference, a glob of several files.
func TestDescribePath(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	for _, f := range []string{"a.parquet", "b.parquet"} {
		writeParquet(t, filepath.Join(dir, f), schema, []exec.Row{{int64(1), "x"}}, 10)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.ndjson"), []byte(`{"k": 1, "v": "a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	for path, want := range map[string][]exec.Row{
		"a.parquet": {{"id", "BIGINT", "true", "", "", ""}, {"name", "VARCHAR", "true", "", "", ""}},
		"*.parquet": {{"id", "BIGINT", "true", "", "", ""}, {"name", "VARCHAR", "true", "", "", ""}},
		"x.ndjson":  {{"k", "BIGINT", "true", "", "", ""}, {"v", "VARCHAR", "true", "", "", ""}},
	} {
		got := runRows(t, s, fmt.Sprintf("DESCRIBE '%s'", filepath.Join(dir, path)))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DESCRIBE '%s':\n%v\nwant\n%v", path, got, want)
		}
	}
}

// read_parquet('glob') and read_json('glob') read every file the glob
// matches, as DuckDB's table functions do, and take an alias.
func TestReadFileTableFunctionsOverGlobs(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	writeParquet(t, filepath.Join(dir, "p1.parquet"), schema, []exec.Row{{int64(1)}, {int64(2)}}, 1)
	writeParquet(t, filepath.Join(dir, "p2.parquet"), schema, []exec.Row{{int64(30)}}, 1)
	for name, text := range map[string]string{
		"j1.json": `{"id": 4, "s": "a"}` + "\n" + `{"id": 5, "s": "b"}` + "\n",
		"j2.json": `{"id": 600, "s": "c"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	for q, want := range map[string][]exec.Row{
		fmt.Sprintf("SELECT count(*), sum(id) FROM read_parquet('%s/p*.parquet')", dir):  {{int64(3), int64(33)}},
		fmt.Sprintf("SELECT count(*), sum(t.id) FROM read_json('%s/j*.json') AS t", dir): {{int64(3), int64(609)}},
		fmt.Sprintf("SELECT s FROM read_json('%s/*.json') WHERE id > 100", dir):          {{"c"}},
		fmt.Sprintf("SELECT max(id) FROM read_parquet('%s/p2.parquet')", dir):            {{int64(30)}},
	} {
		if got := runRows(t, s, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n%v\nwant %v", q, got, want)
		}
	}
}
