-- Best-of-N (issue 40): N forks of one execution run from one entry at
-- once; one is promoted. The row names the forks (in order: the branch
-- index is the position) and, once promoted, the one kept and the leaf its
-- copied path ends at in the source execution, so a repeated promote of the
-- same branch answers the same and another branch's is refused.
CREATE TABLE agent_best_of (
    id UUID PRIMARY KEY,
    org_id UUID NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    agent_execution_id UUID NOT NULL REFERENCES agent_execution (id) ON DELETE CASCADE,
    entry_id UUID NOT NULL,
    branch_ids UUID[] NOT NULL,
    promoted_id UUID,
    promoted_leaf_id UUID,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX agent_best_of_execution ON agent_best_of (agent_execution_id, created_at DESC);
