package jsonfile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfile"
	"github.com/clink-sql/clink/exec"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

type recorder struct {
	ids      []int64
	columnar int
	wms      []int64
}

func (r *recorder) Emit(_ context.Context, b *exec.Batch) error {
	var rows []exec.Row
	if b.IsColumnar() {
		r.columnar++
		rows = exec.DecodeRows(b.Record())
	} else {
		rows = b.Rows()
	}
	for _, row := range rows {
		r.ids = append(r.ids, row[0].(int64))
	}
	return nil
}

func (r *recorder) EmitWatermark(_ context.Context, wm int64) error {
	r.wms = append(r.wms, wm)
	return nil
}

// writeFiles writes two files of 1000 lines each; every 97th line of the
// first is bad, and a blank line sits in the middle.
func writeFiles(t *testing.T) (dir string, good int) {
	dir = t.TempDir()
	id := 0
	for f := 0; f < 2; f++ {
		var sb strings.Builder
		for i := 0; i < 1000; i++ {
			if f == 0 && i%97 == 50 {
				sb.WriteString(`{"id": "oops` + "\n")
				continue
			}
			if i == 500 {
				sb.WriteString("\n")
			}
			fmt.Fprintf(&sb, `{"id": %d, "name": "n%d"}`+"\n", id, id)
			id++
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.json", f)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, id
}

func run(t *testing.T, mem memory.Allocator, opts map[string]string, batch int) (*recorder, error) {
	tbl, err := jsonfile.NewTable(opts, schema)
	if err != nil {
		t.Fatal(err)
	}
	src, err := tbl.WithAllocator(mem).OpenSource(connectors.ScanSpec{BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	return r, src.Run(context.Background(), r)
}

func TestSkipAndFail(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir, good := writeFiles(t)
	for _, columnar := range []string{"true", "false"} {
		for _, path := range []string{dir, filepath.Join(dir, "*.json")} {
			r, err := run(t, mem, map[string]string{"connector": "filesystem", "format": "json", "path": path,
				"on-error": "skip", "json.columnar-decode": columnar}, 128)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.ids) != good {
				t.Fatalf("got %d rows, want %d", len(r.ids), good)
			}
			for i, id := range r.ids {
				if id != int64(i) {
					t.Fatalf("row %d has id %d: a good record was lost or duplicated", i, id)
				}
			}
			if (r.columnar > 0) != (columnar == "true") {
				t.Fatalf("columnar-decode=%s but %d columnar batches", columnar, r.columnar)
			}
			if r.wms[len(r.wms)-1] != exec.MaxWatermark {
				t.Fatal("no final watermark")
			}
		}
	}
	_, err := run(t, mem, map[string]string{"path": dir, "format": "json"}, 128)
	if err == nil || !strings.Contains(err.Error(), "part-0.json' line 51") {
		t.Fatalf("want an error naming file and line 51, got %v", err)
	}
}

// A bad record past the first read chunk is named by its line when the
// file is read whole (counted on the error) and by its byte offset when
// read in parts; CRLF line ends are white space after a record.
func TestErrorPlaces(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	var sb strings.Builder
	badLine, badOff := 0, 0
	for i := 1; i <= 6000; i++ {
		if i == 4321 {
			badLine, badOff = i, sb.Len()
			sb.WriteString(`{"id": 1, "name": tru}` + "\r\n")
			continue
		}
		fmt.Fprintf(&sb, `{"id": %d, "name": "%s"}`+"\r\n", i, strings.Repeat("n", 100))
	}
	if sb.Len() < 2*256<<10 {
		t.Fatalf("the file (%d bytes) should span several read chunks", sb.Len())
	}
	path := filepath.Join(dir, "x.json")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"path": path, "format": "json"}
	_, err := run(t, mem, opts, 8192)
	if want := fmt.Sprintf("x.json' line %d:", badLine); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("whole file: want %q, got %v", want, err)
	}
	tbl, err := jsonfile.NewTable(opts, schema)
	if err != nil {
		t.Fatal(err)
	}
	src, err := tbl.WithAllocator(mem).OpenSource(connectors.ScanSpec{BatchSize: 8192, Split: 1, Splits: 2})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Run(context.Background(), &recorder{})
	if want := fmt.Sprintf("x.json' byte offset %d:", badOff); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second half: want %q, got %v", want, err)
	}
	opts["on-error"] = "skip"
	r, err := run(t, mem, opts, 8192)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ids) != 5999 || r.columnar == 0 {
		t.Fatalf("skip: %d rows in %d columnar batches, want 5999 rows columnar", len(r.ids), r.columnar)
	}
}
