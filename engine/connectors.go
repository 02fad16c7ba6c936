package engine

// The connectors this build carries register themselves at init; importing
// them is all the wiring they need. Their init only registers a factory, so
// it costs nothing at startup.
import (
	_ "github.com/clink-sql/clink/connectors/nexmark"
	_ "github.com/clink-sql/clink/connectors/parquet"
)
