import type { GuardianEvent, PromptSender } from '../../core/events';
import { boundedText } from '../../core/redact';
import { apiErrorFromText, argsObject, isObject, isoTime, jsonText, parseArgsText, RecentSet, str, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';
import { promptEvent, replyEvent, replyText, toolBlocks, userEvent, userText, type RecordScope } from '../anthropicBlocks';

const AGENT = 'cline';

/**
 * A tool's result that Cline (and Roo Code) send back as user text instead of a tool_result
 * block: `[<tool> for '<what>'] Result:` and the output (Cline's native tool calling, and its
 * XML-tag tool calls; seen in mike4567/MRA04242026 `api_conversation_history.json`).
 */
const RESULT_HEAD = /^\[([^\]\n]{1,500})\] Result:[ \t]*\n?/;
/**
 * What a text result says of its outcome: `Command failed with exit code N` / `Exit code: N` (N not
 * 0), or the tool error Cline wraps as `The tool execution failed with the following error:` /
 * `<error>...</error>`. Anything else is taken as done; nothing more is guessed from the text.
 */
const FAILED_EXIT = /^(?:Command failed with exit code|Exit code:?)\s*(-?\d+)/m;
const TOOL_ERROR = /^\s*(?:The tool execution failed with the following error:|<error>)/;

export function textResultOutcome(text: string): { ok: true; output: string } | { ok: false; error: string } {
  const exit = FAILED_EXIT.exec(text);
  if ((exit && Number(exit[1]) !== 0) || TOOL_ERROR.test(text)) return { ok: false, error: text.trim() || 'failed' };
  return { ok: true, output: text };
}

/**
 * The results in a text: each line that is a `[...] Result:` head starts one, up to the next head
 * (or the environment details). Line by line, so that each head is tried once, where a line starts.
 */
function textResults(text: string): string[] {
  const results: string[][] = [];
  for (const line of text.split('\n')) {
    const head = RESULT_HEAD.exec(line);
    if (head) results.push([line.slice(head[0].length)]);
    else results[results.length - 1]?.push(line);
  }
  return results.map((lines) => {
    const body = lines.join('\n');
    const env = body.indexOf('<environment_details>');
    return (env >= 0 ? body.slice(0, env) : body).replace(/^\n/, '').trimEnd();
  });
}

/**
 * Cline (and Roo Code) message files: the new `{version, sessionId, messages}` format or a task's
 * `api_conversation_history.json` (a bare array of Anthropic-style messages). Tool uses pair with
 * tool results by id; `is_error` marks failures. With native tool calling the results come back
 * as user text blocks (`[read_file for 'a.ts'] Result: ...`), each answering the oldest tool use
 * still waiting: a user message with such a block is the tools speaking, not the person, and is no
 * turn. Any other user message is a turn.
 */
class ClineDecoder implements Decoder {
  private readonly seen = new RecentSet();
  private index = 0;
  /** Tool uses (ids) waiting for their results, oldest first. */
  private waiting: string[] = [];

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `messages[${i}]`, 'not an object');
    const role = value.role;
    if (role !== 'user' && role !== 'assistant') return sink.skipped(line, `messages[${i}].role`, role === undefined ? 'missing' : `unknown role ${jsonText(role)}`);
    const ts = isoTime(value.ts);
    const scope: RecordScope = { session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const content = value.content;
    const calls = toolBlocks(content, line, scope, this.seen, sink, `messages[${i}].content`);
    if (Array.isArray(content)) {
      for (const block of content) {
        if (!isObject(block)) continue;
        if (block.type === 'tool_use' && typeof block.id === 'string' && !this.waiting.includes(block.id)) this.waiting.push(block.id);
        if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') this.waiting = this.waiting.filter((id) => id !== block.tool_use_id);
      }
    }
    if (role === 'assistant') {
      const reply = replyText(content);
      if (reply.trim() !== '') sink.event(replyEvent(scope, reply), line);
      return;
    }
    if (calls > 0) return;
    const texts = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')) : [];
    let results = 0;
    for (const text of texts) {
      const head = RESULT_HEAD.exec(text);
      if (!head) continue;
      results++;
      // A result with no tool use waiting answers a call written as XML tags in the text: not read.
      const id = this.waiting.shift();
      if (id === undefined) continue;
      const outcome = textResultOutcome(text.slice(head[0].length));
      const base = { v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}), type: 'tool_result' as const, id };
      sink.event(outcome.ok ? { ...base, ok: true, output: outcome.output } : { ...base, ok: false, error: outcome.error }, line);
    }
    if (results === 0) {
      sink.event(userEvent(scope, userText(content)), line);
      sink.event(promptEvent(scope, promptText(content)), line);
    }
  }

  finish(): void {}
}

