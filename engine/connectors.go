package engine

// The connectors this build carries register themselves at init; importing
// them is all the wiring they need. Their init only registers a factory, so
// it costs nothing at startup (the embedded broker starts on first use).
import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/csvfile"
	"github.com/clink-sql/clink/connectors/jsonfile"
	_ "github.com/clink-sql/clink/connectors/kafka"
	_ "github.com/clink-sql/clink/connectors/memory"
	_ "github.com/clink-sql/clink/connectors/nexmark"
	"github.com/clink-sql/clink/connectors/parquet"
	_ "github.com/clink-sql/clink/connectors/sinks"
)

func init() {
	// 'connector' = 'filesystem' is one connector whatever the format;
	// Parquet owns the factory and newline-delimited JSON plugs into it.
	parquet.RegisterFormatFactory("json", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return jsonfile.NewTable(options, declared)
	})
	parquet.RegisterFormatFactory("csv", func(options map[string]string, declared *arrow.Schema) (connectors.Table, error) {
		return csvfile.NewTable(options, declared)
	})
}
