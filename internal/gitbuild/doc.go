// Package gitbuild builds the agentree binary of an earlier commit from
// this repository's git history, for what plays a deploy: the adapter's
// upgrade test (an old worker's runs finish on this build) and `make chaos
// -deploy` (a rolling deploy from the previous release). The tree comes
// from `git archive`, so a fresh clone with its full history (no tags, no
// work tree of the commit) reproduces it. It links the standard library
// only and runs the git and go commands.
package gitbuild
