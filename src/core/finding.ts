import type { SignalId } from './config';
import type { EventRef } from './events';

/** What the watched agent (or its orchestrator) should do, from least to most severe. */
export type Action = 'continue' | 'warn' | 'escalate' | 'halt';
const SEVERITY: Readonly<Record<Action, number>> = { continue: 0, warn: 1, escalate: 2, halt: 3 };

export function severity(action: Action): number {
  return SEVERITY[action];
}

/** Seed 002's task statuses a finding asks for. */
export type TaskStatus = 'STALLED' | 'BLOCKED';

export interface Finding {
  readonly signal: SignalId;
  readonly action: Action;
  /** How many times the pattern has been seen (tokens used, for `budget`). */
  readonly count: number;
  /** The count at which the signal takes its action (the budget, for `budget`). */
  readonly threshold: number;
  /** The event on which the finding fired. */
  readonly at: EventRef;
  readonly session: string;
  readonly task?: string;
  readonly agent?: string;
  /** One line saying what repeats, e.g. `read_file {"path":"a.ts"}`. */
  readonly subject: string;
  readonly message: string;
  readonly recommendation: string;
  /** The events that make the pattern, oldest first (the most recent ones when it is long). */
  readonly evidence: readonly EventRef[];
  readonly status?: TaskStatus;
  /** Identifies one occurrence of a pattern: a finding that escalates or grows keeps its episode. */
  readonly episode: string;
  /** The step within its episode it was raised at (a budget's level), when the signal has steps. */
  readonly stage?: string;
  /** Signal-specific data (seed 000's JSON for `repeated-invocation`, the level for `budget`). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * A finding as it is kept (raised, or as it stood last): its texts made flat. A text built by
 * joining pieces (a template's parts, numbers written out) is a tree of its pieces in V8 until it
 * is read whole, about 250 bytes for a message of 100 characters; reading its last character makes
 * V8 write it out flat in place (about 100), and lets the pieces go. `replay --json` and `scan`
 * hold every finding to the end (7,077 on the bench's stream: 6.2 → 4.4 MB held). The finding is
 * returned as it came; nothing in it changes but how V8 stores its strings.
 */
export function keptFinding(f: Finding): Finding {
  flat(f.message);
  flat(f.subject);
  flat(f.recommendation);
  flat(f.episode);
  return f;
}

function flat(text: string): void {
  if (text.length > 0) text.charCodeAt(text.length - 1);
}

/** At most this many evidence references are kept per finding: the newest ones. */
export const MAX_EVIDENCE = 20;

export function pushEvidence(list: EventRef[], ref: EventRef): void {
  pushBounded(list, ref, MAX_EVIDENCE);
}

/** Keeps the last `max` items. */
export function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  while (list.length > max) list.shift();
}
