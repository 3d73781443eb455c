import type { GuardianEvent } from '../../core/events';
import { promptEvent, type RecordScope, replyEvent, resultEvent, toolEvent, userEvent } from '../eventBuilders';
import { contentText, isObject, str, type AdapterSink, type Decoder, type DocumentAdapter, type Json, type JsonlAdapter } from '../transcript';

/*
 * Cursor's agent transcripts. Cursor documents `transcript_path` in its hook input ("null if
 * transcripts disabled", cursor.com/docs/agent/hooks) but not the files' format; what is parsed
 * here is what readers of the files on disk found (../shared/docs/vscode-agents.md, sections 4
 * and 8, and issue 25's description of real transcripts), and nothing more is guessed:
 * - `agent-transcripts/<uuid>/<uuid>.jsonl` (2026): one message per line, `{role, message:
 *   {content: [text | tool_use{name, input} | tool_result{content}]}}`, and `{type: "turn_ended",
 *   status}`; no ids, no timestamps, and results mostly absent;
 * - `agent-transcripts/<uuid>.json` (2025-2026): an array of `{role, text, toolCalls: [{toolName,
 *   args}]}` (user, assistant and tool entries); in its older variant tool entries have no text.
 * Calls and prompts are read even without results: their outcome is then unknown (a finding says
 * so), never guessed. A result without an id answers the oldest call still waiting for one.
 */

const AGENT = 'cursor';

/** Cursor wraps what the person typed in `<user_query>` tags: the text inside is the prompt. */
function typedText(text: string): string {
  const open = text.indexOf('<user_query>');
  const close = open < 0 ? -1 : text.indexOf('</user_query>', open);
  return (close < 0 ? text : text.slice(open + '<user_query>'.length, close)).trim();
}

/** Pairs results without ids with the calls waiting for one, oldest first, by ids of its own. */
class Waiting {
  private next = 0;
  private readonly queue: string[] = [];
  /** Whether this transcript has shown a result at all: until it does, calls are read without waiting for one. */
  results = false;

  call(): string | undefined {
    if (!this.results) return undefined;
    const id = `cursor-${++this.next}`;
    this.queue.push(id);
    if (this.queue.length > 1000) this.queue.shift();
    return id;
  }

  result(): string | undefined {
    this.results = true;
    return this.queue.shift();
  }

  clear(): void {
    this.queue.length = 0;
  }
}

/** A result block: its text is the output; whether it failed the format does not say, unless it says `is_error`. */
function blockResult(scope: RecordScope, id: string, block: Json): GuardianEvent {
  const text = contentText(block.content);
  return resultEvent(scope, id, block.is_error === true ? { ok: false, error: text.trim() || 'error' } : text !== '' ? { ok: true, output: text } : undefined);
}

function isMessageLine(v: Record<string, unknown>): boolean {
  return (v.role === 'user' || v.role === 'assistant') && isObject(v.message) && Array.isArray(v.message.content) && v.type === undefined && v.uuid === undefined && v.sessionId === undefined;
}

class JsonlDecoder implements Decoder {
  private readonly waiting = new Waiting();
  private readonly scope: RecordScope;

  constructor(session: string) {
    this.scope = { session, agent: AGENT };
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(record)', 'not an object');
    if (value.type === 'turn_ended') return;
    if (value.role !== 'user' && value.role !== 'assistant') return sink.skipped(line, 'role', value.role === undefined ? 'missing role' : `unknown role ${JSON.stringify(value.role)}`);
    const content = isObject(value.message) ? value.message.content : undefined;
    if (!Array.isArray(content)) return sink.skipped(line, 'message.content', 'not a list of blocks');
    const text = content
      .map((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
      .join('\n')
      .trim();
    if (text !== '' && value.role === 'user') {
      this.waiting.clear();
      const typed = typedText(text);
      sink.event(userEvent(this.scope, typed), line);
      sink.event(promptEvent(this.scope, typed), line);
    } else if (text !== '') sink.event(replyEvent(this.scope, text), line);
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === 'tool_use') {
        const name = str(block.name);
        if (name === undefined) sink.skipped(line, 'message.content[].name', 'a tool_use block without a tool name');
        else sink.event(toolEvent(this.scope, name, block.input, this.waiting.call()), line);
      } else if (block.type === 'tool_result') {
        const id = this.waiting.result();
        if (id !== undefined) sink.event(blockResult(this.scope, id, block), line);
      }
    }
  }

  finish(): void {}
}

/** `agent-transcripts/<uuid>/<uuid>.jsonl`. */
export const cursorTranscript: JsonlAdapter = {
  layout: 'jsonl',
  agent: AGENT,
  sniff: isMessageLine,
  decoder: (session) => new JsonlDecoder(session),
};

/**
 * An entry of the array: `{role, text?, toolCalls?}`. A `tool` entry may carry no text at all: the
 * older variant of this file records a tool's turn without its output, as its `.txt` twin writes
 * `[Tool result] <name>` with nothing under it (../shared/docs/vscode-agents.md, finding 7; issue
 * 34, two real files from two users that were "not recognised" while such entries were required to
 * hold a text).
 */
function isEntry(v: unknown): v is Json {
  return isObject(v) && typeof v.role === 'string' && (typeof v.text === 'string' || Array.isArray(v.toolCalls) || v.role === 'tool');
}

class ArrayDecoder implements Decoder {
  private readonly waiting = new Waiting();
  private readonly scope: RecordScope;

