import * as path from 'node:path';
import type { GuardianEvent, PromptSender } from '../core/events';
import { parseJson } from '../core/json';
import { boundedText } from '../core/redact';
import type { DiscoveryScope, FoundTranscript, TranscriptLocator } from './agent';
import { delegationOf } from './anthropicBlocks';
import { apiErrorEvent, resultEvent, withBase } from './eventBuilders';
import { apiErrorFromText, argsObject, contentText, isObject, isoTime, jsonText, parseArgsText, RecentSet, str, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from './transcript';

/*
 * What Cline and its forks, Roo Code and Kilo Code, share: a task is a folder
 * `<store>/tasks/<task id>/` holding `api_conversation_history.json` (the messages sent to the
 * model: Anthropic-style, each with its `ts`) and `ui_messages.json` (what the extension showed),
 * both rewritten whole on every change (Cline `apps/vscode/src/core/storage/disk.ts` @v3.89.2,
 * `atomicWriteFile`; Roo `src/core/task-persistence/apiMessages.ts` @cb836567, `safeWriteJson`;
 * Kilo-Org/kilocode-legacy the same @56b73d3b). The store is the extension's global storage folder
 * (or, for Roo and Kilo, the `customStoragePath` setting).
 *
 * Tool calls take one of two shapes in the history, by model and version:
 * - native: `tool_use` blocks with ids; Roo (and Kilo's native protocol) answer with `tool_result`
 *   blocks (`is_error`, or Roo's `{"status":"error",…}` text: Roo `src/core/prompts/responses.ts`),
 *   Cline with user text blocks `[<tool> for '<what>'] Result:` (seen in real Cline 3.x files);
 * - XML tags in the assistant's text, `<execute_command>\n<command>npm test</command>\n</execute_command>`,
 *   answered by `[execute_command for 'npm test'] Result:` text (Cline before native tool calling,
 *   Roo until early 2026, Kilo's XML protocol; the real Roo files in ../shared/fixtures/real/roo).
 *   The result's head may be a text block of its own, its output in the blocks after it.
 */

/** A tool's result sent back as user text: `[<tool> for '<what>'] Result:` (or `[<tool>] Result:`). */
// The head's `<what>` may hold brackets (a command's `[A-Z]+`): up to the first `] Result:` of the line.
const RESULT_HEAD = /^\[([^\n]{1,2000}?)\] Result:[ \t]*\n?/;
/**
 * What a text result says of its outcome: `Command failed with exit code N` / `Exit code: N` at the
 * start of a line (N not 0; Cline's and Roo's `execute_command` results), or a tool error: Cline's
 * `The tool execution failed with the following error:` / `<error>...</error>`, Roo's JSON
 * `{"status": "error", ...}` (`formatResponse.toolError`). Anything else is taken as done; nothing
 * more is guessed from the text.
 */
const FAILED_EXIT = /^(?:Command failed with exit code|Exit code:?)\s*(-?\d+)/m;
const TOOL_ERROR = /^\s*(?:The tool execution failed with the following error:|<error>|\{\s*"status"\s*:\s*"error")/;

export function textResultOutcome(text: string): { ok: true; output: string } | { ok: false; error: string } {
  const exit = FAILED_EXIT.exec(text);
  if ((exit && Number(exit[1]) !== 0) || TOOL_ERROR.test(text)) return { ok: false, error: text.trim() || 'failed' };
  return { ok: true, output: text };
}

/**
 * Cline 3.x CLI's results: a `tool_result` whose content is a list of `{query, result, error,
 * success}` objects, one per command or file the call named (as Cline CLI 3.0.65 writes
 * `~/.cline/data/sessions/<id>/<id>.messages.json`, seen in this project's live runs of it:
 * `run_commands` answering `{"query": "npm run build-missing", "result": "[Command exited with
 * code 1]\n\n[stderr]\n…", "error": "Command exited with code 1", "success": false}`). The call
 * failed when one of them did; its text is their `result`s.
 */
function itemsOutcome(content: unknown): { ok: true; output: string } | { ok: false; error: string } | undefined {
  if (!Array.isArray(content) || content.length === 0 || !content.every((c) => isObject(c) && typeof c.success === 'boolean')) return undefined;
  const items = content as Json[];
  const text = items.map((c) => (typeof c.result === 'string' ? c.result : typeof c.error === 'string' ? c.error : '')).join('\n');
  if (items.some((c) => c.success === false)) return { ok: false, error: text.trim() || items.map((c) => (typeof c.error === 'string' ? c.error : '')).join('\n').trim() || 'failed' };
  return { ok: true, output: text };
}

/** A `tool_result` block's outcome: `is_error`, Cline 3.x's result items, else what its text says. */
function blockOutcome(block: Json): { ok: true; output: string } | { ok: false; error: string } {
  const items = itemsOutcome(block.content);
  // `"true"`: an export that turned every value into a string (see `uiTime`).
  const failed = block.is_error === true || block.is_error === 'true';
  if (items !== undefined) return failed && items.ok ? { ok: false, error: items.output.trim() || 'error' } : items;
  const text = contentText(block.content);
  if (failed) return { ok: false, error: text.trim() || 'error' };
  return textResultOutcome(text);
}

/**
 * The tools the family's models name in XML tags: Cline's `ClineDefaultTool` (`apps/vscode/src/shared/tools.ts`
 * @v3.89.2), Roo's `toolNames` (`packages/types/src/tool.ts` @cb836567, and the 2025 ones it has
 * since dropped), Kilo's (`packages/types/src/tool.ts` @56b73d3b). Only these are read as calls, so
 * that other tags in the text (`<thinking>`) are not.
 */
const XML_TOOLS = new Set([
  'execute_command', 'read_file', 'write_to_file', 'replace_in_file', 'apply_diff', 'insert_content', 'search_and_replace', 'search_replace', 'edit', 'edit_file',
  'fast_edit_file', 'apply_patch', 'delete_file', 'search_files', 'list_files', 'list_code_definition_names', 'codebase_search', 'browser_action', 'use_mcp_tool',
  'access_mcp_resource', 'load_mcp_documentation', 'ask_followup_question', 'attempt_completion', 'plan_mode_respond', 'act_mode_respond', 'switch_mode', 'new_task',
  'fetch_instructions', 'update_todo_list', 'focus_chain', 'run_slash_command', 'skill', 'use_skill', 'generate_image', 'web_fetch', 'web_search', 'condense',
  'summarize_task', 'report_bug', 'new_rule', 'read_command_output', 'use_subagents', 'generate_explanation',
]);
/** A tool's opening tag where a line starts (Cline's parser takes one anywhere; prose rarely starts a line with one). */
const XML_OPEN = /^[ \t]*<([a-z_]+)>/gm;
const XML_NAME = /<([A-Za-z_][\w-]*)>/y;

/** A call's parameters, `<name>value</name>` one after another; a parameter left open ends them. */
function xmlParams(body: string): Json {
  const args: Json = {};
  let pos = body.indexOf('<');
  while (pos >= 0) {
    XML_NAME.lastIndex = pos;
    const m = XML_NAME.exec(body);
    if (m === null) {
      pos = body.indexOf('<', pos + 1);
      continue;
    }
    const name = m[1] as string;
    const close = body.indexOf(`</${name}>`, XML_NAME.lastIndex);
    if (close < 0) break;
    args[name] = body.slice(XML_NAME.lastIndex, close).trim();
    pos = body.indexOf('<', close + name.length + 3);
  }
  return args;
}

/** The complete XML tool calls in an assistant's text, in order (an unclosed one was cut off: not read). */
export function xmlToolCalls(text: string): { tool: string; args: Json }[] {
  const calls: { tool: string; args: Json }[] = [];
  // Tools with no closing tag after some point have none after any later point either: never searched again.
  const unclosed = new Set<string>();
  XML_OPEN.lastIndex = 0;
  for (let m = XML_OPEN.exec(text); m !== null; m = XML_OPEN.exec(text)) {
    const tool = m[1] as string;
    if (!XML_TOOLS.has(tool) || unclosed.has(tool)) continue;
    const close = text.indexOf(`</${tool}>`, XML_OPEN.lastIndex);
    if (close < 0) {
      unclosed.add(tool);
      continue;
    }
    const args = xmlParams(text.slice(XML_OPEN.lastIndex, close));
    // An MCP call's arguments are JSON text: compared as what they say.
    if (tool === 'use_mcp_tool' && typeof args.arguments === 'string') args.arguments = parseArgsText(args.arguments);
    calls.push({ tool, args });
    XML_OPEN.lastIndex = close + tool.length + 3;
  }
  return calls;
}

/**
 * The text results in a user message's text blocks: each block that starts with a result head starts
 * one, whose output is the rest of that block and the blocks after it, up to the next head or the
 * environment details.
 */
function textResults(texts: readonly string[]): string[] {
  const results: string[][] = [];
  let open = false;
  for (const text of texts) {
    const head = RESULT_HEAD.exec(text);
    if (head) {
      results.push([text.slice(head[0].length)]);
      open = true;
    } else if (text.startsWith('<environment_details>')) {
      open = false;
    } else if (open) {
      results[results.length - 1]?.push(text);
    }
  }
  return results.map((parts) => {
    const body = parts.join('\n');
    const env = body.indexOf('<environment_details>');
    return (env >= 0 ? body.slice(0, env) : body).replace(/^\n/, '').trimEnd();
  });
}

/** What the agent says to itself as the user, not a person's turn: Cline's and Roo's `noToolsUsed` reminder. */
const NAG = /^\[ERROR\] You did not use a tool/;

/**
 * A task's message history: `api_conversation_history.json` (a bare array of messages) or the
 * Cline SDK's `{version, sessionId, messages}` (`sdk/packages/core/docs/messages-contract-v1.md`).
 * Native tool uses pair with `tool_result` blocks by id, or with text results in order; XML calls
 * get an id of their own (`<session>:<ts or message id>:<n>`) and pair with the text results in order, the
 * results of a user message answering the calls of the assistant message before it. A user
 * message that carries results is the tools speaking, not a turn; any other is a person's turn.
 */
class TaskMessagesDecoder implements Decoder {
  private readonly seen = new RecentSet();
  private index = 0;
  /** Calls (ids) waiting for a text result, oldest first. */
  private waiting: string[] = [];

  constructor(private readonly agent: string, private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `messages[${i}]`, 'not an object');
    const role = value.role;
    if (role !== 'user' && role !== 'assistant') return sink.skipped(line, `messages[${i}].role`, role === undefined ? 'missing' : `unknown role ${jsonText(role)}`);
    const ts = isoTime(value.ts);
    const base = { v: 1 as const, session: this.session, agent: this.agent, ...(ts !== undefined ? { ts } : {}) };
    const content = value.content;
    const blocks: unknown[] = Array.isArray(content) ? content : typeof content === 'string' ? [{ type: 'text', text: content }] : [];
    const texts: string[] = [];
    let native = 0;
    // Results answer the calls of the assistant message just before: a call left unanswered then
    // (the task was interrupted, then resumed) keeps an unknown outcome.
    if (role === 'assistant') this.waiting = [];
    blocks.forEach((block, b) => {
      if (!isObject(block)) return;
      const field = `messages[${i}].content[${b}]`;
      if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
      else if (block.type === 'tool_use') {
        native++;
        const tool = str(block.name);
        if (tool === undefined) return sink.skipped(line, `${field}.name`, 'a tool_use block without a tool name');
        const id = str(block.id);
        if (id !== undefined && !this.seen.add(`use:${id}`)) return;
        if (id !== undefined) this.waiting.push(id);
        sink.event(withBase(base, { type: 'tool', tool, args: argsObject(block.input), ...(id !== undefined ? { id } : {}) }), line);
        // A native `new_task` (Roo `{mode, message, todos}`, Cline `{context}`: sources at `delegationOf`
        // in anthropicBlocks.ts) hands a subtask out (issue 14); its tool_result is what came back.
        const delegation = delegationOf(tool, block.input);
        if (delegation !== undefined) {
          if (id !== undefined) this.seen.add(`delegation:${id}`);
          sink.event(withBase(base, { type: 'delegation', ...delegation, ...(id !== undefined ? { id } : {}) }), line);
        }
      } else if (block.type === 'tool_result') {
        native++;
        const id = str(block.tool_use_id);
        if (id === undefined) return sink.skipped(line, `${field}.tool_use_id`, 'a tool_result block without the id of its call');
        this.waiting = this.waiting.filter((w) => w !== id);
        if (!this.seen.add(`result:${id}`)) return;
        const outcome = blockOutcome(block);
        sink.event(resultEvent(base, id, outcome), line);
        if (this.seen.has(`delegation:${id}`)) {
          const back = outcome.ok ? { ok: true, output: boundedText(outcome.output) } : { ok: false, error: boundedText(outcome.error) };
          sink.event(withBase(base, { type: 'delegation_result', id, ...back }), line);
        }
      }
    });
    if (role === 'assistant') {
      // The answer in text (issue 14): compared between turns by the prompt signal. Roo's
      // context-condensing summary (`isSummary`, written as an assistant message with the summary's
      // text and the tool_use blocks it keeps: Roo `src/core/condense/index.ts` @04fc2a02,
      // `summarizeConversation`) is no answer to the person.
      const said = texts.join('\n');
      if (said.trim() !== '' && value.isSummary !== true) sink.event(withBase(base, { type: 'reply', text: boundedText(said) }), line);
      // Tags in the text of a message with native calls are prose, not calls.
      if (native > 0) return;
      // The message's time (Roo, Kilo), else its response id (Cline's `ClineStorageMessage.id`), else its place.
      const at = uiTime(value.ts);
      const key = at !== undefined ? String(at) : (str(value.id) ?? String(i));
      texts.flatMap(xmlToolCalls).forEach((call, n) => {
        const id = `${this.session}:${key}:${n}`;
        this.waiting.push(id);
        sink.event(withBase(base, { type: 'tool', tool: call.tool, args: call.args, id }), line);
      });
      return;
    }
    if (native > 0) return;
    const results = textResults(texts);
    for (const body of results) {
      // A result no call waits for answers a call this reader could not see: not read.
      const id = this.waiting.shift();
      if (id === undefined) continue;
      const outcome = textResultOutcome(body);
      sink.event(resultEvent(base, id, outcome), line);
    }
    if (results.length > 0 || (texts.length > 0 && NAG.test(texts[0] as string))) return;
    const text = texts.join('\n');
    sink.event(withBase(base, { type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) }), line);
    sink.event(withBase(base, { type: 'prompt', text: boundedText(promptText(texts)) }), line);
  }

  finish(): void {}
}

