// What the Node suites share: the Agentree under test, as the Go test
// TestNodeHarness (gateway/node_harness_test.go) describes it in the
// environment, a small SSE reader, and strict AG-UI validation with
// @ag-ui/core's own schemas.
import { validateAGUI } from "./agui-schema.js";

export { validateAGUI };

// need returns an environment variable the Go test sets, failing loudly
// when the suite is run by hand without it.
export function need(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set: run this suite through the Go test TestNodeHarness (go test ./gateway -run TestNodeHarness)`);
  }
  return v;
}

export const agentree = {
  base: need("AGENTREE_BASE_URL"),
  key: need("AGENTREE_API_KEY"),
  org: need("AGENTREE_ORG"),
  model: need("AGENTREE_MODEL"),
  execution: need("AGENTREE_EXECUTION_ID"),
  definition: need("AGENTREE_DEFINITION_ID"),
};

// readSSE fetches url and yields each event of its text/event-stream as
// {id, event, data} until the server ends the stream.
export async function* readSSE(url, headers = {}) {
  const resp = await fetch(url, { headers: { Accept: "text/event-stream", ...headers } });
  if (resp.status !== 200) {
    throw new Error(`GET ${url}: ${resp.status} ${await resp.text()}`);
  }
  const decoder = new TextDecoder();
  let buf = "";
  let ev = { data: [] };
  for await (const chunk of resp.body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) !== -1) {
      const line = buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
      if (line === "") {
        if (ev.data.length > 0) {
          yield { id: ev.id, event: ev.event, data: ev.data.join("\n") };
        }
        ev = { data: [] };
        continue;
      }
      if (line.startsWith(":")) continue; // a keep-alive comment
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") ev.data.push(value);
      else if (field === "id") ev.id = value;
      else if (field === "event") ev.event = value;
    }
  }
}

export const auth = { Authorization: `Bearer ${agentree.key}` };
