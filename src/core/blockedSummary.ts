import type { TaskAnalysis } from './taskAnalysis';

/** One entry of the blocked-task registry `.tmp/guardian/blocked.json`. */
export interface BlockedTask {
  readonly task_id: string;
  readonly blocked_at: string;
  readonly pattern: TaskAnalysis['pattern_type'];
  readonly attempts: number;
  readonly tier: number;
  readonly reason: string;
  readonly latest_error: string | null;
  readonly repeated_error_count: number;
  readonly suggested_action: string;
  readonly summary_file: string;
  readonly description?: string;
}

const RULE = '═'.repeat(79);
const THIN = '─'.repeat(79);

function heading(title: string): string[] {
  return [RULE, title, RULE, ''];
}

/** Seed 003's human-readable summary of a blocked task. */
export function renderBlockedSummary(task: BlockedTask, cleanupCommand: string): string {
  const lines = [
    ...heading('AGENT LOOP GUARDIAN - TASK BLOCKED'),
    `Task ID: ${task.task_id}`,
    `Blocked At: ${task.blocked_at}`,
    '',
    'Task Description:',
    `  ${task.description ?? '(not recorded)'}`,
    '',
    `Loop Pattern: ${task.pattern}`,
    `Attempts: ${task.attempts}`,
    `Current Tier: ${task.tier}`,
    `Blocked Reason: ${task.reason}`,
    '',
    ...heading('REPEATED ERROR'),
    task.latest_error ?? '(no error recorded)',
    ...(task.repeated_error_count > 1 ? ['', `(seen ${task.repeated_error_count} times)`] : []),
    '',
    ...heading('SUGGESTED ACTION'),
    task.suggested_action,
    '',
    ...heading('NEXT STEPS'),
    '1. Review the task description and error message above',
    '2. Identify the root cause (not a retry issue)',
    '3. One of:',
    '   a) Fix the underlying code/requirements and restart',
    '   b) Escalate to human review if fundamental blocker',
    '   c) Queue task for later when related issues are resolved',
    '',
    '4. When ready, cleanup this task:',
    `   ${cleanupCommand}`,
    '',
    RULE,
  ];
  return `${lines.join('\n')}\n`;
}

/** Seed 003's `status` table. */
export function renderBlockedStatus(tasks: readonly BlockedTask[], summaryDir: string): string {
  // A loop, not Math.max(...): the registry is a file anyone can fill, and a spread of it could overflow the stack.
  const width = tasks.reduce((w, t) => Math.max(w, t.task_id.length), 8);
  const rows = tasks.map(
    (t) => `${t.task_id.padEnd(width)}  | Attempts: ${String(t.attempts).padEnd(3)}| Tier: ${String(t.tier).padEnd(3)}| Pattern: ${t.pattern}`,
  );
  return [
    'Agent Loop Guardian Status',
    RULE,
    `Blocked Tasks: ${tasks.length}`,
    THIN,
    ...rows,
    '',
    `Summary files in: ${summaryDir}`,
    '',
  ].join('\n');
}