/**
 * What the person asked in a user message, without the `<environment_details>` block Cline and
 * Roo append to every turn (the time, the open files: it changes between two sendings of the same
 * message).
 */
function promptText(texts: readonly string[]): string {
  return texts
    .map((t) => {
      const env = t.indexOf('<environment_details>');
      return env >= 0 ? t.slice(0, env) : t;
    })
    .filter((t) => t.trim() !== '')
    .join('\n');
}

/** ui_messages kinds that are neither a call, a result, a turn, an answer, a failed request nor a subtask (Cline's ClineSay / ClineAsk; Roo's and Kilo's are alike). */
const UI_IGNORED = new Set([
  'reasoning', 'api_req_finished', 'api_req_retried', 'api_req_deleted', 'checkpoint_created', 'checkpoint_saved', 'task_progress',
  'resume_task', 'resume_completed_task', 'command_output', 'mcp_server_response',
  'mcp_server_request_started', 'shell_integration_warning', 'deleted_api_reqs', 'condense', 'condense_context', 'condense_context_error', 'info', 'error',
  'diff_error', 'clineignore_error', 'rooignore_error', 'load_mcp_documentation', 'user_feedback_diff', 'mistake_limit_reached', 'auto_approval_max_req_reached',
  'browser_action_launch', 'browser_action', 'browser_action_result', 'new_task', 'hook', 'hook_output', 'hook_status', 'generate_explanation',
  'use_subagents', 'codebase_search_result', 'todo_list', 'user_edit_todos', 'too_many_tools_warning', 'indexing_status',
]);
/** Keys of a `tool` message's JSON that describe how it was shown, not the call. */
const UI_NOT_ARGS = new Set(['tool', 'operationIsLocatedInWorkspace', 'startLineNumbers', 'isOutsideWorkspace', 'isProtected', 'fastApplyResult']);

