package research

// TaskQueue is the research sample's task queue.
const TaskQueue = "agentree-research"
