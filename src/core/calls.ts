import type { Canonicalizer } from './canonical';
import { hashText } from './canonical';
import { sayCall } from './plainWords';
import { classifyError, type ErrorKind } from './errorClass';
import type { EventRef } from './events';

/** What became of a tool call, as far as the log tells. */
export type Outcome =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'ok'; readonly output?: string }
  | { readonly kind: 'error'; readonly error: string; readonly errorKind: ErrorKind };

export const UNKNOWN: Outcome = { kind: 'unknown' };

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
  readonly outcome: Outcome;
  readonly ts?: number;
  readonly session: string;
  readonly task?: string;
  readonly agent?: string;
}

export interface OutcomeFields {
  readonly ok?: boolean;
  readonly error?: string;
  readonly output?: unknown;
}

/** Outcome of inline or result fields; undefined when they record nothing. */
export function outcomeOf(fields: OutcomeFields, canon: Canonicalizer): Outcome | undefined {
  const hasError = typeof fields.error === 'string' && fields.error.length > 0;
  if (fields.ok === false || hasError) {
    const text = hasError ? (fields.error as string) : typeof fields.output === 'string' && fields.output.length > 0 ? fields.output : 'failed';
    return { kind: 'error', error: text, errorKind: classifyError(text) };
  }
  if (fields.output !== undefined) {
    const text = typeof fields.output === 'string' ? fields.output : canon.text(fields.output);
    return { kind: 'ok', output: hashText(text) };
  }
  if (fields.ok === true) return { kind: 'ok' };
  return undefined;
}

/** `tool` + canonical arguments: two calls with equal signatures are the same call. */
export function callSignature(tool: string, canonicalArgs: string): string {
  return `${tool}\u0000${canonicalArgs}`;
}

/** A call in plain words (`bash: npm test`), from its tool and canonical arguments. */
export function describeCall(tool: string, args: string): string {
  return sayCall(tool, args);
}

/**
 * The progress rule of the repetition detectors: repetitions are progress only when every one
 * succeeded and no two produced the same output. Failures, identical outputs and unrecorded
 * outcomes are no progress.
 */
export function isProgress(outcomes: readonly Outcome[]): boolean {
  const seen = new Set<string>();
  for (const o of outcomes) {
    if (o.kind !== 'ok' || o.output === undefined || seen.has(o.output)) return false;
    seen.add(o.output);
  }
  return outcomes.length > 0;
}

/** What a call ended with, for comparing outcomes: undefined when the log does not tell. */
export function outcomeKey(o: Outcome): string | undefined {
  if (o.kind === 'ok') return o.output === undefined ? undefined : `ok:${o.output}`;
  if (o.kind === 'error') return `err:${hashText(o.error)}`;
  return undefined;
}

/**
 * A looser rule where other calls happen between the repetitions: each repetition ended
 * differently (a failing test whose failure changes between edits counts as moving).
 */
export function isChanging(outcomes: readonly Outcome[]): boolean {
  const seen = new Set<string>();
  for (const o of outcomes) {
    const key = o.kind === 'ok' ? (o.output === undefined ? undefined : `ok:${o.output}`) : o.kind === 'error' ? `err:${hashText(o.error)}` : undefined;
    if (key === undefined || seen.has(key)) return false;
    seen.add(key);
  }
  return outcomes.length > 0;
}