interface UiOptions {
  /**
   * The task's first message is `say: "text"` holding the task (Roo and Kilo: `Task.startTask`,
   * `this.say("text", task, images)`, Roo `src/core/task/Task.ts` @cb836567), where Cline says
   * `task`.
   */
  readonly firstTextIsTask?: boolean;
}

/**
 * A task's `ui_messages.json` (shape from CoreGems/Cline-Xray `task_sample/ui_messages.json`,
 * Cline's ClineSay / ClineAsk kinds, and the real Roo files):
 * - `say: "task"` (Roo, Kilo: the first `say: "text"`) and `say: "user_feedback"` are the person's turns;
 * - a `tool` message (say or ask) holds the call as JSON text, `{tool, path, ...}`; a `command`
 *   message's text is a command (`execute_command`); `use_mcp_server`'s text is
 *   `{serverName, toolName, arguments}`;
 * - the results are not in these messages but in the next request sent, the `api_req_started`
 *   message's `{request}` text, as `[<tool> for '...'] Result:` blocks: they answer the waiting
 *   calls in order. A call whose request never came (the task ended) keeps an unknown outcome.
 * A call's id is `<session>:<ts>` (each message's `ts` is its identity in these extensions), so
 * that it stays the same when the file is rewritten with messages removed before it.
 * `partial` messages are streaming copies of a message saved whole after them: not read.
 * Unknown kinds are skipped and counted by kind.
 *
 * Turns, answers, failed requests and subtasks (issue 14), from the same messages:
 * - prompts: `task`, `user_feedback` (the person's), and Roo's and Kilo's task, the first `text`;
 *   replies: `text`, `completion_result`, a `followup` question, a `plan_mode_respond` response;
 * - failed model requests (cline/cline v3.89.2 `apps/vscode/src/core/task/index.ts`): `error_retry`
 *   `{attempt, maxAttempts, delaySeconds, errorMessage?}` is an automatic retry, and with
 *   `failed: true` the end of them (the `api_req_failed` ask that follows carries the error);
 *   `api_req_failed`'s text is the error, often Cline's serialised error `{message, status, code,
 *   modelId}` (`ClineError.serialize()`); `api_req_started`'s `retryStatus {attempt, errorSnippet}`
 *   a retry inside the provider's client (rewritten in place: its latest attempt only);
 *   `api_req_retried` is the person's retry and adds nothing. Roo's automatic retry is
 *   `api_req_retry_delayed`, `<status>\n<message>` (Roo's `backoffAndAnnounce`).
 * - subtasks: Roo's `newTask` tool message `{mode, content}` and the `subtask_result` that comes
 *   back (Roo's `ClineProvider.ts`); Cline's subagents, whose final `subagent` status message
 *   `{status, items: [{prompt, status, result?, error?}]}` holds each one and its outcome
 *   (cline/cline v3.89.2 `apps/vscode/src/core/task/tools/handlers/SubagentToolHandler.ts`).
 */
