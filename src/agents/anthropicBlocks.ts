import type { GuardianEvent } from '../core/events';
import { argsObject, contentText, isObject, type AdapterSink, type Json, type RecentSet } from './transcript';

/** What every event of one record shares. */
export interface RecordScope {
  readonly session: string;
  readonly agent: string;
  readonly ts?: string;
}

function common(scope: RecordScope) {
  return { v: 1 as const, session: scope.session, agent: scope.agent, ...(scope.ts !== undefined ? { ts: scope.ts } : {}) };
}

const TOOL_USE_ERROR = /<tool_use_error>([\s\S]*?)(<\/tool_use_error>|$)/;
const EXIT_CODE = /^Exit code (\d+)/;

/**
 * A tool_result's outcome: an error when `is_error` says so, when a Bash result starts with
 * `Exit code N` (N > 0), or when a validation error comes wrapped in `<tool_use_error>`.
 */
export function resultOutcome(block: Json): { ok: true; output: string } | { ok: false; error: string } {
  const text = contentText(block.content);
  const wrapped = TOOL_USE_ERROR.exec(text);
  if (wrapped) return { ok: false, error: (wrapped[1] ?? '').trim() || text };
  const exit = EXIT_CODE.exec(text);
  if (block.is_error === true || (exit && Number(exit[1]) !== 0)) return { ok: false, error: text.trim() || 'error' };
  return { ok: true, output: text };
}

/**
 * Anthropic-style message content: `tool_use` blocks become `tool` events (each id once: a split
 * message repeats none, but a re-read one would), `tool_result` blocks their `tool_result`
 * events. Returns how many blocks were of either kind.
 */
export function toolBlocks(content: unknown, line: number, scope: RecordScope, seen: RecentSet, sink: AdapterSink, field: string): number {
  if (!Array.isArray(content)) return 0;
  let n = 0;
  content.forEach((block, i) => {
    if (!isObject(block)) return;
    if (block.type === 'tool_use') {
      n++;
      const name = typeof block.name === 'string' && block.name !== '' ? block.name : undefined;
      if (name === undefined) return sink.skipped(line, `${field}[${i}].name`, 'a tool_use block without a tool name');
      const id = typeof block.id === 'string' && block.id !== '' ? block.id : undefined;
      if (id !== undefined && !seen.add(`use:${scope.session}:${id}`)) return;
      const event: GuardianEvent = { ...common(scope), type: 'tool', tool: name, args: argsObject(block.input), ...(id !== undefined ? { id } : {}) };
      sink.event(event, line);
    } else if (block.type === 'tool_result') {
      n++;
      const id = typeof block.tool_use_id === 'string' && block.tool_use_id !== '' ? block.tool_use_id : undefined;
      if (id === undefined) return sink.skipped(line, `${field}[${i}].tool_use_id`, 'a tool_result block without the id of its call');
      if (!seen.add(`result:${scope.session}:${id}`)) return;
      const outcome = resultOutcome(block);
      const event: GuardianEvent = outcome.ok
        ? { ...common(scope), type: 'tool_result', id, ok: true, output: outcome.output }
        : { ...common(scope), type: 'tool_result', id, ok: false, error: outcome.error };
      sink.event(event, line);
    }
  });
  return n;
}

/** What a person typed: the string, or the text blocks (files, images and the like left out). */
export function userText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join('\n');
}

/** A user turn the person typed (text, not tool results): the guardian's `user` boundary. */
export function userEvent(scope: RecordScope, text: string): GuardianEvent {
  return { ...common(scope), type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) };
}
