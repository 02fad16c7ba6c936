package plan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/exec/shuffle"
)

// capsType is a type of the module that declares Capabilities, as its
// source says.
type capsType struct {
	dir, name string
	methods   map[string]bool
	// ingests, emits: the Capabilities literal sets the field to true
	// (a computed value counts as true).
	ingests, emits bool
}

// discoverCapabilities finds, in the module's source, every type with a
// Capabilities method: every exec.Operator and exec.Source, sinks and the
// exchange included.
func discoverCapabilities(t *testing.T) map[string]*capsType {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]*capsType{}
	get := func(dir, name string) *capsType {
		k := dir + "." + name
		if types[k] == nil {
			types[k] = &capsType{dir: dir, name: name, methods: map[string]bool{}}
		}
		return types[k]
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			rt := fn.Recv.List[0].Type
			if st, ok := rt.(*ast.StarExpr); ok {
				rt = st.X
			}
			id, ok := rt.(*ast.Ident)
			if !ok {
				continue
			}
			ct := get(dir, id.Name)
			ct.methods[fn.Name.Name] = true
			if fn.Name.Name != "Capabilities" || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok {
					return true
				}
				key, _ := kv.Key.(*ast.Ident)
				val, isIdent := kv.Value.(*ast.Ident)
				set := !isIdent || val.Name != "false"
				switch {
				case key == nil:
				case key.Name == "IngestsColumnar":
					ct.ingests = ct.ingests || set
				case key.Name == "EmitsColumnar":
					ct.emits = ct.emits || set
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, ct := range types {
		if !ct.methods["Capabilities"] {
			delete(types, k)
		}
	}
	return types
}

// Issue 19: the agreement test's list of kinds was kept by hand and
// missed sinks (the exchange was added by hand). The kinds are now
// discovered from the code: every type that declares Capabilities is
// found in the source, its declared capabilities agree with the hooks it
// implements (sinks and sources included), and every operator of
// exec/ops and exec/shuffle is one the runtime agreement test above
// instantiates.
func TestEveryCapabilitiesImplementationIsChecked(t *testing.T) {
	types := discoverCapabilities(t)
	if len(types) < 20 {
		t.Fatalf("found only %d types declaring Capabilities: the discovery is broken", len(types))
	}
	// The types the runtime agreement test instantiates, and the types
	// they embed (the joins share batchJoin's Capabilities).
	covered := map[string]bool{}
	mem := memory.NewGoAllocator()
	kinds := append(ops.Kinds(), ops.Kind{Name: "exchange", New: func(mem memory.Allocator) exec.Operator {
		return shuffle.NewExchange([]int{0}, mem)
	}})
	for _, k := range kinds {
		op := k.New(mem)
		rt := reflect.TypeOf(op).Elem()
		covered[rt.Name()] = true
		for i := 0; i < rt.NumField(); i++ {
			if f := rt.Field(i); f.Anonymous {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				covered[ft.Name()] = true
			}
		}
		op.Close()
	}
	for _, ct := range types {
		// A hook's presence may come from an embedded type; the literal
		// and the methods are read from the same declaration here, which
		// holds for every type of this module.
		hook := ct.methods["ProcessColumnar"]
		switch {
		case ct.methods["Run"]: // a source: what it emits is its own
			if ct.ingests {
				t.Errorf("%s.%s is a source that claims to ingest columnar", ct.dir, ct.name)
			}
			continue
		case ct.ingests != hook:
			t.Errorf("%s.%s: IngestsColumnar = %v but implements ProcessColumnar = %v", ct.dir, ct.name, ct.ingests, hook)
		case ct.emits != ct.methods["SetColumnarOutput"]:
			t.Errorf("%s.%s: EmitsColumnar = %v but implements SetColumnarOutput = %v", ct.dir, ct.name, ct.emits, ct.methods["SetColumnarOutput"])
		}
		if (ct.dir == "exec/ops" || ct.dir == "exec/shuffle") && ct.methods["Process"] && !covered[ct.name] {
			t.Errorf("%s.%s is an operator that ops.Kinds() does not list: the agreement test does not run it", ct.dir, ct.name)
		}
	}
}