class UiMessagesDecoder implements Decoder {
  private index = 0;
  private waiting: string[] = [];

  constructor(private readonly agent: string, private readonly session: string, private readonly opts: UiOptions) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `[${i}]`, 'not an object');
    if (value.partial === true || value.partial === 'true') return;
    const kind = value.type === 'say' ? value.say : value.type === 'ask' ? value.ask : undefined;
    const field = `[${i}].${value.type === 'ask' ? 'ask' : 'say'}`;
    if (typeof kind !== 'string') return sink.skipped(line, field, `a ${jsonText(value.type)} message without its kind`);
    const at = uiTime(value.ts);
    const ts = isoTime(at);
    const base = { v: 1 as const, session: this.session, agent: this.agent, ...(ts !== undefined ? { ts } : {}) };
    const text = typeof value.text === 'string' ? value.text : '';
    // A message's id: its time (each message's `ts` is its identity in these extensions), else its place.
    const id = `${this.session}:${at ?? i}`;
    const call = (tool: string, args: Json) => {
      this.waiting.push(id);
      const event: GuardianEvent = withBase(base, { type: 'tool', tool, args, id });
      sink.event(event, line);
    };
    const turn = (from?: PromptSender) => {
      sink.event(withBase(base, { type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) }), line);
      sink.event(withBase(base, { type: 'prompt', text: boundedText(text), ...(from !== undefined ? { from } : {}) }), line);
    };
    const reply = (said: string) => {
      if (said.trim() !== '') sink.event(withBase(base, { type: 'reply', text: boundedText(said) }), line);
    };
    const failed = (fields: ReturnType<typeof apiErrorFromText>, retry?: number) => sink.event(apiErrorEvent(base, { ...fields, retry }), line);
    if (kind === 'task' || (kind === 'text' && i === 0 && value.type === 'say' && this.opts.firstTextIsTask === true)) return turn();
    switch (kind) {
      case 'user_feedback':
        return turn('user');
      case 'text':
      case 'completion_result':
        return reply(text);
      case 'followup':
        return reply(str(parseArgsText(text).question) ?? text);
      case 'plan_mode_respond':
        return reply(str(parseArgsText(text).response) ?? text);
      case 'api_req_failed':
        return failed(apiErrorFromText(text));
      case 'error_retry': {
        const info = parseArgsText(text);
        if (info.failed === true) return;
        const attempt = typeof info.attempt === 'number' && Number.isInteger(info.attempt) && info.attempt >= 0 ? info.attempt : 0;
        const message = str(info.errorMessage);
        return failed(message !== undefined ? apiErrorFromText(message) : 'arguments' in info ? apiErrorFromText(text) : {}, attempt);
      }
      case 'api_req_retry_delayed':
        return failed(apiErrorFromText(text), 0);
      case 'subtask_result':
        sink.event(withBase(base, { type: 'delegation_result', ok: true, output: boundedText(text) }), line);
        return;
      case 'subagent':
        return this.subagents(parseArgsText(text), i, base, line, sink);
      case 'tool': {
        const parsed = parseArgsText(text);
        const tool = str(parsed.tool);
        if (tool === undefined) return sink.skipped(line, `${field}.text`, 'a tool message without its tool');
        const args: Json = {};
        for (const [k, v] of Object.entries(parsed)) if (!UI_NOT_ARGS.has(k)) args[k] = v;
        call(tool, args);
        const instruction = str(parsed.content);
        if (tool === 'newTask' && instruction !== undefined) {
          const to = str(parsed.mode);
          sink.event(withBase(base, { type: 'delegation', instruction: boundedText(instruction), id, ...(to !== undefined ? { to } : {}) }), line);
        }
        return;
      }
      case 'command':
        if (text.trim() === '') return sink.skipped(line, `${field}.text`, 'a command message without its command');
        return call('execute_command', { command: text.trim() });
      case 'use_mcp_server': {
        const parsed = parseArgsText(text);
        const name = [str(parsed.serverName), str(parsed.toolName) ?? str(parsed.uri)].filter((s) => s !== undefined).join('.');
        return call(name === '' ? 'use_mcp_server' : name, argsObject(typeof parsed.arguments === 'string' ? parseArgsText(parsed.arguments) : parsed.arguments));
      }
      case 'api_req_started': {
        const info = parseArgsText(text);
        const retry = isObject(info.retryStatus) ? info.retryStatus : undefined;
        if (retry !== undefined) {
          const attempt = typeof retry.attempt === 'number' && Number.isInteger(retry.attempt) && retry.attempt >= 0 ? retry.attempt : 0;
          const snippet = str(retry.errorSnippet);
          failed(snippet !== undefined ? apiErrorFromText(snippet) : {}, attempt);
        }
        if (this.waiting.length === 0) return;
        const request = str(info.request);
        if (request === undefined) return;
        for (const body of textResults(request.split(/\n(?=\[[^\n]{1,2000}?\] Result:)|\n\n(?=<environment_details>)/))) {
          const id = this.waiting.shift();
          if (id === undefined) break;
          const outcome = textResultOutcome(body);
          sink.event(resultEvent(base, id, outcome), line);
        }
        return;
      }
      default:
        if (UI_IGNORED.has(kind)) return;
        sink.skipped(line, field, `unknown ${value.type === 'ask' ? 'ask' : 'say'} kind ${jsonText(kind)}`);
    }
  }

  /** Cline's subagents, from their final status message: each one a delegation that came back. */
  private subagents(status: Json, i: number, base: { v: 1; session: string; agent: string; ts?: string }, line: number, sink: AdapterSink): void {
    if (status.status !== 'completed' && status.status !== 'failed') return;
    const items = Array.isArray(status.items) ? status.items : [];
    items.forEach((item, n) => {
      if (!isObject(item)) return;
      const prompt = str(item.prompt);
      if (prompt === undefined) return;
      const id = `${this.session}:${i}:${n}`;
      sink.event(withBase(base, { type: 'delegation', instruction: boundedText(prompt), id }), line);
      if (item.status === 'completed') sink.event(withBase(base, { type: 'delegation_result', id, ok: true, ...(str(item.result) !== undefined ? { output: boundedText(item.result as string) } : {}) }), line);
      else if (item.status === 'failed') sink.event(withBase(base, { type: 'delegation_result', id, ok: false, error: boundedText(str(item.error) ?? 'failed') }), line);
    });
  }

  finish(): void {}
}

