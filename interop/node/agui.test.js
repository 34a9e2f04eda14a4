// AG-UI through the official packages: an execution's AG-UI stream with
// every event checked by @ag-ui/core's schemas, and a definition driven
// by @ag-ui/client's HttpAgent (RunAgentInput in, the run's events out).
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import { agentree, auth, readSSE, validateAGUI } from "./harness.js";

const streamURL = `${agentree.base}/api/orgs/${agentree.org}/agent-executions/${agentree.execution}/ag-ui`;

// readAGUI reads an AG-UI stream to its end, validating every event.
async function readAGUI(lastEventID) {
  const headers = { ...auth, ...(lastEventID ? { "Last-Event-ID": lastEventID } : {}) };
  const out = [];
  for await (const sse of readSSE(streamURL, headers)) {
    out.push({ id: sse.id, event: validateAGUI(JSON.parse(sse.data)), data: sse.data });
  }
  return out;
}

test("an execution's AG-UI stream: every event is one @ag-ui/core accepts", async () => {
  const all = await readAGUI();
  const events = all.map((e) => e.event);
  const types = events.map((e) => e.type);
  assert.equal(types[0], "RUN_STARTED");
  assert.equal(events[0].threadId, agentree.execution, "the thread is the execution");
  assert.equal(types.at(-1), "RUN_FINISHED");
  assert.equal(events.at(-1).outcome?.type, "success");
  assert.equal(events.at(-1).runId, events[0].runId);

  // What the model did, as the stream tells it.
  const text = {};
  let reasoning = "";
  const args = {};
  const names = {};
  const results = {};
  for (const e of events) {
    if (e.type === "TEXT_MESSAGE_CONTENT") text[e.messageId] = (text[e.messageId] ?? "") + e.delta;
    if (e.type === "REASONING_MESSAGE_CONTENT") reasoning += e.delta;
    if (e.type === "TOOL_CALL_START") names[e.toolCallId] = e.toolCallName;
    if (e.type === "TOOL_CALL_ARGS") args[e.toolCallId] = (args[e.toolCallId] ?? "") + e.delta;
    if (e.type === "TOOL_CALL_RESULT") results[e.toolCallId] = e.content;
  }
  assert.deepEqual(Object.values(text), ["Let me search.", "Found it."]);
  assert.equal(reasoning, "Checking the notes.");
  const calls = Object.keys(names);
  assert.equal(calls.length, 1);
  assert.equal(names[calls[0]], "search_notes");
  assert.deepEqual(JSON.parse(args[calls[0]]), { query: "history limit" });
  assert.ok(results[calls[0]]?.length > 0, "the tool's result is in the stream");

  // Resumed with Last-Event-ID from the middle, the stream is the rest.
  const cut = all.findIndex((e) => e.id && e.event.type === "TOOL_CALL_END");
  assert.ok(cut > 0, "a stored event closes the tool call");
  const rest = await readAGUI(all[cut].id);
  assert.deepEqual(rest.map((e) => e.data), all.slice(cut + 1).map((e) => e.data));
});

test("@ag-ui/client's HttpAgent runs a definition, two runs on one thread", async () => {
  const threadId = randomUUID();
  const agent = new HttpAgent({
    url: `${agentree.base}/api/orgs/${agentree.org}/agent-definitions/${agentree.definition}/ag-ui`,
    headers: auth,
    threadId,
    initialMessages: [{ id: randomUUID(), role: "user", content: "Hi agent" }],
  });

  async function run(runId) {
    const seen = [];
    const result = await agent.runAgent({ runId }, {
      onEvent({ event }) { seen.push(validateAGUI(event)); },
    });
    return { seen, result };
  }

  const first = await run("run-1");
  assert.equal(first.seen[0].type, "RUN_STARTED");
  assert.equal(first.seen[0].threadId, threadId);
  assert.equal(first.seen[0].runId, "run-1");
  assert.equal(first.seen.at(-1).type, "RUN_FINISHED");
  assert.equal(first.seen.at(-1).outcome?.type, "success");
  const said = (r) => r.result.newMessages.filter((m) => m.role === "assistant").map((m) => m.content);
  assert.deepEqual(said(first), ["You said: Hi agent (turn 1)"]);

  // The agent keeps the thread's messages; the next input continues it.
  agent.addMessage({ id: randomUUID(), role: "user", content: "And again" });
  const second = await run("run-2");
  assert.equal(second.seen[0].runId, "run-2");
  assert.equal(second.seen[0].threadId, threadId);
  assert.deepEqual(said(second), ["You said: And again (turn 2)"], "the model saw the first run");
  assert.equal(agent.messages.filter((m) => m.role === "assistant").length, 2);
});

test("an approval round-trips through HttpAgent: an interrupt, then resume", async () => {
  const agent = new HttpAgent({
    url: `${agentree.base}/api/orgs/${agentree.org}/agent-definitions/${agentree.definition}/ag-ui`,
    headers: auth,
    threadId: randomUUID(),
    initialMessages: [{ id: randomUUID(), role: "user", content: "Please count 'three little words'" }],
  });
  const run = async (params) => {
    const seen = [];
    await agent.runAgent(params, { onEvent({ event }) { seen.push(validateAGUI(event)); } });
    return seen;
  };

  // The call waits for approval: the run finishes with an interrupt.
  const first = await run({ runId: "run-ask" });
  const started = first.filter((e) => e.type === "TOOL_CALL_START");
  assert.equal(started.length, 1);
  assert.equal(started[0].toolCallName, "word_count");
  assert.ok(!first.some((e) => e.type === "TOOL_CALL_RESULT"), "nothing ran before the approval");
  const finished = first.at(-1);
  assert.equal(finished.type, "RUN_FINISHED");
  assert.equal(finished.outcome?.type, "interrupt");
  assert.equal(finished.outcome.interrupts.length, 1);
  const interrupt = finished.outcome.interrupts[0];
  assert.equal(interrupt.reason, "tool_call");
  assert.equal(interrupt.toolCallId, started[0].toolCallId);

  // Approved with resume[], the next run has the call's result and the answer.
  const second = await run({
    runId: "run-approve",
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
  });
  assert.equal(second[0].type, "RUN_STARTED");
  assert.equal(second[0].runId, "run-approve");
  const result = second.find((e) => e.type === "TOOL_CALL_RESULT");
  assert.equal(result?.toolCallId, interrupt.toolCallId);
  assert.equal(result.content, "3 words");
  assert.ok(!second.some((e) => e.type === "TOOL_CALL_START"), "the call is not started again");
  const text = second.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  assert.equal(text, "Three words.");
  assert.equal(second.at(-1).outcome?.type, "success");
});
