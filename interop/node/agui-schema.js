// Strict AG-UI validation with @ag-ui/core's own schemas, shared by the
// Node suites (harness.js) and validate-agui.js, which the Go test
// TestAGUIStreamShapes runs over every event it read.
import { EventSchemas } from "@ag-ui/core/schemas";

// strictSchemas maps each AG-UI event type to its @ag-ui/core schema
// with unknown keys refused: the published schemas let extra keys
// through, and a field the protocol does not have is a bug here.
const strictSchemas = new Map(
  EventSchemas.options.map((s) => [s.shape.type.value, s.strict()]),
);

// validateAGUI parses one event with @ag-ui/core's EventSchemas (the
// union every AG-UI client decodes with) and again with its type's
// schema made strict; it returns the parsed event or throws naming what
// is wrong.
export function validateAGUI(event) {
  const loose = EventSchemas.safeParse(event);
  if (!loose.success) {
    throw new Error(`not an AG-UI event: ${JSON.stringify(event)}: ${loose.error.message}`);
  }
  const strict = strictSchemas.get(event.type).safeParse(event);
  if (!strict.success) {
    throw new Error(`${event.type} has fields its schema lacks: ${JSON.stringify(event)}: ${strict.error.message}`);
  }
  return strict.data;
}
