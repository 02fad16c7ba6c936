package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
)

// Checkpoints (issue "Nothing lost, nothing twice"), Flink's settings:
//
//	SET 'execution.checkpointing.interval' = '10s';  -- 0 or unset: off
//	SET 'state.checkpoints.dir' = '/var/clink/ckpt';
//	SET 'pipeline.name' = 'bids-to-topic';         -- default: pipeline-<plan fingerprint>
//	SET 'state.checkpoints.num-retained' = '3';
//	SET 'execution.savepoint.path' = 'DIR/NAME/chk-17';  -- restore this one
//
// Checkpoints apply to streaming statements: an unbounded plan, or any
// plan in 'execution.runtime-mode' = 'streaming'. A statement's
// checkpoints go to DIR/NAME/chk-N. Started again with the
// same name and directory, it resumes from the latest complete one and
// says so (a notice: "resumed from checkpoint 17"). A checkpoint of
// another plan is refused. With checkpoints, Kafka sources start at the
// checkpoint's offsets and commit the group's offsets when a checkpoint
// completes, and the Kafka sink flushes at every barrier; the committer of
// commit.go is not used.

const (
	setCkInterval  = "execution.checkpointing.interval"
	setCkDir       = "state.checkpoints.dir"
	setCkRetained  = "state.checkpoints.num-retained"
	setPipeline    = "pipeline.name"
	setSavepoint   = "execution.savepoint.path"
	defaultRetain  = 3
	minCkInterval  = time.Millisecond
	pipelinePrefix = "pipeline-"
)

func init() {
	knownSettings[setCkInterval] = "how often a streaming statement takes a checkpoint, e.g. '10s' (0 or unset: no checkpoints); needs 'state.checkpoints.dir'"
	knownSettings[setCkDir] = "the directory checkpoints go to, as DIR/<pipeline.name>/chk-N"
	knownSettings[setCkRetained] = "how many complete checkpoints to keep (default 3)"
	knownSettings[setPipeline] = "the statement's name: started again with the same name and checkpoint directory, it resumes from the latest checkpoint (default: pipeline-<plan fingerprint>)"
	knownSettings[setSavepoint] = "a checkpoint directory (DIR/NAME/chk-N) the next statement restores from"
}

// checkSetting validates a checkpoint setting's value (SET calls it).
func checkCheckpointSetting(k, v string) error {
	switch k {
	case setCkInterval:
		d, err := sql.ParseDuration(v)
		if err != nil || d < 0 || (d > 0 && d < minCkInterval) {
			return fmt.Errorf("SET '%s' = '%s': want a duration such as '10s' or '500 ms' (0: no checkpoints)", k, v)
		}
	case setCkRetained:
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return fmt.Errorf("SET '%s' = '%s': want a whole number, 1 or more", k, v)
		}
	case setPipeline:
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, `/\`) {
			return fmt.Errorf("SET '%s' = '%s': want a name usable as a directory (no '/')", k, v)
		}
	}
	return nil
}

// notice tells the user something about a statement that is not its
// result (the shell prints it on stderr).
func (o ExecOptions) notice(msg string) {
	if o.Notice != nil {
		o.Notice(msg)
		return
	}
	fmt.Fprintln(os.Stderr, "clink: "+msg)
}

// checkpointable are the operator kinds that keep nothing across a
// checkpoint besides what a barrier flushes: stateless steps, the
// exchange (flushes its coalescing), and sinks that have delivered a batch
// when it returns or flush at the barrier (the Kafka sink).
var checkpointable = map[string]bool{
	"exchange": true, "kafka-sink": true, "collect": true, "print-sink": true,
	"blackhole-sink": true, "memory-sink": true,
}

// setupCheckpoints configures p's graph from the session's checkpoint
// settings: restores the latest checkpoint (or the savepoint) and turns
// periodic checkpoints on. part names the plan within a statement set
// ("" for a lone statement).
func (s *Session) setupCheckpoints(ctx context.Context, p *plan.Physical, part string, opts ExecOptions) error {
	interval, _ := sql.ParseDuration(s.sets[setCkInterval]) // checked by SET
	savepoint := s.sets[setSavepoint]
	if interval <= 0 && savepoint == "" {
		return nil
	}
	if p.Bounded && s.sets["execution.runtime-mode"] != "streaming" {
		// A bounded query in batch mode is not a job to resume (Flink
		// checkpoints streaming jobs only): it runs as it would without
		// checkpoints, with its batch operators.
		return nil
	}
	g := p.Graph
	fp := g.Fingerprint()
	if interval > 0 {
		for _, st := range g.Stages() {
			if st.Op == nil || statelessKinds[st.Op.Kind()] || checkpointable[st.Op.Kind()] {
				continue
			}
			if _, ok := st.Op.(exec.Snapshotter); !ok {
				return fmt.Errorf("checkpoints: operator %s (%s) keeps state it cannot checkpoint yet; run the statement without '%s'", st.Name, st.Op.Kind(), setCkInterval)
			}
		}
		for _, st := range g.Stages() {
			if st.Src == nil {
				continue
			}
			if _, ok := st.Src.(exec.Snapshotter); !ok {
				return fmt.Errorf("checkpoints: source %s (%s) cannot record its position; run the statement without '%s'", st.Name, st.Src.Kind(), setCkInterval)
			}
		}
	}
	var dir *state.Dir
	if interval > 0 {
		root := s.sets[setCkDir]
		if root == "" {
			return fmt.Errorf("'%s' is set but '%s' is not: SET it to the directory checkpoints go to", setCkInterval, setCkDir)
		}
		name := s.sets[setPipeline]
		if name == "" {
			name = pipelinePrefix + fp
		}
		if part != "" {
			name += "-" + part
		}
		retain := defaultRetain
		if v, ok := s.sets[setCkRetained]; ok {
			retain, _ = strconv.Atoi(v) // checked by SET
		}
		var err error
		if dir, err = state.OpenDir(filepath.Join(root, name), retain, fp); err != nil {
			return err
		}
	}
	from := savepoint
	if from == "" && dir != nil {
		latest, ok, err := dir.Latest()
		if err != nil {
			return err
		}
		if ok {
			from = latest
		}
	}
	next := int64(1)
	if from != "" {
		l, err := state.Load(from, fp, s.mem)
		if err != nil {
			return err
		}
		if err := g.Restore(ctx, l); err != nil {
			return fmt.Errorf("checkpoint %s: %w", from, err)
		}
		next = l.ID() + 1
		opts.notice(fmt.Sprintf("resumed from checkpoint %d (%s)", l.ID(), from))
	}
	if dir != nil {
		if ids, err := dir.Checkpoints(); err == nil && len(ids) > 0 {
			next = max(next, ids[len(ids)-1]+1)
		}
		g.EnableCheckpoints(exec.CheckpointConfig{Interval: interval, Store: dir, NextID: next})
	}
	return nil
}
