package dispatch

import (
	"sync"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
)

// cellOutput sends the outputs of one execute request.
type cellOutput struct {
	k      *Kernel
	parent *wire.Message
	silent bool
	count  int
	opts   cellOptions
	// lastText is the text/plain of the last output, for history.
	lastText *string

	// The progress ticker publishes from its own goroutine.
	mu sync.Mutex
	// kept are the outputs a reader keeps (streams, results, displays
	// without a display_id), in order, to send again after a transient
	// display was cleared away (dropTransient).
	kept []keptOutput
	// transient: a display that is only there while a statement runs (a
	// progress display, a live table or chart) is drawn.
	transient bool
	// clearPending: a clear_output(wait) was sent and no output followed
	// yet, so frontends still show what it is to clear.
	clearPending bool
}

type keptOutput struct {
	msgType string
	content map[string]any
}

func (o *cellOutput) publish(msgType string, content map[string]any) {
	if o.silent {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch msgType {
	case "stream", "display_data", "execute_result":
		// Any new output ends a pending clear (it clears before the
		// output is added).
		o.clearPending = false
		if _, live := content["transient"]; live {
			o.transient = true
		} else {
			o.kept = append(o.kept, keptOutput{msgType, content})
		}
	}
	o.k.publish(o.parent, msgType, content)
}

// dropTransient removes a transient display from the cell, so a saved
// notebook holds only what a reader needs, not an emptied progress line
// or live table. The protocol can only clear a cell's outputs all at once:
// clear_output(wait) and the outputs to keep sent again (a frontend that
// applies it swaps them in on the first one, without a flicker; jupyter
// console, which never drew the transient's text, prints nothing for the
// clear). The caller sends what replaces the transient next.
func (o *cellOutput) dropTransient() {
	if o.silent {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.transient {
		return
	}
	o.transient = false
	o.k.publish(o.parent, "clear_output", map[string]any{"wait": true})
	for _, ko := range o.kept {
		o.k.publish(o.parent, ko.msgType, ko.content)
	}
	o.clearPending = len(o.kept) == 0
}

// settle ends the cell's outputs: a clear nothing followed (a transient
// display of a statement without output) is made to happen now.
func (o *cellOutput) settle() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clearPending {
		o.clearPending = false
		o.k.publish(o.parent, "clear_output", map[string]any{"wait": false})
	}
}

func (o *cellOutput) stdout(text string) {
	if text == "" {
		return
	}
	if text[len(text)-1] != '\n' {
		text += "\n"
	}
	o.publish("stream", map[string]any{"name": "stdout", "text": text})
	o.lastText = &text
}

func (o *cellOutput) stderr(text string) {
	o.publish("stream", map[string]any{"name": "stderr", "text": text + "\n"})
}

// outcome shows what a statement returned besides rows.
func (o *cellOutput) outcome(out engine.Outcome) {
	o.stdout(out.Message)
	if out.Text != "" {
		for _, bundle := range explainBundles(out.Text, out.Explain) {
			o.publish("display_data", map[string]any{"data": bundle, "metadata": map[string]any{}})
		}
		o.lastText = &out.Text
	}
}

func (o *cellOutput) newResult() *resultWriter {
	return &resultWriter{out: o}
}
