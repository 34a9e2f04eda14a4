package temporaltest

import (
	"os"
	"path/filepath"
)

// CLI is the Temporal CLI the bench and the chaos suite start servers
// with: $AGENTREE_TEMPORAL_BIN, else bin/temporal at the module root
// above the working directory (where `make up` builds it).
func CLI() string {
	if p := os.Getenv("AGENTREE_TEMPORAL_BIN"); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "bin", "temporal")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "bin", "temporal")
		}
	}
}