  constructor(session: string) {
    this.scope = { session, agent: AGENT };
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isEntry(value)) return sink.skipped(line, '(entry)', 'not a {role, text, toolCalls} entry');
    const text = typeof value.text === 'string' ? value.text.trim() : '';
    if (value.role === 'user') {
      this.waiting.clear();
      if (text === '') return;
      const typed = typedText(text);
      sink.event(userEvent(this.scope, typed), line);
      sink.event(promptEvent(this.scope, typed), line);
      return;
    }
    if (value.role === 'tool') {
      // Without its output, a tool's entry tells nothing of how the call ended: its call stays unknown.
      if (typeof value.text !== 'string') return;
      const id = this.waiting.result();
      if (id !== undefined) sink.event(blockResult(this.scope, id, { content: text }), line);
      return;
    }
    if (value.role !== 'assistant') return sink.skipped(line, 'role', `unknown role ${JSON.stringify(value.role)}`);
    if (text !== '') sink.event(replyEvent(this.scope, text), line);
    for (const c of Array.isArray(value.toolCalls) ? value.toolCalls : []) {
      const name = isObject(c) ? str(c.toolName) ?? str(c.name) : undefined;
      if (name === undefined) sink.skipped(line, 'toolCalls[].toolName', 'a tool call without a tool name');
      else sink.event(toolEvent(this.scope, name, (c as Json).args, this.waiting.call()), line);
    }
  }

  finish(): void {}
}

/** `agent-transcripts/<uuid>.json`: the whole conversation, rewritten whole. */
export const cursorArrayTranscript: DocumentAdapter = {
  layout: 'document',
  agent: AGENT,
  sniff: (doc) => Array.isArray(doc) && doc.length > 0 && doc.every(isEntry) && doc.some((e) => (e as Json).role === 'assistant'),
  records: (doc) => ({ key: null, items: doc as unknown[] }),
  decoder: (session) => new ArrayDecoder(session),
};

/** A `[Tool call]` / `[Tool result]` line: the kind, and the tool named after it. */
const TOOL_LINE = /^\[Tool (call|result)\]\s*(\S.*)?$/;
/** An argument line under a tool call: `  name: value`. */
const ARG_LINE = /^\s+([A-Za-z_][\w-]{0,63}):\s?(.*)$/;

/**
 * `agent-transcripts/<uuid>.txt` (Dec 2025–Feb 2026): plain text, blocks opened by a line `user:`
 * or `assistant:` (the text below it), `[Tool call] <name>` (its arguments on the lines below) and
 * `[Tool result] <name>` (no output: the outcome is not known). Argument lines of the form
 * `  key: value` are read as the call's arguments; otherwise its lines are kept whole as `input`,
 * so that the same call reads the same either way.
 */
class TextDecoder implements Decoder {
  private readonly waiting = new Waiting();
  private readonly scope: RecordScope;
  private block: { kind: 'user' | 'assistant' | 'call'; line: number; name?: string; lines: string[] } | undefined;

  constructor(session: string) {
    this.scope = { session, agent: AGENT };
    // Results are written for every call (without output): calls wait for theirs.
    this.waiting.results = true;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    const text = typeof value === 'string' ? value.replace(/\r$/, '') : '';
    const trimmed = text.trim();
    if (trimmed === 'user:' || trimmed === 'assistant:') {
      this.flush(sink);
      this.block = { kind: trimmed === 'user:' ? 'user' : 'assistant', line, lines: [] };
      return;
    }
    const tool = TOOL_LINE.exec(trimmed);
    if (tool) {
      this.flush(sink);
      const name = tool[2]?.trim();
      if (tool[1] === 'call') {
        if (name === undefined) return sink.skipped(line, '[Tool call]', 'a tool call without a tool name');
        this.block = { kind: 'call', line, name, lines: [] };
      } else {
        const id = this.waiting.result();
        if (id !== undefined) sink.event(resultEvent(this.scope, id, undefined), line);
      }
      return;
    }
    this.block?.lines.push(text);
  }

  private flush(sink: AdapterSink): void {
    const b = this.block;
    this.block = undefined;
    if (b === undefined) return;
    if (b.kind === 'call') {
      const lines = b.lines.filter((l) => l.trim() !== '');
      const pairs = lines.map((l) => ARG_LINE.exec(l));
      const args: Json = {};
      if (lines.length > 0 && pairs.every((m) => m !== null)) for (const m of pairs) args[(m as RegExpExecArray)[1] as string] = (m as RegExpExecArray)[2];
      else if (lines.length > 0) args.input = lines.map((l) => l.trim()).join('\n');
      sink.event(toolEvent(this.scope, b.name as string, args, this.waiting.call()), b.line);
      return;
    }
    const text = b.lines.join('\n').trim();
    if (b.kind === 'user') {
      this.waiting.clear();
      const typed = typedText(text);
      sink.event(userEvent(this.scope, typed), b.line);
      if (typed !== '') sink.event(promptEvent(this.scope, typed), b.line);
    } else if (text !== '') sink.event(replyEvent(this.scope, text), b.line);
  }

  finish(sink: AdapterSink): void {
    this.flush(sink);
  }
}

/** `agent-transcripts/<uuid>.txt`, read by `replay` (its first line is `user:`). */
export const cursorTextTranscript: JsonlAdapter = {
  layout: 'jsonl',
  agent: AGENT,
  sniff: () => false,
  sniffText: (first) => first.trim() === 'user:',
  decoder: (session) => new TextDecoder(session),
};
