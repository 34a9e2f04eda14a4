// Command agentree is Agentree's one binary: the worker, the gateway, a dev
// mode that runs both, and client subcommands over the REST API. It may
// import anything in the module.
package main
