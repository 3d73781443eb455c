import type { GuardianEvent } from '../../core/events';
import { boundedText } from '../../core/redact';
import { copilotEventLog, isCopilotSessionStart } from '../copilotEvents';
import { isObject, isoTime, parseArgsText, RecentSet, statusInText, str, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';
import { apiErrorEvent, withBase } from '../eventBuilders';

/** The `agent` the events of Copilot in VS Code carry, whichever of its files they come from. */
export const AGENT = 'copilot-vscode';

/*
 * GitHub Copilot in VS Code, its chat sessions as documents: what *Chat: Export Chat…* writes and
 * what VS Code persisted before 1.109 (`workspaceStorage/<id>/chatSessions/<sessionId>.json`),
 * one `{requests: [...]}` object (ISerializableChatData; microsoft/vscode
 * `src/vs/workbench/contrib/chat/common/model/chatModel.ts`, `chatSessionStore.ts`). Checked on
 * the real exports in ../shared/fixtures/real/copilot-vscode (SOURCES.md).
 * - `requests[i].message.text`: what the person asked → `user`.
 * - The calls, with their arguments, are Copilot Chat's `result.metadata.toolCallRounds[]`
 *   `{toolCalls: [{name, arguments: <JSON string>, id}]}`, and their results
 *   `result.metadata.toolCallResults[id]`: a prompt-tsx tree whose text nodes (`{type: 2, text}`)
 *   are what the model read (microsoft/vscode-copilot-chat `src/extension/prompt/common/intents.ts`).
 *   Names are the model-facing ones (`read_file`, `run_in_terminal`).
 * - The response parts (`toolInvocationSerialized`) carry no arguments and, in these exports, no
 *   id shared with the rounds: they are not read. So a failure is not known from these documents
 *   (a call with a result is taken as done, one without has no outcome). The operation log VS Code
 *   persists from 1.109 on (`chatSessions/*.jsonl`) is read by chatSessionLog.ts.
 *
 * Turns, answers, failed requests and subtasks (issue 14):
 * - each request's `message.text` is also its `prompt` (who sent it is not recorded);
 * - the answer is the text of the request's tool-call rounds (`toolCallRounds[].response`), else
 *   its markdown response parts (`response[].value`);
 * - `result.errorDetails {code, message}` is a failed request ("Sorry, your request failed…
 *   Reason: … [401] …" in the real export dealenx-chat-with-error.json; the status read from the
 *   message), except `code: "canceled"`, the person stopping it (dealenx-canceled-chat.json);
 * - a `runSubagent` call (`{prompt, description}`; microsoft/vscode-copilot-chat
 *   `src/extension/tools/common/toolNames.ts`), and the `runSubagent2` a real export shows, is a
 *   delegation; its rendered result is what came back.
 */

/** The subagent tools: `runSubagent`, and numbered variants seen in a real export (digitarald-tdd-review.json). */
const SUBAGENT_TOOL = /^runSubagent\d*$/;

/** The text a prompt-tsx result tree renders: its text nodes, in order. */
export function renderedText(tree: unknown): string {
  const parts: string[] = [];
  const stack: unknown[] = [tree];
  let budget = 100_000;
  while (stack.length > 0 && budget-- > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
    } else if (isObject(node)) {
      if (node.type === 2 && typeof node.text === 'string') parts.push(node.text);
      // Children after the node's own text; keys in their order.
      const values = Object.values(node);
      for (let i = values.length - 1; i >= 0; i--) if (typeof values[i] === 'object') stack.push(values[i]);
    } else if (typeof node === 'string' && parts.length === 0 && stack.length === 0) {
      parts.push(node);
    }
  }
  return parts.join('');
}

