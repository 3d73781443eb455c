import type { Canonicalizer } from './canonical';
import type { SessionState } from './detector';
import { hash53 } from './canonical';
import { classifyError, FAMILY_OF, type ErrorKind } from './errorClass';
import type { EventRef } from './events';
import { comparedText } from './runNoise';

/**
 * What became of a tool call, as far as the log tells. `key` says how it ended, for comparing
 * outcomes: the hash of the output (zero or more), or of the error (below zero), as a number;
 * undefined when the log does not tell. Computed once per call, an error's only when a signal
 * compares it.
 */
export type Outcome =
  | { readonly kind: 'unknown'; readonly key?: undefined }
  | { readonly kind: 'ok'; readonly key?: number }
  | ErrorOutcome;

export const UNKNOWN: Outcome = { kind: 'unknown' };

/**
 * The guardian's own refusals, as an agent reports them for the call it did not run ("PreToolUse:
 * Bash hook error: Loop Guardian refused this call …", "Tool execution blocked: Loop Guardian: STOP_ALL
 * is set to STOP …") and as the hook records them ("Refused by Loop Guardian (<signal>)"). Such a
 * call did not run: it has no outcome of its own, and its refusal is no error of the agent's (a
 * loop is named by the error that made it, not by the guardian's word for it).
 */
const GUARDIAN_REFUSAL = /^Refused by Loop Guardian\b|Loop Guardian refused this (?:call|prompt)\b|Loop Guardian ended this run\b|Loop Guardian: STOP_ALL is set to (?:STOP|PAUSE)\b/;

/** Whether an error text is the guardian's refusal of the call (see GUARDIAN_REFUSAL). */
export function isGuardianRefusal(error: string): boolean {
  return GUARDIAN_REFUSAL.test(error.length > 2048 ? error.slice(0, 2048) : error);
}

export class ErrorOutcome {
  readonly kind = 'error' as const;
  readonly errorKind: ErrorKind;
  private hashed: number | undefined;
  constructor(readonly error: string) {
    this.errorKind = classifyError(error);
  }
  get key(): number {
    return (this.hashed ??= -1 - hash53(comparedText(this.error, 'error')));
  }
}

/** A tool call whose outcome is known, or known to be unrecorded. */
export interface SettledCall {
  /** The `tool` event. */
  readonly ref: EventRef;
  /** The event that settled it: the call itself, its `tool_result`, or a later event. */
  readonly settledAt: EventRef;
  readonly tool: string;
  /** Canonical arguments. */
  readonly args: string;
  /** `tool` + canonical arguments: equal signatures are the same call. */
  readonly signature: string;
  /** What the call is for: its tool and target (intent.ts); calls with one intent that fail alike are one thing tried again. */
  readonly intent: string;
  /** A hash of the signature: calls whose hashes differ are different calls, told at the cost of comparing two numbers. */
  readonly signatureHash: number;
  /** The signature's 53-bit hash above its low 30 bits (`signatureHash`): see `callId`. */
  readonly signatureHigh: number;
  /**
   * False when the canonical arguments (`args`) cannot hold `"K":` for any key K of `keys`: no
   * key of the arguments, at any depth, is one of them. Read from the arguments as the call came,
   * without writing their text (most calls never need it); true where it cannot tell (a key with
   * a `"` in it, whose escaped text may hold one; a value that is not plain JSON; a nesting past
   * the depth limit). A test to make before `args.includes('"K":')`, never instead of it.
   */
  mayHaveArgKey(keys: ReadonlySet<string>): boolean;
  readonly outcome: Outcome;
  /**
   * Which of its session's attempts it belongs to. Calls made before any of their results came back
   * (an assistant message issuing five calls at once) are one attempt: the agent had not seen one
   * outcome when it made the others, so they are not retries of one another.
   */
  readonly attempt: number;
  /** The call's `ts`, as written (callTimeMs reads it: only a signal that needs the time parses it). */
  readonly time?: string;
  readonly session: string;
  /** The session's state as the engine keeps it (the detectors' slots). */
  readonly sessionState: SessionState;
  readonly task?: string;
  readonly agent?: string;
}

