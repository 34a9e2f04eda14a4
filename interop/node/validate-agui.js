// validate-agui.js FILE checks every line of FILE, one AG-UI event as
// JSON each, with @ag-ui/core's schemas (agui-schema.js); it prints how
// many passed, or exits 1 naming the first that did not. The Go test
// TestAGUIStreamShapes (gateway/agui_test.go) runs it.
import { readFileSync } from "node:fs";
import { validateAGUI } from "./agui-schema.js";

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate-agui.js FILE (one AG-UI event per line)");
  process.exit(2);
}
let n = 0;
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (line.trim() === "") continue;
  try {
    validateAGUI(JSON.parse(line));
  } catch (err) {
    console.error(`event ${n + 1}: ${err.message}`);
    process.exit(1);
  }
  n++;
}
console.log(`${n} AG-UI events valid`);
