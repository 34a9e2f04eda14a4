// Command chaos is Agentree's fault-injection suite (`make chaos`, issue
// 19). It runs a private Postgres cluster (initdb/pg_ctl, as the postgres
// user when root), a private Temporal dev server (bin/temporal, its own
// SQLite file so a restart keeps state), worker processes and a gateway
// process of the agentree binary built from this checkout, each on a port
// of its own under one temporary directory (launch.go is the one file that
// knows their command lines).
//
// It drives concurrent multi-turn conversations over REST (create, then
// follow-ups by signal once the last is answered, each POST retried with
// one Idempotency-Key until it gets a 2xx), follows each execution's
// consolidated SSE stream with a client that reconnects with
// Last-Event-ID, plus one-shot executions sent a message while they write
// their final answer (answered, or refused with 409), and meanwhile injects
// faults in a seeded random order at
// seeded random moments, each waiting (up to -gate-wait) for a model or tool
// call in flight: worker and gateway SIGKILLs, Postgres restarts and
// outages, Temporal dev-server restarts, and duplicate deliveries. The
// scripted model and the research tools are slowed (scripted.EnvDelay,
// demo.EnvToolDelay) so calls are in flight long enough to be hit.
//
// Afterwards it checks in SQL and over REST that every acknowledged
// message is a user entry exactly once; one chain runs from the root to the
// latest checkpoint's leaf; nothing (entries, tool-call records, stream
// events, SSE deliveries) is duplicated; no completed model or tool call ran
// again (the scripted model's call log, task events); the inbox is drained;
// every execution waits with its last message answered; and every stored
// stream event reached its SSE client. It measures worker recovery (kill →
// next stored progress of each execution with a call in flight on the
// killed worker), then prints a table and name=value lines (chaos_lost=,
// chaos_duplicated=, chaos_failed_by_outage=, chaos_stuck=,
// chaos_worker_recovery_p99_s=, …). It exits 3 when an invariant failed.
//
// With -deploy (deploy.go) the processes start on the previous release,
// built from git (internal/gitbuild), and are replaced one at a time by
// this tree's build while the load runs, one worker is rolled back and
// replaced again; the histories say how long workflow tasks kept failing.
//
// With -resources (resources.go) Postgres's disk fills, its connections
// run out, it slows down, and a model server hangs mid-stream; with
// -failover (failover.go) a synchronous streaming replica is promoted as
// the primary is killed (-failover-async: what asynchronous replication
// loses).
//
// With -soak (`make soak`; soak.go, soaksample.go, soakreport.go) the
// conversations are started continuously for -soak-duration instead of as
// one batch, a fault fires every -soak-fault-every, and the workers, the
// gateway and the store are sampled every -soak-sample; the report adds
// the samples and soak_ figures, and it exits 3 as well when one grew
// past its bound.
//
// It may import anything public; it imports no adapter or gateway code
// (internal/gitbuild is a build helper, not the runtime).
package main
