// Command agentree is Agentree's one binary: the worker, the gateway, a dev
// mode that runs both, and client subcommands over the REST API. The
// worker and dev mode are configured by a worker configuration file
// (internal/workerconfig, agentree.example.yaml) and reach Temporal by its
// environment configuration (contrib/envconfig). It may import anything in
// the module but samples/: what the binary serves is configuration.
package main
