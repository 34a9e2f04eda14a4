-- Agents as peers (issue 39): a definition is served over A2A or as an
-- MCP tool only when it says so; every existing definition stays
-- private, as it was.
ALTER TABLE agent_definition
    ADD COLUMN expose_a2a boolean NOT NULL DEFAULT false,
    ADD COLUMN expose_mcp boolean NOT NULL DEFAULT false;
