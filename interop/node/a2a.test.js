// Agentree definitions served over A2A, driven by the official
// @a2a-js/sdk client (run by the Go test TestA2AWithOfficialClient,
// gateway/a2a_test.go). The gateway speaks A2A 0.3.0, the version this
// client and a2a-go share, so the client runs with its legacyCompat
// (v0.3) layer on; everything else is the client as shipped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { Role, TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";

function need(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set: run this suite through the Go test TestA2AWithOfficialClient (go test ./gateway -run TestA2AWithOfficialClient)`);
  }
  return v;
}

const base = need("AGENTREE_BASE_URL");
const key = need("AGENTREE_API_KEY");
const org = need("AGENTREE_ORG");
const oneShot = need("AGENTREE_A2A_ONESHOT"); // a one-shot definition's slug
const chat = need("AGENTREE_A2A_CHAT"); // a multi-turn definition's slug

// withKey is fetch with the organization's API key: the card's security
// scheme (HTTP bearer).
const withKey = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${key}`);
  return fetch(url, { ...init, headers });
};

const legacyCompat = { enabled: true };
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withKey, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey, legacyCompat }),
  }),
);

// agentURL is an agent's base URL; the client resolves its card at
// .well-known/agent-card.json relative to it.
const agentURL = (slug) => `${base}/a2a/${org}/${slug}/`;

const userText = (text, extra = {}) => ({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }], ...extra },
});

const textOf = (parts) => parts.filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("");

test("the card is discovered from the agent's URL", async () => {
  const card = await new DefaultAgentCardResolver({ fetchImpl: withKey, legacyCompat }).resolve(agentURL(oneShot));
  assert.equal(card.name, "Echo over A2A");
  assert.equal(card.capabilities.streaming, true);
  assert.equal(card.skills[0].id, oneShot);
  assert.ok(card.securitySchemes.agentreeApiKey, "the card names the API key scheme");
  assert.equal(card.supportedInterfaces[0].url, `${base}/a2a/${org}/${oneShot}`);
  assert.equal(card.supportedInterfaces[0].protocolVersion, "0.3.0");
});

test("send, get and resubscribe: a one-shot task completes with its answer", async () => {
  const client = await factory.createFromUrl(agentURL(oneShot));
  const task = await client.sendMessage(userText("hello"));
  assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
  assert.equal(task.contextId, task.id, "a task's context is its execution");
  assert.equal(textOf(task.artifacts[0].parts), "You said: hello (turn 1)");

  const got = await client.getTask({ id: task.id, historyLength: 1 });
  assert.equal(got.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(got.history.length, 1, "historyLength is honored");
  assert.equal(got.history[0].role, Role.ROLE_AGENT);
  const all = await client.getTask({ id: task.id });
  assert.deepEqual(all.history.map((m) => [m.role, textOf(m.parts)]), [
    [Role.ROLE_USER, "hello"],
    [Role.ROLE_AGENT, "You said: hello (turn 1)"],
  ]);

  // A finished task's stream is the task, and ends.
  const events = [];
  for await (const ev of client.resubscribeTask({ id: task.id })) events.push(ev);
  assert.equal(events.length, 1);
  assert.equal(events[0].payload.$case, "task");
  assert.equal(events[0].payload.value.status.state, TaskState.TASK_STATE_COMPLETED);
});

test("stream: the answer arrives as artifact chunks, then the final status", async () => {
  const client = await factory.createFromUrl(agentURL(oneShot));
  const events = [];
  for await (const ev of client.sendMessageStream(userText("streamed"))) events.push(ev);
  assert.equal(events[0].payload.$case, "task", "the stream starts with the task");
  const id = events[0].payload.value.id;
  const chunks = events.filter((e) => e.payload.$case === "artifactUpdate" && e.payload.value.append);
  assert.ok(chunks.length >= 2, `the answer streams in chunks: ${JSON.stringify(events)}`);
  const first = events.find((e) => e.payload.$case === "artifactUpdate");
  const streamed = textOf(first.payload.value.artifact.parts) + chunks.map((e) => textOf(e.payload.value.artifact.parts)).join("");
  assert.equal(streamed, "You said: streamed (turn 1)");
  const last = events.at(-1);
  assert.equal(last.payload.$case, "statusUpdate");
  assert.equal(last.payload.value.taskId, id);
  assert.equal(last.payload.value.status.state, TaskState.TASK_STATE_COMPLETED);
});

test("input-required round trip, then cancel", async () => {
  const client = await factory.createFromUrl(agentURL(chat));
  const first = await client.sendMessage(userText("first"));
  assert.equal(first.status.state, TaskState.TASK_STATE_INPUT_REQUIRED, JSON.stringify(first));
  assert.equal(textOf(first.status.message.parts), "You said: first (turn 1)");

  // The second message continues the same task.
  const second = await client.sendMessage(userText("second", { taskId: first.id }));
  assert.equal(second.id, first.id);
  assert.equal(second.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  assert.equal(textOf(second.status.message.parts), "You said: second (turn 2)");

  // Streamed, the third turn ends input-required too.
  const events = [];
  for await (const ev of client.sendMessageStream(userText("third", { taskId: first.id }))) events.push(ev);
  assert.equal(events.at(-1).payload.$case, "statusUpdate");
  assert.equal(events.at(-1).payload.value.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  assert.equal(textOf(events.at(-1).payload.value.status.message.parts), "You said: third (turn 3)");

  const canceled = await client.cancelTask({ id: first.id });
  assert.equal(canceled.id, first.id);
  // Cancel is acknowledged at once and takes effect shortly after.
  let got = canceled;
  for (let i = 0; i < 200 && got.status.state !== TaskState.TASK_STATE_CANCELED; i++) {
    await new Promise((r) => setTimeout(r, 50));
    got = await client.getTask({ id: first.id });
  }
  assert.equal(got.status.state, TaskState.TASK_STATE_CANCELED);
  await assert.rejects(client.cancelTask({ id: first.id }), /cannot be canceled/);
  await assert.rejects(client.sendMessage(userText("fourth", { taskId: first.id })), /has ended/);
});

test("an unknown task is the spec's TaskNotFound", async () => {
  const client = await factory.createFromUrl(agentURL(oneShot));
  await assert.rejects(client.getTask({ id: randomUUID() }), (err) => {
    assert.match(String(err.message), /not found/);
    return true;
  });
});
