package expr

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// The function registry: one table serving the built-ins and user-defined
// functions. A function declares its signatures (what argument types it
// accepts), a type rule (its result type as a function of the argument
// types, decided when the query is planned) and how to build the call.
// NewFunc looks the name up, matches the signatures, asks the type rule,
// builds the call and checks that what was built has the type the rule
// promised, so the plan's types cannot drift from what the kernels emit.

// TypeRule gives a function's result (logical) type from its argument
// types, at planning time.
type TypeRule func(args []arrow.DataType) (arrow.DataType, error)

// argKind is what one parameter of a signature accepts.
type argKind uint8

const (
	kExact     argKind = iota // param.t, or anything it widens to implicitly
	kAny                      // any type
	kT                        // generic: every kT argument unifies to one type T
	kString                   // VARCHAR
	kInt                      // INT or BIGINT
	kNumeric                  // INT, BIGINT, FLOAT, DOUBLE, DECIMAL
	kTimestamp                // TIMESTAMP(p)
	kTemporal                 // TIMESTAMP(p) or DATE
	kClock                    // TIMESTAMP(p) or TIME(p): has a time of day
	kBool                     // BOOLEAN
)

type param struct {
	kind argKind
	t    arrow.DataType // for kExact
}

func (p param) String() string {
	switch p.kind {
	case kExact:
		return typeName(p.t)
	case kAny:
		return "ANY"
	case kT:
		return "T"
	case kString:
		return "VARCHAR"
	case kInt:
		return "INT"
	case kNumeric:
		return "NUMERIC"
	case kTimestamp:
		return "TIMESTAMP"
	case kTemporal:
		return "TIMESTAMP|DATE"
	case kClock:
		return "TIMESTAMP|TIME"
	case kBool:
		return "BOOLEAN"
	}
	return "?"
}

// accepts reports whether an argument of type t can be passed for p. NULL
// is accepted everywhere (its type comes from the parameter).
func (p param) accepts(t arrow.DataType) bool {
	if isNull(t) {
		return true
	}
	switch p.kind {
	case kExact:
		if arrow.TypeEqual(t, p.t) {
			return true
		}
		if isExtension(t) || isExtension(p.t) {
			return false
		}
		c, err := CommonType(t, p.t)
		return err == nil && arrow.TypeEqual(c, p.t)
	case kAny, kT:
		return true
	case kString:
		return isString(t)
	case kInt:
		return isInt(t)
	case kNumeric:
		return isNumeric(t)
	case kTimestamp:
		return t.ID() == arrow.TIMESTAMP
	case kTemporal:
		return isTemporal(t)
	case kClock:
		return t.ID() == arrow.TIMESTAMP || isTime(t)
	case kBool:
		return isBool(t)
	}
	return false
}

// sig is one accepted argument list: the last opt params may be left out,
// and a variadic signature repeats its last param.
type sig struct {
	params   []param
	opt      int
	variadic bool
	ret      string // the result type as shown to users
}

func (s sig) matches(ts []arrow.DataType) bool {
	n := len(ts)
	if n < len(s.params)-s.opt || (!s.variadic && n > len(s.params)) || (s.variadic && n == 0) {
		return false
	}
	for i, t := range ts {
		p := s.params[min(i, len(s.params)-1)]
		if !p.accepts(t) {
			return false
		}
	}
	return true
}