/** The messages of a message history: the SDK's `{messages}`, or a bare array of `{role, content}`. */
export function messagesOf(doc: unknown): unknown[] | undefined {
  // Messages with a role each (another agent's `messages` of other records is not theirs: opencode's `{info, parts}`).
  if (isObject(doc) && Array.isArray(doc.messages) && doc.messages.slice(0, 3).every((m) => isObject(m) && typeof m.role === 'string')) return doc.messages;
  if (Array.isArray(doc) && doc.length > 0 && doc.slice(0, 3).every((m) => isObject(m) && typeof m.role === 'string' && 'content' in m)) return doc;
  return undefined;
}

/**
 * A ui message's `ts` (epoch milliseconds): a number, or the same number written as text, as an
 * export that turned every value into a string has it (issue 34, a real Cline export: `"ts":
 * "1745312345678"`, `"partial": "false"`).
 */
function uiTime(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  return typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : undefined;
}

/** `ui_messages.json`: what the extension showed, `[{ts, type: "say" | "ask", say | ask, text, partial?}]`. */
export function isUiMessages(doc: unknown): doc is unknown[] {
  return Array.isArray(doc) && doc.length > 0 && doc.slice(0, 3).every((m) => isObject(m) && uiTime(m.ts) !== undefined && (m.type === 'say' || m.type === 'ask'));
}