/**
 * What the person asked in a user message, without the `<environment_details>` block Cline and
 * Roo append to every turn (the time, the open files: it changes between two sendings of the same
 * message).
 */
function promptText(content: unknown): string {
  const blocks = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')) : [];
  return blocks
    .map((t) => {
      const env = t.indexOf('<environment_details>');
      return env >= 0 ? t.slice(0, env) : t;
    })
    .filter((t) => t.trim() !== '')
    .join('\n');
}

function messagesOf(doc: unknown): unknown[] | undefined {
  if (isObject(doc) && Array.isArray(doc.messages)) return doc.messages;
  if (Array.isArray(doc) && doc.length > 0 && doc.slice(0, 3).every((m) => isObject(m) && typeof m.role === 'string' && 'content' in m)) return doc;
  return undefined;
}

/** `ui_messages.json`: what the extension showed, `[{ts, type: "say" | "ask", say | ask, text, partial?}]`. */
function isUiMessages(doc: unknown): doc is unknown[] {
  return Array.isArray(doc) && doc.length > 0 && doc.slice(0, 3).every((m) => isObject(m) && typeof m.ts === 'number' && (m.type === 'say' || m.type === 'ask'));
}

/** ui_messages kinds that are neither a call, a result, a turn, an answer, a failed request nor a subtask (Cline's ClineSay / ClineAsk; Roo's are alike). */
const UI_IGNORED = new Set([
  'reasoning', 'api_req_finished', 'api_req_retried', 'api_req_deleted', 'checkpoint_created', 'checkpoint_saved', 'task_progress',
  'resume_task', 'resume_completed_task', 'command_output', 'mcp_server_response',
  'mcp_server_request_started', 'shell_integration_warning', 'deleted_api_reqs', 'condense', 'condense_context', 'condense_context_error', 'info', 'error',
  'diff_error', 'clineignore_error', 'rooignore_error', 'load_mcp_documentation', 'user_feedback_diff', 'mistake_limit_reached', 'auto_approval_max_req_reached',
  'browser_action_launch', 'browser_action', 'browser_action_result', 'new_task', 'hook', 'hook_output', 'generate_explanation',
  'use_subagents', 'codebase_search_result', 'todo_list', 'user_edit_todos', 'too_many_tools_warning', 'indexing_status',
]);
/** Keys of a `tool` message's JSON that describe how it was shown, not the call. */
const UI_NOT_ARGS = new Set(['tool', 'operationIsLocatedInWorkspace', 'startLineNumbers', 'isOutsideWorkspace', 'isProtected', 'fastApplyResult']);

