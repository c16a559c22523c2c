//go:debug randseednop=0
//go:debug randautoseed=0

package shim

import (
	"flag"
	"testing"

	"listwatch.dev/listwatchtest"
)

// TestShim serves the protocol on stdin and stdout when it is the one test selected
// (`-test.run '^TestShim$'`); a plain `go test` skips it.
func TestShim(t *testing.T) {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "^TestShim$" {
		t.Skip("serves the protocol only when run alone: -test.run '^TestShim$'")
	}
	listwatchtest.Serve(t, clients)
}