/** A call's time in epoch milliseconds; undefined when it has none or it is not a date. */
export function callTimeMs(call: SettledCall): number | undefined {
  if (call.time === undefined) return undefined;
  const ms = Date.parse(call.time);
  return Number.isNaN(ms) ? undefined : ms;
}

export interface OutcomeFields {
  readonly ok?: boolean;
  readonly error?: string;
  readonly output?: unknown;
}

/** Outcome of inline or result fields; undefined when they record nothing. */
export function outcomeOf(fields: OutcomeFields, canon: Canonicalizer): Outcome | undefined {
  const hasError = typeof fields.error === 'string' && fields.error.length > 0;
  // A call the guardian refused did not run: no outcome (it still counts as a call made).
  if (hasError && isGuardianRefusal(fields.error as string)) return UNKNOWN;
  if (fields.ok === false || hasError) {
    return new ErrorOutcome(hasError ? (fields.error as string) : typeof fields.output === 'string' && fields.output.length > 0 ? fields.output : 'failed');
  }
  if (fields.output !== undefined) {
    return { kind: 'ok', key: typeof fields.output === 'string' ? hash53(comparedText(fields.output, 'output')) : canon.hash(fields.output) };
  }
  if (fields.ok === true) return OK_UNRECORDED;
  return undefined;
}

const OK_UNRECORDED: Outcome = { kind: 'ok' };

/** `tool` + canonical arguments: two calls with equal signatures are the same call. */
export function callSignature(tool: string, canonicalArgs: string): string {
  return `${tool}\u0000${canonicalArgs}`;
}

/**
 * A 53-bit hash as a call carries it (`SettledCall.signatureHash`): below 2^30, a small integer
 * kept without a box of its own.
 */
export function reduceHash(hash: number): number {
  return hash % 1073741824;
}

/**
 * A call's whole 53-bit signature hash, as one number: two calls with different ids are different
 * calls; two different calls share an id once in 2^53 (about 10^16) comparisons, so a signal that
 * compares ids keeps no call's text or arguments alive to confirm what the ids say.
 */
export function callId(c: Pick<SettledCall, 'signatureHash' | 'signatureHigh'>): number {
  return wholeHash(c.signatureHash, c.signatureHigh);
}

/** A 53-bit hash from its low 30 bits (`reduceHash`) and the rest (`hashHigh`). */
export function wholeHash(low: number, high: number): number {
  return high * 1073741824 + low;
}

/** A 53-bit hash above its low 30 bits (`SettledCall.signatureHigh`): a small integer too. */
export function hashHigh(hash: number): number {
  return Math.floor(hash / 1073741824);
}

/**
 * Retries of a failure that passes by itself: every failure among the outcomes is transient (a
 * rate limit, a time-out, the network), and there are no more of them than the retries seed 004
 * allows that family (`budget`). A careful person lets such a call be tried again.
 */
export function withinTransientBudget(outcomes: readonly Outcome[], budget: number): boolean {
  let failures = 0;
  for (const o of outcomes) {
    if (o.kind !== 'error') continue;
    if (FAMILY_OF[o.errorKind] !== 'transient') return false;
    failures++;
  }
  return failures > 0 && failures <= budget;
}

/**
 * The progress rule of the repetition detectors: repetitions are progress only when every one
 * succeeded and no two produced the same output. Failures, identical outputs and unrecorded
 * outcomes are no progress.
 */
export function isProgress(outcomes: readonly Outcome[]): boolean {
  return progressOf(outcomes.length, (i) => {
    const o = outcomes[i] as Outcome;
    return o.kind === 'ok' ? o.key : undefined;
  });
}

/**
 * The progress rule (`isProgress`) over `n` repetitions, however they are kept: `succeededWith(i)`
 * is the key of the i-th one's output when it succeeded with a known one, else undefined.
 */
export function progressOf(n: number, succeededWith: (i: number) => number | undefined): boolean {
  const seen = new Set<number>();
  for (let i = 0; i < n; i++) {
    const key = succeededWith(i);
    if (key === undefined || seen.has(key)) return false;
    seen.add(key);
  }
  return n > 0;
}