class CopilotChatDecoder implements Decoder {
  private readonly seen = new RecentSet();

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(request)', 'not an object');
    const ts = isoTime(value.timestamp);
    const base = { v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const message = isObject(value.message) && typeof value.message.text === 'string' ? value.message.text : undefined;
    if (message !== undefined) {
      sink.event(withBase(base, { type: 'user', ...(message !== '' ? { text: message.slice(0, 500) } : {}) }), line);
      sink.event(withBase(base, { type: 'prompt', text: boundedText(message) }), line);
    }
    const result = isObject(value.result) ? value.result : undefined;
    const meta = result !== undefined && isObject(result.metadata) ? result.metadata : undefined;
    this.calls(meta, base, line, sink);
    const rounds = meta !== undefined && Array.isArray(meta.toolCallRounds) ? meta.toolCallRounds : [];
    const said = rounds.map((r) => (isObject(r) && typeof r.response === 'string' ? r.response : ''));
    if (said.every((t) => t.trim() === '') && Array.isArray(value.response)) {
      for (const part of value.response) if (isObject(part) && part.kind === undefined && typeof part.value === 'string') said.push(part.value);
    }
    const reply = said.filter((t) => t.trim() !== '').join('\n');
    if (reply !== '') sink.event(withBase(base, { type: 'reply', text: boundedText(reply) }), line);
    const details = result !== undefined && isObject(result.errorDetails) ? result.errorDetails : undefined;
    const error = details !== undefined ? str(details.message) : undefined;
    if (details !== undefined && details.code !== 'canceled' && error !== undefined) {
      const status = statusInText(error);
      const code = str(details.code);
      sink.event(apiErrorEvent(base, { error, status, class: code }), line);
    }
  }

  private calls(meta: Json | undefined, base: { v: 1; session: string; agent: string; ts?: string }, line: number, sink: AdapterSink): void {
    if (meta === undefined) return;
    const results = isObject(meta.toolCallResults) ? meta.toolCallResults : {};
    for (const round of Array.isArray(meta.toolCallRounds) ? meta.toolCallRounds : []) {
      const roundTs = isObject(round) ? isoTime(round.timestamp) : undefined;
      for (const call of isObject(round) && Array.isArray(round.toolCalls) ? round.toolCalls : []) {
        const name = isObject(call) ? str(call.name) : undefined;
        const id = isObject(call) ? str(call.id) : undefined;
        if (!isObject(call) || name === undefined) {
          sink.skipped(line, 'result.metadata.toolCallRounds[].toolCalls[]', 'a call without a name');
          continue;
        }
        if (id !== undefined && !this.seen.add(id)) continue;
        const result = id !== undefined ? results[id] : undefined;
        const args = parseArgsText(call.arguments);
        const at = withBase(base, { ...(roundTs !== undefined ? { ts: roundTs } : {}) });
        const output = result !== undefined ? renderedText(result) : undefined;
        const event: GuardianEvent = {
          ...at,
          type: 'tool',
          tool: name,
          args,
          ...(id !== undefined ? { id } : {}),
          ...(output !== undefined ? { ok: true, output } : {}),
        };
        sink.event(event, line);
        const instruction = str(args.prompt);
        if (SUBAGENT_TOOL.test(name) && instruction !== undefined) {
          sink.event(withBase(at, { type: 'delegation', instruction: boundedText(instruction), ...(id !== undefined ? { id } : {}) }), line);
          if (output !== undefined && id !== undefined) sink.event(withBase(at, { type: 'delegation_result', id, ok: true, output: boundedText(output) }), line);
        }
      }
    }
  }

  finish(): void {}
}

/** A chat export or a persisted (pre-1.109) session: `requests` whose items have a `requestId` or a `message`. */
export const copilotChatTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) =>
    isObject(doc) &&
    Array.isArray(doc.requests) &&
    (typeof doc.responderUsername === 'string' || typeof doc.sessionId === 'string' || typeof doc.initialLocation === 'string') &&
    doc.requests.every((r) => isObject(r) && (typeof r.requestId === 'string' || isObject(r.message))),
  records: (doc) => ({ key: 'requests', items: isObject(doc) && Array.isArray(doc.requests) ? doc.requests : [] }),
  decoder: (fallbackSession, doc) => new CopilotChatDecoder((isObject(doc) && str(doc.sessionId)) || fallbackSession),
};

/*
 * The chat debug view's *Export prompt log* (`*.chatreplay.json`, seen in
 * digitarald/vscode-chat-logs `samples/remove-tests.chatreplay.json`): `{exportedAt, prompts:
 * [{prompt, logs: [...]}]}` where a log `{kind: "toolCall", id, tool, args: <JSON string>, time,
 * response: [text…]}` is one call and its result. Other log kinds (`request`, `element`) are the
 * model's requests and the prompt's parts: not calls. Consecutive entries with the same prompt
 * are the iterations of one request (its tool-calling rounds), so the prompt is one prompt event.
 * A `request` log's `response {type:
 * "success", message: [text…]}` is the model's answer; a request whose response is of another
 * type failed (no failed one in the sample: its fields are read tolerantly, `reason` or the
 * message as the error, the log's `type` as the class).
 */
