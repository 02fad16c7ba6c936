package plan

import (
	"fmt"
	"strings"
)

// PhysicalPass is one named decision pass over the built stages. The
// logical rules (Rules) rewrite the plan; these run after the graph is
// built, in order, because they decide from the operators themselves
// (their Capabilities and hooks), which only exist once built.
type PhysicalPass struct {
	Name string
	Why  string
	run  func(b *builder, root *Stage)
	// decisions lists what the pass decided, one line per stage it
	// touched (EXPLAIN VERBOSE).
	decisions func(stages []*Stage) []string
}

// PhysicalPasses is the ordered list of physical passes.
var PhysicalPasses = []PhysicalPass{
	{
		Name: "gate-columnar-output",
		Why:  "first, over the whole graph: each operator that can emit born-columnar batches does so only when the first consumer past the pass-through operators ingests them, so no chain is quietly materialised",
		run:  func(b *builder, root *Stage) { b.gates(root) },
		decisions: func(stages []*Stage) []string {
			var out []string
			for _, s := range stages {
				if s.Gate == nil {
					continue
				}
				line := fmt.Sprintf("[%d] %s: ", s.ID, s.Op)
				if s.Gate.Columnar {
					line += "born-columnar"
				} else {
					line += "rows"
				}
				line += " (" + s.Gate.Reason
				if s.Gate.Cause != "" {
					line += ": " + s.Gate.Cause
				}
				out = append(out, line+")")
			}
			return out
		},
	},
	{
		Name: "dictionary-codes",
		Why:  "last: it changes only what a scan's columns carry, no stage or gate: VARCHAR columns travel as dictionary codes where they reach GROUP BY keys or MIN/MAX through filters and bare projections only",
		run:  func(b *builder, _ *Stage) { b.dictionaries() },
		decisions: func(stages []*Stage) []string {
			var out []string
			for _, s := range stages {
				if len(s.Dictionary) > 0 {
					out = append(out, fmt.Sprintf("[%d] %s: codes for %s", s.ID, s.Op, strings.Join(s.Dictionary, ", ")))
				}
			}
			return out
		},
	},
}

// PassStep is what one physical pass decided (EXPLAIN VERBOSE).
type PassStep struct {
	Pass      string
	Why       string
	Decisions []string
}

// runPasses runs the physical passes in order and records what each
// decided.
func (b *builder) runPasses(root *Stage) []PassStep {
	steps := make([]PassStep, 0, len(PhysicalPasses))
	for _, p := range PhysicalPasses {
		p.run(b, root)
		steps = append(steps, PassStep{Pass: p.Name, Why: p.Why, Decisions: p.decisions(b.stages)})
	}
	return steps
}
