// Package scripts holds the shell scripts the Makefile runs (services.sh
// and the temporal-server.sh it sources, run.sh, gen.sh) and Go tests of
// them: the scripts have no Go code of their own. The tests may import
// anything public of Agentree.
package scripts
