-- Observability (issue 17): the W3C traceparent of the request that
-- created an execution, so every run of it — a start the reconciler
-- retries included — continues that one trace. Empty when the request
-- carried no trace.
ALTER TABLE agent_execution ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