/**
 * A task's `ui_messages.json` (Cline, `tasks/<id>/ui_messages.json`; shape from CoreGems/Cline-Xray
 * `task_sample/ui_messages.json` and Cline's ClineSay / ClineAsk kinds):
 * - `say: "task"` and `say: "user_feedback"` are the person's turns;
 * - a `tool` message (say or ask) holds the call as JSON text, `{tool, path, ...}`; a `command`
 *   message's text is a command (`execute_command`); `use_mcp_server`'s text is
 *   `{serverName, toolName, arguments}`;
 * - the results are not in these messages but in the next request Cline sent, the
 *   `api_req_started` message's `{request}` text, as `[<tool> for '...'] Result:` blocks: they
 *   answer the waiting calls in order, failures read as in the message files. A call whose
 *   request never came (the task ended) keeps an unknown outcome.
 * `partial` messages are streaming copies of a message saved whole after them: not read.
 * Unknown kinds are skipped and counted by kind.
 *
 * Turns, answers, failed requests and subtasks (issue 14), from the same messages:
 * - prompts: `task`, `user_feedback` (the person's), and Roo Code's task, which it says as the
 *   first `text` message (RooCodeInc/Roo-Code @cb836567 `src/core/task/Task.ts`
 *   `say("text", task, images)`); replies: `text`, `completion_result`, a `followup` question,
 *   a `plan_mode_respond` response;
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
class ClineUiDecoder implements Decoder {
  private index = 0;
  private waiting: string[] = [];
  /** Whether a request to the model was made yet: before it, Roo's first `text` is the task. */
  private requested = false;

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `[${i}]`, 'not an object');
    if (value.partial === true) return;
    const kind = value.type === 'say' ? value.say : value.type === 'ask' ? value.ask : undefined;
    const field = `[${i}].${value.type === 'ask' ? 'ask' : 'say'}`;
    if (typeof kind !== 'string') return sink.skipped(line, field, `a ${jsonText(value.type)} message without its kind`);
    const ts = isoTime(value.ts);
    const base = { v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const text = typeof value.text === 'string' ? value.text : '';
    const call = (tool: string, args: Json) => {
      const id = `${this.session}:${i}`;
      this.waiting.push(id);
      const event: GuardianEvent = { ...base, type: 'tool', tool, args, id };
      sink.event(event, line);
    };
    const turn = (from?: PromptSender) => {
      sink.event({ ...base, type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) }, line);
      sink.event({ ...base, type: 'prompt', text: boundedText(text), ...(from !== undefined ? { from } : {}) }, line);
    };
    const reply = (said: string) => {
      if (said.trim() !== '') sink.event({ ...base, type: 'reply', text: boundedText(said) }, line);
    };
    const failed = (fields: ReturnType<typeof apiErrorFromText>, retry?: number) => {
      const event: GuardianEvent = {
        ...base,
        type: 'api_error',
        ...(fields.error !== undefined ? { error: boundedText(fields.error) } : {}),
        ...(fields.status !== undefined ? { status: fields.status } : {}),
        ...(fields.class !== undefined ? { class: fields.class } : {}),
        ...(fields.model !== undefined ? { model: fields.model } : {}),
        ...(retry !== undefined ? { retry } : {}),
      };
      sink.event(event, line);
    };
    switch (kind) {
      case 'task':
        return turn();
      case 'user_feedback':
        return turn('user');
      case 'text':
        if (!this.requested && i === 0) return turn();
        return reply(text);
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
        sink.event({ ...base, type: 'delegation_result', ok: true, output: boundedText(text) }, line);
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
          sink.event({ ...base, type: 'delegation', instruction: boundedText(instruction), id: `${this.session}:${i}`, ...(to !== undefined ? { to } : {}) }, line);
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
        this.requested = true;
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
        for (const body of textResults(request)) {
          const id = this.waiting.shift();
          if (id === undefined) break;
          const outcome = textResultOutcome(body);
          sink.event(outcome.ok ? { ...base, type: 'tool_result', id, ok: true, output: outcome.output } : { ...base, type: 'tool_result', id, ok: false, error: outcome.error }, line);
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
      sink.event({ ...base, type: 'delegation', instruction: boundedText(prompt), id }, line);
      if (item.status === 'completed') sink.event({ ...base, type: 'delegation_result', id, ok: true, ...(str(item.result) !== undefined ? { output: boundedText(item.result as string) } : {}) }, line);
      else if (item.status === 'failed') sink.event({ ...base, type: 'delegation_result', id, ok: false, error: boundedText(str(item.error) ?? 'failed') }, line);
    });
  }

  finish(): void {}
}

export const clineTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => messagesOf(doc) !== undefined || isUiMessages(doc),
  records: (doc) => (isUiMessages(doc) ? { key: null, items: doc } : { key: Array.isArray(doc) ? null : 'messages', items: messagesOf(doc) ?? [] }),
  decoder: (session, doc) => (isUiMessages(doc) ? new ClineUiDecoder(session) : new ClineDecoder((isObject(doc) ? str(doc.sessionId) : undefined) ?? session)),
};