class PromptLogDecoder implements Decoder {
  /** The prompt of the entry before: consecutive entries with the same prompt are one request's iterations. */
  private previous: string | undefined;

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(prompt)', 'not an object');
    const base = { v: 1 as const, session: this.session, agent: AGENT };
    if (typeof value.prompt === 'string') {
      sink.event(withBase(base, { type: 'user', ...(value.prompt !== '' ? { text: value.prompt.slice(0, 500) } : {}) }), line);
      // The log lists each model request of a turn under the prompt that started it (the real sample
      // has one prompt three times: a search, the narration, the patch): one prompt, sent once.
      if (value.prompt !== this.previous) sink.event(withBase(base, { type: 'prompt', text: boundedText(value.prompt) }), line);
      this.previous = value.prompt;
    }
    for (const log of Array.isArray(value.logs) ? (value.logs as unknown[]) : []) {
      if (isObject(log) && log.kind === 'request') {
        this.request(log, base, line, sink);
        continue;
      }
      if (!isObject(log) || log.kind !== 'toolCall') continue;
      const tool = str(log.tool);
      if (tool === undefined) {
        sink.skipped(line, 'logs[].tool', 'a tool call without a tool');
        continue;
      }
      const ts = isoTime(log.time);
      const output = Array.isArray(log.response) ? log.response.filter((r): r is string => typeof r === 'string').join('\n') : undefined;
      const id = str(log.id);
      sink.event(withBase(base, { ...(ts !== undefined ? { ts } : {}), type: 'tool', tool, args: parseArgsText(log.args) as Json, ...(id !== undefined ? { id } : {}), ...(output !== undefined ? { ok: true, output } : {}) }), line);
    }
  }

  private request(log: Json, base: { v: 1; session: string; agent: string }, line: number, sink: AdapterSink): void {
    const response = isObject(log.response) ? log.response : undefined;
    if (response === undefined) return;
    const text = Array.isArray(response.message) ? response.message.filter((m): m is string => typeof m === 'string').join('\n') : typeof response.message === 'string' ? response.message : '';
    if (response.type === 'success') {
      if (text.trim() !== '') sink.event(withBase(base, { type: 'reply', text: boundedText(text) }), line);
      return;
    }
    const error = str(response.reason) ?? (text.trim() !== '' ? text : str(response.type));
    const status = error !== undefined ? statusInText(error) : undefined;
    const cls = str(log.type);
    sink.event(apiErrorEvent(base, { error, status, class: cls }), line);
  }

  finish(): void {}
}

export const copilotPromptLog: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => isObject(doc) && Array.isArray(doc.prompts) && typeof doc.exportedAt === 'string',
  records: (doc) => ({ key: 'prompts', items: isObject(doc) && Array.isArray(doc.prompts) ? doc.prompts : [] }),
  decoder: (fallbackSession) => new PromptLogDecoder(fallbackSession),
};

/**
 * Copilot Chat's hook transcripts (`<workspaceStorage>/<id>/GitHub.copilot-chat/transcripts/*.jsonl`):
 * a Copilot event log whose `session.start` names the `vscodeVersion`. Written only while hooks are
 * on, appended before each hook runs (microsoft/vscode-copilot-chat `sessionTranscriptService.ts`,
 * `toolCallingLoop.ts`); calls carry `success` only. `success: false` is a failure (its message
 * unknown); `success: true` is no success: Copilot Chat 0.67.0 (VS Code 1.139.1) wrote it for a
 * command that exited 1 and for a call its PreToolUse hook denied (seen live, 2026-11-27:
 * `{"type":"tool.execution_complete","data":{"toolCallId":"call_7","success":true}}` for a call the
 * guardian refused), so such a call has no outcome here. Its call ids are the model's (`call_4`),
 * where the hooks are given `call_4__vscode-<n>`.
 */
export const copilotHookTranscript = copilotEventLog(AGENT, (first) => isCopilotSessionStart(first) && isObject(first.data) && 'vscodeVersion' in first.data, { successIsUnknown: true });
