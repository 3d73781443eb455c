import type { GuardianEvent, PromptSender } from '../core/events';
import { boundedText } from '../core/redact';
import { argsObject } from './transcript';

/*
 * The one vocabulary every reader builds the guardian's events with (issue 25): a new format is a
 * mapping of its records onto these, not a copy of the shapes. Each takes the record's scope (its
 * session, the agent, and its time when the format has one).
 */

/** What every event of one record shares. */
export interface RecordScope {
  readonly session: string;
  readonly agent: string;
  readonly ts?: string;
}

/** How a call ended, as a reader tells it: its output, its error, or (undefined) not known. */
export type CallOutcome = { readonly ok: true; readonly output: string } | { readonly ok: false; readonly error: string } | undefined;

export function common(scope: RecordScope) {
  return { v: 1 as const, session: scope.session, agent: scope.agent, ...(scope.ts !== undefined ? { ts: scope.ts } : {}) };
}

/**
 * An event of the scope: its common fields, then `fields`, in that order (as `{ ...common(scope),
 * ...fields }` writes them). Not written as a spread: Node 20's V8 builds an object literal that
 * starts with a spread and goes on with more keys about 50 times slower than this (3 µs against 60
 * ns; 7 % of the editor's first read of Claude Code transcripts; Node 24 makes both fast).
 */
export function scoped<const F extends object>(scope: RecordScope, fields: F): ReturnType<typeof common> & F {
  return Object.assign(common(scope), fields);
}

/** `{ ...base, ...fields }`, in that key order, without the slow spread (see `scoped`). */
export function withBase<B extends object, const F extends object>(base: B, fields: F): B & F {
  return Object.assign({}, base, fields);
}

/*
 * Calls and their results are most of the events any reader makes: each is written as one object
 * literal per shape (with or without a time, an id, an outcome), the keys in `scoped`'s order. One
 * object, its fields in it, where `scoped` made three and grew the first to take the rest.
 */

/** A call, with its id when the format pairs results by one. */
export function toolEvent(scope: RecordScope, tool: string, args: unknown, id?: string): GuardianEvent {
  const { session, agent, ts } = scope;
  const a = argsObject(args);
  if (ts !== undefined) return id !== undefined ? { v: 1, session, agent, ts, type: 'tool', tool, args: a, id } : { v: 1, session, agent, ts, type: 'tool', tool, args: a };
  return id !== undefined ? { v: 1, session, agent, type: 'tool', tool, args: a, id } : { v: 1, session, agent, type: 'tool', tool, args: a };
}

/** The result of the call with this id: its output, its error, or no outcome when it is not known. */
export function resultEvent(scope: RecordScope, id: string, outcome: CallOutcome): GuardianEvent {
  const { session, agent, ts } = scope;
  if (ts !== undefined) {
    if (outcome === undefined) return { v: 1, session, agent, ts, type: 'tool_result', id };
    return outcome.ok ? { v: 1, session, agent, ts, type: 'tool_result', id, ok: true, output: outcome.output } : { v: 1, session, agent, ts, type: 'tool_result', id, ok: false, error: outcome.error };
  }
  if (outcome === undefined) return { v: 1, session, agent, type: 'tool_result', id };
  return outcome.ok ? { v: 1, session, agent, type: 'tool_result', id, ok: true, output: outcome.output } : { v: 1, session, agent, type: 'tool_result', id, ok: false, error: outcome.error };
}

/** The prompt a turn starts with (beside its `user` event), bounded; `from` where the format says who sent it. */
export function promptEvent(scope: RecordScope, text: string, from?: PromptSender): GuardianEvent {
  return scoped(scope, { type: 'prompt', text: boundedText(text), ...(from !== undefined ? { from } : {}) });
}

/** The agent's answer in text, bounded. */
export function replyEvent(scope: RecordScope, text: string): GuardianEvent {
  return scoped(scope, { type: 'reply', text: boundedText(text) });
}

/** A user turn the person typed (text, not tool results): the guardian's `user` boundary. */
export function userEvent(scope: RecordScope, text: string): GuardianEvent {
  return scoped(scope, { type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) });
}

/** An HTTP status, when the value is one (an integer from 100 to 599). */
export function httpStatus(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 100 && v <= 599 ? v : undefined;
}

/** What a failed model request says, as far as the format tells: each field only when there. */
export interface ApiErrorParts {
  readonly error?: string | undefined;
  readonly status?: number | undefined;
  readonly class?: string | undefined;
  readonly model?: string | undefined;
  /** The agent's own retry number, when the record is a retry. */
  readonly retry?: number | undefined;
}

/** A failed model request: its text bounded, its status only when it is an HTTP status. */
export function apiErrorEvent(scope: RecordScope, parts: ApiErrorParts): GuardianEvent {
  const status = httpStatus(parts.status);
  return scoped(scope, {
    type: 'api_error',
    ...(parts.error !== undefined && parts.error !== '' ? { error: boundedText(parts.error) } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(parts.class !== undefined && parts.class !== '' ? { class: parts.class } : {}),
    ...(parts.model !== undefined && parts.model !== '' ? { model: parts.model } : {}),
    ...(parts.retry !== undefined ? { retry: parts.retry } : {}),
  });
}

/** The agent compacted its context (its conversation replaced by a summary); `trigger` where the format says who asked (`auto`, `manual`). */
export function compactionEvent(scope: RecordScope, trigger?: string): GuardianEvent {
  return scoped(scope, { type: 'compaction', ...(trigger !== undefined && trigger !== '' ? { trigger } : {}) });
}