/** One of the family's transcripts: a message history or a ui_messages file, told apart by shape. */
export function taskTranscript(agent: string, sniff: (doc: unknown) => boolean, ui: UiOptions = {}): DocumentAdapter {
  return {
    agent,
    layout: 'document',
    sniff,
    records: (doc) => (isUiMessages(doc) ? { key: null, items: doc } : { key: Array.isArray(doc) ? null : 'messages', items: messagesOf(doc) ?? [] }),
    decoder: (session, doc) => (isUiMessages(doc) ? new UiMessagesDecoder(agent, session, ui) : new TaskMessagesDecoder(agent, (isObject(doc) ? str(doc.sessionId) : undefined) ?? session)),
  };
}

/** The text of a message history's first user message (for sniffing), or of a ui file's first message. */
function firstText(doc: unknown): string {
  const first = (messagesOf(doc) ?? (isUiMessages(doc) ? doc : []))[0];
  if (!isObject(first)) return '';
  return typeof first.text === 'string' ? first.text : contentText(first.content);
}

/**
 * A file of Roo Code or Kilo Code rather than of Cline: the environment details of its first
 * request say `Current Workspace Directory` (Cline's say `Current Working Directory`), a message
 * carries Roo's context-condensing keys (`condenseId`, `condenseParent`, `truncationParent`,
 * `isSummary`: Roo `src/core/task-persistence/apiMessages.ts`), or the ui file starts with
 * `say: "text"` (Cline's with `say: "task"`). The two forks' files cannot be told apart.
 */
