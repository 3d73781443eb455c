import deepEqual from 'fast-deep-equal';

/** One entry of `.tmp/current/logs/invocation-history.json` (seed 000); extra fields are kept. */
export interface InvocationRecord {
  agent_name: string;
  config: Record<string, unknown>;
  timestamp?: string;
  result?: string;
  reason?: string;
  [extra: string]: unknown;
}

export interface CheckInput {
  readonly agent_name: string;
  readonly config: Record<string, unknown>;
  readonly max_repeats?: number;
}

/** Seed 000's output, field for field. */
export interface CheckResult {
  loop_detected: boolean;
  invocation_count: number;
  max_allowed: number;
  action: 'continue' | 'halt';
  message: string;
  diagnostic_info: {
    recent_invocations: InvocationRecord[];
    pattern: string;
    suspected_cause: string;
  };
}

export const DEFAULT_MAX_REPEATS = 3;
const RECENT = 5;

export function sameInvocation(r: Pick<InvocationRecord, 'agent_name' | 'config'>, agent: string, config: Record<string, unknown>): boolean {
  return r.agent_name === agent && deepEqual(r.config, config);
}

/** Consecutive invocations of agent+config counted from the most recent backwards. */
export function countConsecutive(history: readonly InvocationRecord[], agent: string, config: Record<string, unknown>): number {
  let n = 0;
  for (let i = history.length - 1; i >= 0 && sameInvocation(history[i] as InvocationRecord, agent, config); i--) n++;
  return n;
}

/** Seed 000's check-infinite-loop over a history, oldest first. */
export function checkInfiniteLoop(history: readonly InvocationRecord[], input: CheckInput): CheckResult {
  const max = input.max_repeats ?? DEFAULT_MAX_REPEATS;
  const count = countConsecutive(history, input.agent_name, input.config);
  return describeCheck(history.slice(-(Math.max(count, RECENT) + 1)), count, max, input.agent_name);
}

/**
 * Builds the result from the tail of the history (it must hold the chain and the entry before
 * it) and the chain's length.
 *
 * `recent_invocations`, as the seed's examples show it: walking back from the most recent, at most
 * five entries, stopping after the first one of another agent (the one that broke the chain).
 */
export function describeCheck(tail: readonly InvocationRecord[], count: number, max: number, agent: string): CheckResult {
  const recent: InvocationRecord[] = [];
  for (let i = tail.length - 1; i >= 0 && recent.length < RECENT; i--) {
    const r = tail[i] as InvocationRecord;
    recent.unshift(r);
    if (r.agent_name !== agent) break;
  }
  const base = { invocation_count: count, max_allowed: max };
  if (tail.length === 0) {
    return {
      loop_detected: false,
      ...base,
      action: 'continue',
      message: 'First invocation - no loop detected',
      diagnostic_info: { recent_invocations: [], pattern: 'No previous invocations', suspected_cause: 'N/A' },
    };
  }
  if (count >= max) {
    return {
      loop_detected: true,
      ...base,
      action: 'halt',
      message: `🚨 EMERGENCY: Infinite loop detected - same agent+config invoked ${count} times without progress`,
      diagnostic_info: {
        recent_invocations: recent,
        pattern: `Same config invoked ${count} times consecutively`,
        suspected_cause: suspectedCause(tail.slice(-count), agent),
      },
    };
  }
  const breaker = tail[tail.length - 1 - count];
  let message: string;
  let pattern: string;
  let cause: string;
  if (breaker === undefined) {
    message = `No loop detected - same agent+config invoked ${count} ${count === 1 ? 'time' : 'times'}, below the limit of ${max}`;
    pattern = `Same config invoked ${count} ${count === 1 ? 'time' : 'times'} consecutively`;
    cause = 'N/A - below the loop threshold';
  } else if (breaker.agent_name !== agent) {
    message = 'No loop detected - consecutive chain broken by different agent';
    pattern = 'Different agent invoked between retries';
    cause = 'N/A - normal multi-agent workflow';
  } else {
    message = 'No loop detected - different configurations used';
    pattern = 'Different configurations used - iterative progress';
    cause = 'N/A - normal workflow progression';
  }
  return { loop_detected: false, ...base, action: 'continue', message, diagnostic_info: { recent_invocations: recent, pattern, suspected_cause: cause } };
}

type FailureKind = 'type-check' | 'build' | 'test' | 'timeout' | 'validation';

function failureKind(records: readonly InvocationRecord[]): FailureKind {
  const text = records.map((r) => `${r.result ?? ''} ${r.reason ?? ''}`).join('\n');
  if (records.every((r) => /time ?out|timed out/i.test(`${r.result ?? ''} ${r.reason ?? ''}`))) return 'timeout';
  if (/type[- ]?check|type error|\btsc\b|mypy/i.test(text)) return 'type-check';
  if (/\bbuild\b|compil/i.test(text)) return 'build';
  if (/\btests?\b/i.test(text)) return 'test';
  return 'validation';
}

const FAILED = /fail|error|reject|invalid|timeout|timed out/i;

/** Seed 000's pattern and cause analysis, in the form its examples give: "<what> - <why>". */
export function suspectedCause(chain: readonly InvocationRecord[], agent: string): string {
  const results = chain.map((r) => r.result).filter((r): r is string => typeof r === 'string' && r.length > 0);
  if (results.length === 0) return 'Unknown pattern - review worker logs for details';
  const failed = results.filter((r) => FAILED.test(r)).length;
  if (failed === 0) return 'Worker succeeds but is invoked again with the same config - the orchestrator does not register completion';
  if (failed < results.length) return 'Worker produces inconsistent results - review worker logs for details';
  switch (failureKind(chain)) {
    case 'timeout':
      return 'Worker times out repeatedly - the task exceeds its time limit';
    case 'type-check':
      return `Worker fails type-check repeatedly - ${/fix/i.test(agent) ? 'bug fixes introduce type errors' : 'changes introduce type errors'}`;
    case 'build':
      return `Worker fails build repeatedly - ${/depend/i.test(agent) ? 'dependency updates break build' : 'build process broken by changes'}`;
    case 'test':
      return 'Worker fails tests repeatedly - tests fail after modifications';
    case 'validation':
      return 'Worker fails validation repeatedly - review worker logs for details';
  }
}
