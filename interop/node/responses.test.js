// /v1/responses through the official `openai` npm client, pointed at the
// gateway with an Agentree API key. The Go test's fake model answers a
// prompt P as "You said: P (turn N)", N being how many user messages it
// was sent, so each answer shows what history the model saw.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { agentree } from "./harness.js";

const client = new OpenAI({ baseURL: `${agentree.base}/v1`, apiKey: agentree.key, maxRetries: 0 });

function assertUsage(r, input, output) {
  assert.equal(r.usage.input_tokens, input, "input tokens");
  assert.equal(r.usage.output_tokens, output, "output tokens");
  assert.equal(r.usage.total_tokens, input + output, "total tokens");
}

test("a response, created and then retrieved", async () => {
  const r = await client.responses.create({ model: agentree.model, input: "Hello from Node" });
  assert.match(r.id, /^resp_/);
  assert.equal(r.object, "response");
  assert.equal(r.status, "completed");
  assert.equal(r.model, agentree.model);
  assert.equal(r.output_text, "You said: Hello from Node (turn 1)");
  assertUsage(r, 10, 5);

  const got = await client.responses.retrieve(r.id);
  assert.equal(got.id, r.id);
  assert.equal(got.output_text, r.output_text);
  assertUsage(got, 10, 5);
});

test("a streamed response: deltas, then one response.completed", async () => {
  const stream = await client.responses.create({ model: agentree.model, input: "Stream to Node", stream: true });
  const types = [];
  const seq = [];
  let deltas = "";
  const completed = [];
  for await (const ev of stream) {
    types.push(ev.type);
    seq.push(ev.sequence_number);
    if (ev.type === "response.output_text.delta") deltas += ev.delta;
    if (ev.type === "response.completed") completed.push(ev.response);
  }
  assert.equal(types[0], "response.created");
  assert.equal(types.at(-1), "response.completed");
  assert.deepEqual(seq, seq.map((_, i) => i), "sequence numbers count from 0 without gaps");
  assert.equal(deltas, "You said: Stream to Node (turn 1)");
  assert.ok(types.filter((t) => t === "response.output_text.delta").length > 1, "the text came in more than one delta");
  assert.equal(completed.length, 1);
  const final = completed[0];
  assert.equal(final.status, "completed");
  const text = final.output.flatMap((it) => it.content ?? []).map((c) => c.text).join("");
  assert.equal(text, deltas, "the completed response holds what was streamed");
  assertUsage(final, 10, 5);

  const got = await client.responses.retrieve(final.id);
  assert.equal(got.output_text, deltas);
});

test("a conversation over three turns with previous_response_id", async () => {
  let prev;
  const ids = [];
  for (const [i, prompt] of ["First", "Second", "Third"].entries()) {
    const r = await client.responses.create({
      model: agentree.model, input: prompt, ...(prev ? { previous_response_id: prev.id } : {}),
    });
    assert.equal(r.status, "completed");
    assert.equal(r.output_text, `You said: ${prompt} (turn ${i + 1})`, "the model saw the turns before");
    assertUsage(r, 10 * (i + 1), 5);
    if (prev) assert.equal(r.previous_response_id, prev.id);
    assert.ok(!ids.includes(r.id), "each turn is a response of its own");
    ids.push(r.id);
    prev = r;
  }
});

test("bad input is the spec's error", async () => {
  await assert.rejects(
    client.responses.create({ model: "no-such-model", input: "Hi" }),
    (err) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.code, "model_not_found");
      assert.equal(err.param, "model");
      assert.match(err.message, new RegExp(agentree.model), "the refusal names what is served");
      return true;
    },
  );
});