export function forkShape(doc: unknown): boolean {
  if (isUiMessages(doc)) return (doc[0] as { say?: unknown }).say === 'text';
  const messages = Array.isArray(doc) ? messagesOf(doc) : undefined;
  if (messages === undefined) return false;
  if (firstText(doc).includes('# Current Workspace Directory (')) return true;
  return messages.slice(0, 50).some((m) => isObject(m) && ('condenseId' in m || 'condenseParent' in m || 'truncationParent' in m || 'isSummary' in m));
}

/* ---------------------------------------------------------------- where the tasks live */

/** A history file: the task's messages, what discovery reads. */
const TASK_HISTORY_FILE = 'api_conversation_history.json';

/**
 * The folder the environment details of a task's first request name, from the start of its history
 * file (raw JSON text): Cline `# Current Working Directory (<cwd>) Files` (`core/task/index.ts`
 * @v3.89.2; a multi-root workspace says `(Primary: <name>)`, which names no folder), Roo and Kilo
 * `# Current Workspace Directory (<cwd>) Files` (`src/core/environment/getEnvironmentDetails.ts`).
 * Only inside a text that starts `<environment_details>`, so that a task quoting such a line is not
 * taken for it. The path is POSIX-style (`cwd.toPosix()`).
 */
const ENVIRONMENT_START = '"<environment_details>\\n';
const CWD_HEADS = ['# Current Working Directory (', '# Current Workspace Directory ('];

/** Where the JSON string starting at `start` (its opening quote) ends: its closing quote, or the end of the text. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

export function environmentFolder(head: string): string | undefined {
  for (let at = head.indexOf(ENVIRONMENT_START); at >= 0; at = head.indexOf(ENVIRONMENT_START, at + 1)) {
    // A quote escaped inside another string is not where a string starts.
    let slashes = 0;
    while (head[at - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 1) continue;
    const end = stringEnd(head, at);
    const details = head.slice(at + 1, end);
    for (const cwdHead of CWD_HEADS) {
      const from = details.indexOf(cwdHead);
      if (from < 0) continue;
      const to = details.indexOf(') Files', from + cwdHead.length);
      if (to < 0) continue;
      const parsed = parseJson(`"${details.slice(from + cwdHead.length, to)}"`);
      const folder = parsed.ok && typeof parsed.value === 'string' ? parsed.value : undefined;
      return folder === undefined || folder === '' || folder.startsWith('Primary: ') ? undefined : folder;
    }
    return undefined;
  }
  return undefined;
}

interface TaskStore {
  /** The folders holding `tasks/<id>/` under the home. */
  stores(home: string): readonly string[];
  /**
   * A file of the store listing the tasks with their folder: Cline's `state/taskHistory.json`, an
   * array of HistoryItem with `cwdOnTaskInitialization` (`apps/vscode/src/shared/HistoryItem.ts`).
   */
  readonly taskIndex?: string;
  /**
   * A file in each task folder naming its folder: Roo's `history_item.json`, a HistoryItem with
   * `workspace` (`src/core/task-persistence/TaskHistoryStore.ts`, since Roo 3.48, February 2026).
   */
  readonly taskItem?: string;
}

