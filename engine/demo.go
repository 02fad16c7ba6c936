package engine

import (
	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/plan"
)

// demoRate paces the demo tables: modest, so an unbounded SELECT * streams
// at a readable pace and costs little CPU.
const demoRate = "1000"

// registerDemo adds the built-in nexmark tables. They are opened lazily:
// listing them starts nothing.
func registerDemo(cat *plan.Catalog) {
	for _, t := range []string{"nexmark", "bid", "auction", "person"} {
		opts := map[string]string{"connector": "nexmark", "table": t,
			"first-event.rate": demoRate, "next-event.rate": demoRate}
		_ = cat.Add(&plan.Entry{Name: t, Connector: "nexmark", Options: opts, Open: func() (connectors.Table, error) {
			f, ok := connectors.Lookup("nexmark")
			if !ok {
				return nil, errNoConnector("nexmark")
			}
			return f(opts, nil)
		}}, false)
	}
}

type errNoConnector string

func (e errNoConnector) Error() string { return "connector '" + string(e) + "' is not in this build" }
