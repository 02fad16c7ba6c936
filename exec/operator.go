package exec

import (
	"context"
	"errors"
	"math"
	"os"
)

// Watermark values are event-time microseconds since the Unix epoch.
const (
	// MinWatermark is the watermark before any event time is known.
	MinWatermark int64 = math.MinInt64
	// MaxWatermark is the final watermark of a bounded input: it fires every
	// open window.
	MaxWatermark int64 = math.MaxInt64
)

// ErrStop is returned by an operator (LIMIT) or an Emitter when no more
// input is wanted. It is not a failure: the producer stops and the graph
// finishes normally.
var ErrStop = errors.New("exec: stop: no more input wanted")

// Emitter receives an operator's or a source's output. The batch is lent for
// the duration of the call (see Batch).
type Emitter interface {
	Emit(ctx context.Context, b *Batch) error
	EmitWatermark(ctx context.Context, wm int64) error
}

// Capabilities is what an operator can do with Arrow. The planner's gates
// and Dispatch both read it from the operator itself, so they cannot drift.
type Capabilities struct {
	// IngestsColumnar: the operator implements ColumnarOperator and takes a
	// columnar batch without materialising it (at least for some batches).
	IngestsColumnar bool
	// EmitsColumnar: the operator can build its output born columnar when
	// the planner turns that on (ColumnarOutputSetter).
	EmitsColumnar bool
	// PassesThrough: a columnar input batch leaves as a columnar batch
	// (filter, project, limit) without the planner's say. The planner's
	// gate looks through such operators to the first one that does not
	// pass batches on, which decides whether a producer emits columnar.
	PassesThrough bool
	// ChangelogOutput: every output row carries a row kind (+I, -U, +U,
	// -D), which a born-columnar result has no place for, so the output is
	// rows whatever the consumer (an updating aggregate or top-n, an outer
	// streaming join).
	ChangelogOutput bool
}

// Operator is one step of a query. Process is the authoritative row path;
// it may call b.Rows(). Control (watermarks, end of input) never goes
// through the columnar hook.
type Operator interface {
	// Kind names the operator kind in metrics and EXPLAIN (e.g. "filter").
	Kind() string
	Capabilities() Capabilities
	Process(ctx context.Context, input int, b *Batch, out Emitter) error
	// OnWatermark is called when the minimum watermark over the inputs
	// advances. It fires what the watermark closes and forwards it.
	OnWatermark(ctx context.Context, wm int64, out Emitter) error
	// Finish is called once per input when that input ends.
	Finish(ctx context.Context, input int, out Emitter) error
	// Close releases state. Called once, after the run, on every path.
	Close()
}

// ColumnarOperator is the columnar hook. ProcessColumnar returns handled =
// false only before emitting anything: Dispatch then replays the batch
// through Process, and an emit followed by false would emit twice. A
// streaming join declines this way for a columnar batch on a changelog
// input, whose row kinds only its row path reads.
type ColumnarOperator interface {
	ProcessColumnar(ctx context.Context, input int, b *Batch, out Emitter) (handled bool, err error)
}

// ColumnarOutputSetter is implemented by operators whose Capabilities say
// EmitsColumnar; the planner turns born-columnar output on per operator.
type ColumnarOutputSetter interface {
	SetColumnarOutput(on bool)
}

// Source produces batches (and watermarks) until its input ends (returns
// nil), ctx is cancelled (returns ctx.Err()), or an Emit returns ErrStop
// (returns nil).
type Source interface {
	Kind() string
	Capabilities() Capabilities
	Run(ctx context.Context, out Emitter) error
}

// Options are a query's A/B switches. They may only change speed.
type Options struct {
	// DisableColumnar forces every operator onto its row path
	// (CLINK_DISABLE_COLUMNAR=1 or SET 'columnar' = 'off').
	DisableColumnar bool
	// DisableColumnarOutput keeps every operator's output in row form
	// (CLINK_DISABLE_COLUMNAR_OUTPUT=1 or SET 'columnar.output' = 'off').
	DisableColumnarOutput bool
	// DisableDictionary keeps VARCHAR columns plain: no dictionary codes
	// from a scan to GROUP BY keys (CLINK_DISABLE_DICTIONARY=1 or
	// SET 'columnar.dictionary' = 'off').
	DisableDictionary bool
	// DisableLateMaterialization makes scans read as they did before
	// they were given the WHERE: no predicate evaluated in the scan, and
	// only whole row groups skipped by their statistics, no pages or
	// dictionaries (CLINK_DISABLE_LATE_MATERIALIZATION=1 or
	// SET 'scan.late-materialization' = 'off').
	DisableLateMaterialization bool
}

// EnvOptions reads the A/B switches from the environment.
func EnvOptions() Options {
	return Options{
		DisableColumnar:            os.Getenv("CLINK_DISABLE_COLUMNAR") == "1",
		DisableColumnarOutput:      os.Getenv("CLINK_DISABLE_COLUMNAR_OUTPUT") == "1",
		DisableDictionary:          os.Getenv("CLINK_DISABLE_DICTIONARY") == "1",
		DisableLateMaterialization: os.Getenv("CLINK_DISABLE_LATE_MATERIALIZATION") == "1",
	}
}

// Dispatch delivers one data batch to op: through the columnar hook when
// columnar is enabled, op ingests columnar and b is columnar; otherwise, or
// when the hook answers "not handled", through Process. Every runner calls
// this one function. It reports whether the columnar path took the batch.
func Dispatch(ctx context.Context, op Operator, columnar bool, input int, b *Batch, out Emitter) (bool, error) {
	if columnar && b.IsColumnar() && op.Capabilities().IngestsColumnar {
		if co, ok := op.(ColumnarOperator); ok {
			handled, err := co.ProcessColumnar(ctx, input, b, out)
			if err != nil || handled {
				return handled, err
			}
		}
	}
	return false, op.Process(ctx, input, b, out)
}

// Base gives an operator the default control behaviour: forward watermarks,
// nothing to flush, nothing to close.
type Base struct{}

// OnWatermark forwards the watermark.
func (Base) OnWatermark(ctx context.Context, wm int64, out Emitter) error {
	return out.EmitWatermark(ctx, wm)
}

// Finish does nothing.
func (Base) Finish(context.Context, int, Emitter) error { return nil }

// Close does nothing.
func (Base) Close() {}
