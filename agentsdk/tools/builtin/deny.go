package builtin

import (
	"fmt"
	"regexp"
)

// DefaultDeny is the deny list of a worker that configures none: Go
// regular expressions a command is refused for matching anywhere. It is a
// guard against the well-known disasters a model might type, not a
// sandbox: a determined command gets around any list, which is what the
// isolation and the workspace are for.
var DefaultDeny = []string{
	// rm -rf /, rm -rf /*, rm -rf ~, whatever the flags.
	`\brm\s+(-\S*\s+)*(/|/\*|~/?|\$HOME/?)(\s|;|&|\||$)`,
	`--no-preserve-root`,
	// Making a file system.
	`\bmkfs(\.\w+)?\b`,
	// The classic fork bomb.
	`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}`,
	// Writing to a raw device.
	`\bdd\b[^;&|]*\bof=/dev/`,
	`>\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk)`,
}

// denyList is a compiled deny list.
type denyList []*regexp.Regexp

func compileDeny(patterns []string) (denyList, error) {
	d := make(denyList, 0, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bash deny[%d]: %q is not a Go regular expression: %v", i, p, regexpReason(err))
		}
		d = append(d, re)
	}
	return d, nil
}

// check refuses a command that matches a pattern, naming it.
func (d denyList) check(command string) error {
	for _, re := range d {
		if m := re.FindString(command); m != "" {
			return fmt.Errorf("refused: %q matches this worker's deny list (%s); the command was not run", m, re)
		}
	}
	return nil
}