/** The largest task index read (thousands of tasks of a few hundred bytes each). */
const MAX_INDEX_BYTES = 32 << 20;
/** How many polls a task whose folder cannot be told yet is asked again (a task just started has no history yet). */
const RETRIES = 5;
/** How often a task found old (or already being read) is looked at again. */
const RECHECK_OLD_MS = 60_000;

function folderIn(item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  return str(item.cwdOnTaskInitialization) ?? str(item.workspace);
}

/**
 * Finds the tasks of a Cline-family store whose folder is this workspace (or inside it), read from
 * the store's task list, the task's own item, or, failing those (Kilo and Roo before 3.48 keep the
 * list in VS Code's state database), the environment details of the task's first request. What it
 * learns of each task is kept; a task is looked at only until its history is being read.
 */
export class TaskFolderLocator implements TranscriptLocator {
  private readonly folderOf = new Map<string, string | null>();
  private readonly tries = new Map<string, number>();
  /** Tasks found old or already being read, with when (the scope's `since`, which moves with the clock). */
  private readonly oldSince = new Map<string, number>();

  constructor(private readonly store: TaskStore) {}

  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const { fs } = scope;
    const out: FoundTranscript[] = [];
    for (const store of this.store.stores(scope.home)) {
      const tasks = path.join(store, 'tasks');
      let index: Map<string, string> | undefined;
      for (const d of await fs.list(tasks)) {
        if (!d.isDirectory()) continue;
        const dir = path.join(tasks, d.name);
        const file = path.join(dir, TASK_HISTORY_FILE);
        let folder = this.folderOf.get(dir);
        // Another workspace's task is never looked at again; an old one, once a minute (it may be resumed).
        if (folder === null || (folder !== undefined && !scope.contains(folder))) continue;
        const old = this.oldSince.get(dir);
        if (old !== undefined && scope.since - old < RECHECK_OLD_MS) continue;
        if (!(await fs.isNew(file))) {
          this.oldSince.set(dir, scope.since);
          continue;
        }
        this.oldSince.delete(dir);
        if (folder === undefined) {
          const item = this.store.taskItem !== undefined ? await fs.readText(path.join(dir, this.store.taskItem)) : undefined;
          const parsed = item !== undefined ? parseJson(item) : undefined;
          let found = parsed?.ok ? folderIn(parsed.value) : undefined;
          if (found === undefined && this.store.taskIndex !== undefined) {
            index ??= await this.readIndex(path.join(store, this.store.taskIndex), scope);
            found = index.get(d.name);
          }
          if (found === undefined) {
            const head = await fs.readText(file);
            found = head !== undefined ? environmentFolder(head) : undefined;
          }
          folder = found !== undefined ? path.resolve(found) : this.giveUp(dir);
          if (folder !== undefined) this.folderOf.set(dir, folder);
        }
        if (folder !== undefined && folder !== null && scope.contains(folder)) out.push({ file, session: d.name });
      }
    }
    if (this.folderOf.size > 50_000) this.folderOf.clear();
    if (this.oldSince.size > 50_000) this.oldSince.clear();
    return out;
  }

  /** A task whose folder is not known: asked again on the next polls, then taken as not this workspace's. */
  private giveUp(dir: string): null | undefined {
    const n = (this.tries.get(dir) ?? 0) + 1;
    this.tries.set(dir, n);
    if (n < RETRIES) return undefined;
    this.tries.delete(dir);
    return null;
  }

  private async readIndex(file: string, { fs }: DiscoveryScope): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const text = await fs.readText(file, MAX_INDEX_BYTES);
    const parsed = text !== undefined ? parseJson(text) : undefined;
    if (parsed?.ok && Array.isArray(parsed.value)) {
      for (const item of parsed.value) {
        const folder = folderIn(item);
        if (isObject(item) && typeof item.id === 'string' && folder !== undefined) out.set(item.id, folder);
      }
    }
    return out;
  }
}

/** The home's folders for these extension ids (`<globalStorage>/<id>`), and the home itself when it is a store (a custom storage path). */
export function extensionStores(ids: readonly string[]): (home: string) => string[] {
  return (home) => [home, ...ids.map((id) => path.join(home, id))];
}
