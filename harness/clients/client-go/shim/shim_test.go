//go:debug randseednop=0
//go:debug randautoseed=0

package shim

import (
	"flag"
	"os"
	"testing"
)

// TestShim serves the protocol on stdin and stdout when it is the one test selected
// (`-test.run '^TestShim$'`); a plain `go test` skips it.
func TestShim(t *testing.T) {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "^TestShim$" {
		t.Skip("serves the protocol only when run alone: -test.run '^TestShim$'")
	}
	Serve(t, os.Stdin, os.Stdout, os.Exit)
}
