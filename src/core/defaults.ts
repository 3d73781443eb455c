
/** Stable signal ids: config keys, finding ids and documentation all use these. */
export const SIGNAL_IDS = [
  'repeated-invocation',
  'identical-calls',
  'repeated-error',
  'failing-call',
  'windowed-repeat',
  'cycle',
  'identical-output',
  'retry-exhaustion',
  'oscillation',
  'stuck-tier',
  'quality-gate-loop',
  'budget',
  'repeated-prompt',
  'api-error-storm',
  're-delegation',
  'stuck-target',
  'compaction-thrash',
] as const;
export type SignalId = (typeof SIGNAL_IDS)[number];

/*
 * Defaults the hook needs even when the configuration cannot be read. Kept apart from the schema
 * (`configSchema.ts`), which loads a validation library the hook's start-up path does without.
 */

/** The tools through which agents start subagents or new tasks: PAUSE refuses them. */
// `task`: a CLI agent's subagent tool (its session logs name the `task` call that started each subagent).
// `runSubagent`: the subagent tool of VS Code's agent mode (the `agent/runSubagent` tool; its chat
// debug logs keep each child session as `runSubagent-*.jsonl`). `use_subagents`,
// `team_spawn_teammate`: an IDE agent's tools that start subagents and teammates (its tool list and
// its SDK's team tools; the agent's folder under src/agents/ cites them).
// `invoke_agent` and `multi_agent_v1`: subagent tools two of the agents' CLIs offered their model, run live (test/agents).
export const DEFAULT_DELEGATION_TOOLS: readonly string[] = ['Task', 'Agent', 'dispatch_agent', 'spawn_agent', 'delegate_to_agent', 'new_task', 'subagent', 'task', 'runSubagent', 'use_subagents', 'team_spawn_teammate', 'invoke_agent', 'multi_agent_v1'];

/** The signals on which the hook refuses the call that would trip them. */
// `repeated-prompt`: the prompt hook refuses the prompt that would be the loop's next turn.
export const DEFAULT_DENY_SIGNALS: readonly SignalId[] = ['identical-calls', 'failing-call', 'windowed-repeat', 'cycle', 'repeated-error', 'repeated-prompt', 'stuck-target', 'compaction-thrash'];

/**
 * Tools that read the output of a process an earlier call started (a long build, a test run, a
 * server): calling one again with the same arguments while the process runs is waiting, not a
 * loop, and its identical "still running" answers are expected: `read_powershell` and `read_bash`
 * (seen in a real session log polling a 16-minute `cargo test` every 120 s), `BashOutput`,
 * `get_terminal_output`, the agents' tools for a background shell's output. Repetition signals
 * leave them out; a wait that never ends is a matter for budgets.
 */
export const DEFAULT_WAIT_TOOLS: readonly string[] = ['read_powershell', 'read_bash', 'BashOutput', 'get_terminal_output'];
