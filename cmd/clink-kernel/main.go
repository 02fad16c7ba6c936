// Command clink-kernel will be clink's Jupyter kernel. Until that lands it
// only says so, and exits non-zero so no script mistakes it for a kernel.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "clink-kernel: the Jupyter kernel is not built yet; use clinksh for now")
	os.Exit(2)
}