func (s sig) render(name string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	req := len(s.params) - s.opt
	for i, p := range s.params {
		switch {
		case i == req && s.opt > 0 && i > 0:
			b.WriteString("[, ")
		case i == req && s.opt > 0:
			b.WriteString("[")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(p.String())
	}
	if s.opt > 0 {
		b.WriteString("]")
	}
	if s.variadic {
		b.WriteString(", ...")
	}
	b.WriteByte(')')
	if s.ret != "" {
		b.WriteString(" -> " + s.ret)
	}
	return b.String()
}

// funcDef is one registered function.
type funcDef struct {
	name    string
	aliases []string
	desc    string
	sigs    []sig
	// rule is the result type; nil when build decides it (the binary
	// operators' own rules, CASE's unification): build is then trusted.
	rule TypeRule
	// optRule is a type rule that also reads the constant arguments (the
	// options, e.g. round's digits): consts[i] is argument i's value when it
	// is a constant, else nil.
	optRule func(ts []arrow.DataType, consts []any) (arrow.DataType, error)
	// build makes the call from the arguments as written; out is what rule
	// returned (nil without a rule).
	build func(name string, args []Expr, out arrow.DataType) (Expr, error)
	// now builds a call of a statement-clock function (current_date, ...)
	// from the statement's clock reading: a constant.
	now        func(name string, now time.Time) Expr
	udf        bool
	rowAtATime bool
	hidden     bool // internal (e.g. __clink_interval): not listed
}

// FunctionInfo describes one function for \df and completion.
type FunctionInfo struct {
	Name        string
	Aliases     []string
	Signatures  []string // e.g. "substring(VARCHAR, INT[, INT]) -> VARCHAR"
	Description string   // one line
	UDF         bool     // registered through the UDF API
	RowAtATime  bool     // runs a Go function per row (UDF)
}

type registry struct {
	mu  sync.RWMutex
	fns map[string]*funcDef // by lower-case name and alias
}

var funcs = &registry{fns: map[string]*funcDef{}}

func (r *registry) add(d *funcDef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := append([]string{d.name}, d.aliases...)
	for _, n := range names {
		if _, dup := r.fns[strings.ToLower(n)]; dup {
			return fmt.Errorf("function %s is already registered", n)
		}
	}
	for _, n := range names {
		r.fns[strings.ToLower(n)] = d
	}
	return nil
}

// mustAdd registers a built-in (at init: a clash is a programming error).
func mustAdd(d *funcDef) {
	if err := funcs.add(d); err != nil {
		panic(err)
	}
}

func (r *registry) lookup(name string) *funcDef {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.fns[strings.ToLower(name)]
}

// Functions lists every registered function (built-ins and UDFs) sorted by
// name, for the shell's \df and the kernel's completion.
func Functions() []FunctionInfo {
	funcs.mu.RLock()
	seen := map[*funcDef]bool{}
	var out []FunctionInfo
	for _, d := range funcs.fns {
		if seen[d] || d.hidden {
			continue
		}
		seen[d] = true
		out = append(out, d.info())
	}
	funcs.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupFunction describes the function called name (or an alias).
func LookupFunction(name string) (FunctionInfo, bool) {
	d := funcs.lookup(name)
	if d == nil || d.hidden {
		return FunctionInfo{}, false
	}
	return d.info(), true
}

func (d *funcDef) info() FunctionInfo {
	fi := FunctionInfo{Name: d.name, Aliases: d.aliases, Description: d.desc, UDF: d.udf, RowAtATime: d.rowAtATime}
	for _, s := range d.sigs {
		fi.Signatures = append(fi.Signatures, s.render(d.name))
	}
	return fi
}

// NewFunc builds a call of the function name (case-insensitive) on args.
// A wrong argument count or type is an error naming the function, the
// types offered and the signatures accepted. The statement-clock functions
// (current_timestamp, ...) read the clock at each call: a binder binds with
// NewFuncContext so that one statement reads it once.
func NewFunc(name string, args []Expr) (Expr, error) {
	return NewFuncContext(context.Background(), name, args)
}

// NewFuncContext is NewFunc reading the statement clock from ctx (see
// WithStatementTime); without one, the clock is read now.
func NewFuncContext(ctx context.Context, name string, args []Expr) (Expr, error) {
	d := funcs.lookup(name)
	if d == nil {
		return nil, fmt.Errorf("unknown function %s", name)
	}
	lname := strings.ToLower(name)
	ts := make([]arrow.DataType, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	matched := false
	for _, s := range d.sigs {
		if s.matches(ts) {
			matched = true
			break
		}
	}
	if !matched {
		return nil, noMatch(lname, d, ts)
	}
	var out arrow.DataType
	var err error
	switch {
	case d.optRule != nil:
		consts := make([]any, len(args))
		for i, a := range args {
			if l, ok := a.(*Literal); ok {
				consts[i] = l.v
			}
		}
		out, err = d.optRule(ts, consts)
	case d.rule != nil:
		out, err = d.rule(ts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lname, err)
	}
	if d.now != nil {
		t, ok := StatementTime(ctx)
		if !ok {
			t = time.Now()
		}
		return d.now(lname, t), nil
	}
	e, err := d.build(lname, args, out)
	if err != nil {
		return nil, err
	}
	if out != nil && !arrow.TypeEqual(e.Type(), out) {
		return nil, fmt.Errorf("%s: built a %s result where its type rule says %s", lname, typeName(e.Type()), typeName(out))
	}
	return e, nil
}

func noMatch(name string, d *funcDef, ts []arrow.DataType) error {
	offered := make([]string, len(ts))
	for i, t := range ts {
		offered[i] = typeName(t)
	}
	acc := make([]string, len(d.sigs))
	for i, s := range d.sigs {
		acc[i] = s.render(name)
	}
	return fmt.Errorf("%s(%s): no signature matches; accepted: %s", name, strings.Join(offered, ", "), strings.Join(acc, "; "))
}

// Signature helpers for the built-in tables.
func p(k argKind) param              { return param{kind: k} }
func pt(t arrow.DataType) param      { return param{kind: kExact, t: t} }
func sg(ret string, ps ...param) sig { return sig{params: ps, ret: ret} }
func sgOpt(ret string, opt int, ps ...param) sig {
	return sig{params: ps, opt: opt, ret: ret}
}
func sgVar(ret string, ps ...param) sig { return sig{params: ps, variadic: true, ret: ret} }

// Type rules shared by the built-ins.

func fixed(t arrow.DataType) TypeRule {
	return func([]arrow.DataType) (arrow.DataType, error) { return t, nil }
}

// sameAs is T -> T: the type of argument i.
func sameAs(i int) TypeRule {
	return func(ts []arrow.DataType) (arrow.DataType, error) { return ts[i], nil }
}

// unify is the common type of the arguments at idx (all when idx is nil):
// what COALESCE, IF, NULLIF, GREATEST and LEAST return.
func unify(idx ...int) TypeRule {
	return func(ts []arrow.DataType) (arrow.DataType, error) {
		var t arrow.DataType = arrow.Null
		pick := idx
		if pick == nil {
			for i := range ts {
				pick = append(pick, i)
			}
		}
		for _, i := range pick {
			if i >= len(ts) {
				continue
			}
			var err error
			if t, err = CommonType(t, ts[i]); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
}
