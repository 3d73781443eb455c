import type { SignalId } from './config';

/*
 * Defaults the hook needs even when the configuration cannot be read. Kept apart from the schema
 * (`config.ts`), which loads a validation library the hook's start-up path does without.
 */

/** The tools through which agents start subagents or new tasks: PAUSE refuses them. */
// `task` is Copilot CLI's (its `subagent.started` events name the `task` call that started them).
export const DEFAULT_DELEGATION_TOOLS: readonly string[] = ['Task', 'Agent', 'dispatch_agent', 'spawn_agent', 'delegate_to_agent', 'new_task', 'subagent', 'task'];

/** The signals on which the hook refuses the call that would trip them. */
export const DEFAULT_DENY_SIGNALS: readonly SignalId[] = ['identical-calls', 'failing-call', 'windowed-repeat', 'cycle', 'repeated-error'];
