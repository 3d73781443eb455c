import type { GuardianEvent } from '../../core/events';
import { withBase } from '../eventBuilders';
import { exceedsDepth } from '../../core/json';
import { argsObject, isObject, isoTime, jsonText, parseArgsText, RecentSet, str, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from '../transcript';
import { AGENT } from './transcript';

/*
 * VS Code's own record of a chat session (1.109 and later): an operation log, one JSON value per
 * line, that VS Code replays into the session's state. Where it lives: `<workspaceStorage>/<id>/
 * chatSessions/<sessionId>.jsonl`; in the newest source, `<profile globalStorage>/chatSessions/<id>/
 * <sessionId>.jsonl` (see discovery.ts). Sources, microsoft/vscode:
 * - `src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts` @047238f9 (`EntryKind`, `read`,
 *   `_applySet`, `_applyPush`, `_diff*`): the line kinds
 *     0 `{kind: 0, v}`            the whole state ("valid only as the first entry");
 *     1 `{kind: 1, k: path, v}`   set the value at the path (`v` absent: set to undefined);
 *     2 `{kind: 2, k: path, v?, i?}` push `v`'s items onto the array at the path, after cutting it
 *                                 to length `i` when `i` is given (a replacement from `i` on);
 *     3 `{kind: 3, k: path}`      delete (set to undefined).
 *   A path is keys and array indices from the root. `write` appends the changes since the last
 *   confirmed write; with no confirmed state, or after more than 1024 entries
 *   (`ChatSessionOperationLog` passes 1024 as `_compactAfterEntries`), it rewrites the file whole
 *   (`op: 'replace'`) as one fresh kind 0 line. `ChatSessionStore.writeSession`
 *   (`chatSessionStore.ts` @047238f9) hands both to the file service's write, with `append` set
 *   for an append only: a rewrite happens in place. So a reader sees the file grow, and now and then start again from a new
 *   snapshot of the same session: here every request and call is reported once, by its id, across
 *   rewrites (`rewritesWhole`).
 * - `chatSessionOperationLog.ts` @03d43368 (`storageSchema`): the state `{version: 3, creationDate,
 *   customTitle, initialLocation, inputState, responderUsername, sessionId, requests[],
 *   hasPendingEdits, repoData, pendingRequests}`; a request `{requestId, timestamp, message: {text,
 *   parts}, response[], result, modelState, …}` (REQUEST_KEYS below). Requests are diffed item by
 *   item under their `requestId` key (a changed id replaces the array from there: kind 2 with `i`);
 *   a request's fields are set whole (kind 1 at `["requests", n, field]`, `message` field by field);
 *   `response` parts are whole values compared positionally: a changed part (a tool call that
 *   moved on) comes again with every part after it (kind 2 at `["requests", n, "response"]` with
 *   `i`), a first response as kind 1. `modelState` `{value}`: `ResponseModelState` Pending 0,
 *   Complete 1, Cancelled 2, Failed 3, NeedsInput 4 (`chatService/chatService.ts` @c3c6e234 and
 *   `chatModel.ts`).
 * - A tool call is a response part `{kind: "toolInvocationSerialized", toolId, toolCallId,
 *   invocationMessage, pastTenseMessage, isConfirmed, isComplete, resultDetails?, resultError?,
 *   toolSpecificData?, source, subAgentInvocationId?, …}` (`ChatToolInvocation.toJSON` in
 *   `chatProgressTypes/chatToolInvocation.ts` @06419c3c; `IChatToolInvocationSerialized` in
 *   `chatService.ts`). `toolCallId` is the model's call id (Copilot Chat passes
 *   `chatStreamToolCallId: toolCall.id.split('__vscode')[0]`, microsoft/vscode-copilot-chat
 *   `src/extension/prompts/node/panel/toolCalling.tsx` @279b95b7; older builds gave a fresh UUID):
 *   the call's identity here. `isComplete` is always true in this form, so it says nothing.
 *   `isConfirmed` is a `ConfirmedReason` `{type}`: Denied 0, ConfirmationNotNeeded 1, Setting 2,
 *   LmServicePerTool 3, UserAction 4, Skipped 5 (also written for a call whose result awaits
 *   approval); a boolean before 1.104; absent while the call streams or awaits confirmation.
 *   `resultError` (the tool's `toolResultError`, a string) is set when it failed.
 *   "Serialized invocations don't store parameters" (`IChatToolInvocation.getParameters`). What
 *   stands for them here: a terminal call's `toolSpecificData {kind: "terminal", commandLine:
 *   {original, toolEdited?, userEdited?}}` (older `{command}`), with `terminalCommandState
 *   {exitCode?, timestamp?}` and `terminalCommandOutput {text}` once it ran; an MCP tool's
 *   `toolSpecificData {kind: "input", rawInput}` and `resultDetails {input: <JSON text>, output:
 *   [{type: "embed", isText, value}], isError}` (as in the real exports in
 *   ../shared/fixtures/real/copilot-vscode); `{kind: "simpleToolInvocation", input, output}`; else
 *   the `invocationMessage` (markdown `{value, uris}`), which names what the call works on when it
 *   links a file or quotes a pattern ("Reading [](file:///…), lines 260 to 380", "Searching for
 *   regex `…`") and only the tool otherwise ("Using \"Replace String in File\""). A call with no
 *   arguments on record, or no outcome, gets its own id among its arguments: two such calls are
 *   never the same call (see `argsOf`).
 * - Not used: `result.metadata.toolCallRounds` (the calls with their full arguments, and
 *   `toolCallResults`), which Copilot Chat sets only when the whole request has ended; the calls are
 *   read from the response parts, which come at each save while the request runs.
 *
 * When a call is reported: once it ended, as far as the log tells: an outcome of its own (an exit
 * code, `resultError`, `resultDetails.isError`, a denial), or a later part after it in the response
 * (the agent went on), or its request ended (`modelState` Complete, Cancelled or Failed; `result`
 * set, for logs without `modelState`; a later request). A call still running at a save waits for
 * the next one. A call with no outcome on record is reported as a `tool` and a `tool_result` with
 * no outcome: it ended, how is not known.
 *
 * VS Code writes this file when it saves its state (`ChatService.saveState` on
 * `storageService.onWillSaveState`: the storage flush, every 60 s when idle, and at shutdown), so
 * it runs up to a minute or more behind the session. Only local (VS Code agent) sessions are stored
 * in full (see ../shared/docs/vscode-agents.md 1.2c).
 */

/** The operation kinds (`EntryKind` in objectMutationLog.ts). */
const INITIAL = 0;
const SET = 1;
const PUSH = 2;
const DELETE = 3;

/** The session's keys in `storageSchema` not read here. */
const ROOT_KEYS = new Set(['version', 'creationDate', 'customTitle', 'initialLocation', 'inputState', 'responderUsername', 'hasPendingEdits', 'repoData', 'pendingRequests']);
/** A request's keys in `requestSchema` not read here. */
const REQUEST_KEYS = new Set([
  'confirmation',
  'shouldBeRemovedOnSend',
  'agent',
  'modelId',
  'modeInfo',
  'editedFileEvents',
  'variableData',
  'isHidden',
  'isCanceled',
  'responseId',
  'responseMarkdownInfo',
  'followups',
  'vote',
  'voteDownReason',
  'slashCommand',
  'usedContext',
  'contentReferences',
  'codeCitations',
  'timeSpentWaiting',
  // Written by VS Code 1.139.1 (seen in its own chatSessions/*.jsonl, live run of
  // test/host/copilotVscode.js, 2026-11-27): the model's usage and the request's timing.
  'completionTokens',
  'promptTokens',
  'promptTokenDetails',
  'outputBuffer',
  'elapsedMs',
]);

/** `ResponseModelState` values of a request that has ended: Complete, Cancelled, Failed. */
const ENDED = new Set([1, 2, 3]);
const CONFIRM_DENIED = 0;
const CONFIRM_SKIPPED = 5;

/** The most of a text kept: a prompt, a result, an error. */
const KEEP_TEXT = 2_000;
/** The most of a call's input kept (its arguments as JSON text). */
const KEEP_INPUT = 16_000;

/** What is kept of a tool-call part: what its arguments and outcome are read from. */
interface Call {
  /** `toolCallId`; undefined when the part has none (then it cannot be told apart). */
  readonly id: string | undefined;
  readonly tool: string | undefined;
  readonly message?: string;
  /** The message names what the call works on (a link or a quoted pattern). */
  readonly descriptive: boolean;
  /** `isConfirmed`: its `type`, or the older boolean. */
  readonly confirmed?: number | boolean;
  readonly resultError?: string;
  /** `resultDetails` `{input, output, isError}` (an array of locations is not read). */
  readonly details?: { readonly input?: string; readonly output?: string; readonly isError?: boolean };
  readonly terminal?: { readonly command?: string; readonly exitCode?: number; readonly at?: number; readonly output?: string };
  readonly rawInput?: unknown;
  readonly simpleInput?: string;
}

/**
 * A PreToolUse hook's answer that kept the next call from running: VS Code 1.139.1 writes the part
 * `{kind: "hook", hookType: "PreToolUse", stopReason: "A hook prevented chat from continuing. …
 * \nError message: Tried to use run_in_terminal - <the hook's reason>"}` right before the denied
 * call's part (`isConfirmed {type: 0}`, a fresh UUID as its `toolCallId`): seen in its own
 * chatSessions/*.jsonl, live run of test/host/copilotVscode.js, 2026-11-27.
 */
interface HookRefusal {
  readonly hook: string;
}

/** A response part: a call not reported yet, a hook's refusal of the call after it, or nothing to report (text, edits, a call reported). */
type Part = Call | HookRefusal | null;

const isHookRefusal = (p: Part): p is HookRefusal => p !== null && 'hook' in p;

interface Request {
  id?: string;
  ts?: number;
  /** The prompt, until it is reported. */
  text?: string;
  /** `modelState.value`. */
  state?: number;
  /** `result` is set (the request ended, in logs that have no `modelState`). */
  result: boolean;
  parts: Part[];
}

type Outcome = { ok: true; output?: string } | { ok: false; error: string };

function clip(text: string, max = KEEP_TEXT): string {
  return text.length > max ? text.slice(0, max) : text;
}

/** A string or a markdown string's `value`. */
function markdownText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  return isObject(v) && typeof v.value === 'string' ? v.value : undefined;
}

/**
 * A terminal's captured text as the command printed it: VS Code 1.139.1 keeps the terminal's
 * CRLF line ends and control sequences in `terminalCommandOutput.text` (seen: "…missing.json\r\n
 * \u001b[?2004h", the shell's bracketed-paste switch), which are no part of the command's error.
 */
function terminalText(text: string): string {
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-_]/g, '').replace(/\r\n?/g, '\n').trimEnd();
}

function pruneCall(part: Json): Call {
  const messageValue = markdownText(part.invocationMessage);
  const uris = isObject(part.invocationMessage) && isObject(part.invocationMessage.uris) ? Object.keys(part.invocationMessage.uris).length : 0;
  const confirmed = isObject(part.isConfirmed) && typeof part.isConfirmed.type === 'number' ? part.isConfirmed.type : typeof part.isConfirmed === 'boolean' ? part.isConfirmed : undefined;
  const resultError = markdownText(part.resultError);
  let details: Call['details'];
  if (isObject(part.resultDetails)) {
    const d = part.resultDetails;
    const output = Array.isArray(d.output)
      ? d.output
          .map((o) => (isObject(o) && typeof o.value === 'string' && o.isText !== false ? o.value : undefined))
          .filter((t): t is string => t !== undefined)
          .join('\n')
      : undefined;
    details = {
      ...(typeof d.input === 'string' ? { input: clip(d.input, KEEP_INPUT) } : {}),
      ...(output !== undefined ? { output: clip(output) } : {}),
      ...(typeof d.isError === 'boolean' ? { isError: d.isError } : {}),
    };
  }
  const data = isObject(part.toolSpecificData) ? part.toolSpecificData : undefined;
  let terminal: Call['terminal'];
  if (data?.kind === 'terminal') {
    const line = isObject(data.commandLine) ? data.commandLine : undefined;
    // What ran: the person's edit, else the tool's rewrite, else the model's command.
    const command = str(line?.userEdited) ?? str(line?.toolEdited) ?? str(line?.original) ?? str(data.command);
    const state = isObject(data.terminalCommandState) ? data.terminalCommandState : undefined;
    const output = isObject(data.terminalCommandOutput) && typeof data.terminalCommandOutput.text === 'string' ? terminalText(data.terminalCommandOutput.text) : undefined;
    terminal = {
      ...(command !== undefined ? { command } : {}),
      ...(typeof state?.exitCode === 'number' ? { exitCode: state.exitCode } : {}),
      ...(typeof state?.timestamp === 'number' ? { at: state.timestamp } : {}),
      ...(output !== undefined ? { output: clip(output) } : {}),
    };
  }
  let rawInput: unknown;
  if (data?.kind === 'input' && data.rawInput !== undefined) {
    // Kept as it is when small and shallow; otherwise as (the start of) its JSON text.
    const text = jsonText(data.rawInput);
    rawInput = text.length <= KEEP_INPUT && !exceedsDepth(data.rawInput, 16) ? data.rawInput : clip(text, KEEP_INPUT);
  }
  const simpleInput = data?.kind === 'simpleToolInvocation' && typeof data.input === 'string' ? clip(data.input, KEEP_INPUT) : undefined;
  return {
    id: str(part.toolCallId),
    tool: str(part.toolId),
    ...(messageValue !== undefined ? { message: clip(messageValue) } : {}),
    descriptive: uris > 0 || /`[^`]+`/.test(messageValue ?? ''),
    ...(confirmed !== undefined ? { confirmed } : {}),
    ...(resultError !== undefined && resultError !== '' ? { resultError: clip(resultError) } : {}),
    ...(details !== undefined ? { details } : {}),
    ...(terminal !== undefined ? { terminal } : {}),
    ...(rawInput !== undefined ? { rawInput } : {}),
    ...(simpleInput !== undefined ? { simpleInput } : {}),
  };
}

/** The text of the hook's own reason in a hook part's `stopReason` (after "Error message: Tried to use <tool> - "). */
function hookReason(stopReason: string): string {
  const m = /Error message: (?:Tried to use \S+ - )?([\s\S]*)$/.exec(stopReason);
  return clip((m?.[1] ?? stopReason).trim());
}

function prunePart(v: unknown): Part {
  if (isObject(v) && v.kind === 'hook' && v.hookType === 'PreToolUse' && typeof v.stopReason === 'string') return { hook: hookReason(v.stopReason) };
  return isObject(v) && v.kind === 'toolInvocationSerialized' ? pruneCall(v) : null;
}

function pruneParts(v: unknown): Part[] {
  return Array.isArray(v) ? v.map(prunePart) : [];
}

function messageText(v: unknown): string | undefined {
  return isObject(v) && typeof v.text === 'string' ? clip(v.text, 500) : undefined;
}

function modelState(v: unknown): number | undefined {
  return isObject(v) && typeof v.value === 'number' ? v.value : undefined;
}

function pruneRequest(v: unknown): Request {
  if (!isObject(v)) return { result: false, parts: [] };
  const text = messageText(v.message);
  const state = modelState(v.modelState);
  return {
    ...(str(v.requestId) !== undefined ? { id: str(v.requestId) } : {}),
    ...(typeof v.timestamp === 'number' ? { ts: v.timestamp } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(state !== undefined ? { state } : {}),
    result: v.result !== undefined && v.result !== null,
    parts: pruneParts(v.response),
  };
}

/**
 * What a call's arguments are, as far as the part records them (see the header). A call is
 * compared with others only when both its arguments and its outcome are on record: a call that
 * names nothing, or whose outcome the log does not keep (a file read, a search, an edit: only their
 * failures are written), gets its own id among its arguments. The repeat signals judge a repeat by
 * what it brought; reading a file again after editing it is work, and without its result on record
 * it would look like a loop (as it did in the real TDD session of the shared corpus).
 */
function argsOf(c: Call, outcome: Outcome | undefined): Json {
  let args: Json | undefined;
  if (c.terminal?.command !== undefined) args = { command: c.terminal.command };
  else if (c.rawInput !== undefined) args = argsObject(c.rawInput);
  else if (c.details?.input !== undefined) args = parseArgsText(c.details.input);
  else if (c.simpleInput !== undefined) args = parseArgsText(c.simpleInput);
  else if (c.descriptive && c.message !== undefined) args = { message: c.message };
  if (args !== undefined && outcome !== undefined) return args;
  return { ...(args ?? (c.message !== undefined ? { message: c.message } : {})), call: c.id ?? '' };
}

/**
 * The outcome the part itself records, once the call has run (or was refused). A call a PreToolUse
 * hook denied carries the hook's reason: the guardian's own refusal is then known as such
 * (`isGuardianRefusal`), not taken for an error of the agent's.
 */
function ownOutcome(c: Call, refusedBy?: HookRefusal): Outcome | undefined {
  if (c.confirmed === false || c.confirmed === CONFIRM_DENIED) return { ok: false, error: refusedBy !== undefined ? `denied by a PreToolUse hook: ${refusedBy.hook}` : 'denied: the call did not run' };
  if (c.resultError !== undefined) return { ok: false, error: c.resultError };
  if (c.details?.isError === true) return { ok: false, error: c.details.output || 'failed' };
  const exit = c.terminal?.exitCode;
  if (exit !== undefined) {
    const output = c.terminal?.output;
    return exit === 0 ? { ok: true, ...(output !== undefined ? { output } : {}) } : { ok: false, error: `exit code ${exit}${output ? `\n${output}` : ''}` };
  }
  if (c.details?.output !== undefined) return { ok: true, output: c.details.output };
  return undefined;
}

/** The outcome of a call that has ended: its own, or a skip (which is also written while a result awaits approval, so it settles nothing by itself). */
function endedOutcome(c: Call, refusedBy?: HookRefusal): Outcome | undefined {
  return ownOutcome(c, refusedBy) ?? (c.confirmed === CONFIRM_SKIPPED ? { ok: false, error: 'skipped: the call did not run' } : undefined);
}

type Path = readonly (string | number)[];

/** Why an operation was not applied; `key`, for a key the schema as read here does not know. */
interface Problem {
  readonly field: string;
  readonly reason: string;
  readonly key?: string;
}

function unknownKey(k: Path, key: string | number | undefined, where: string): Problem {
  return { field: 'k', key: `${where}:${String(key)}`, reason: `${jsonText(k)}: unknown key ${jsonText(key)} in ${where} (not in VS Code's session schema as read here): skipped, and not reported again` };
}

function isPath(k: unknown): k is Path {
  return Array.isArray(k) && k.every((s) => typeof s === 'string' || (typeof s === 'number' && Number.isInteger(s) && s >= 0));
}

class ChatSessionLogDecoder implements Decoder {
  private session: string;
  /** The requests as replayed so far; undefined until the first snapshot. */
  private requests: Request[] | undefined;
  /** Requests and calls reported (`request:<id>`, `call:<id>`), across rewrites of the file. */
  private readonly reported = new RecentSet(100_000);
  /** The first request the current line may have changed (or that may have ended by it). */
  private dirtyFrom = Number.POSITIVE_INFINITY;
  private lastLine = 0;
  /** Keys not in the schema as read here, each reported once (a newer VS Code adds fields: every save would name them again). */
  private readonly unknownKeys = new Set<string>();
  /** Operations met with no snapshot to apply them to (its line unreadable, too long): the first is reported, the others counted. */
  private orphans: { first: number; last: number; count: number } | undefined;

  constructor(fallbackSession: string) {
    this.session = fallbackSession;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    this.lastLine = line;
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const kind = value.kind;
    if (kind === INITIAL) {
      if (!isObject(value.v)) return sink.skipped(line, 'v', 'a snapshot (kind 0) without a state object');
      this.reportOrphans(line, sink);
      this.session = str(value.v.sessionId) ?? this.session;
      this.requests = Array.isArray(value.v.requests) ? value.v.requests.map(pruneRequest) : [];
      this.dirtyFrom = 0;
    } else if (kind === SET || kind === PUSH || kind === DELETE) {
      if (this.requests === undefined) return this.orphan(line, kind, sink);
      if (!isPath(value.k)) return sink.skipped(line, 'k', value.k === undefined ? 'missing path' : 'not a path (an array of keys and indices)');
      const problem = kind === PUSH ? this.push(this.requests, value.k, value.v, value.i) : this.set(this.requests, value.k, kind === DELETE ? undefined : value.v);
      if (problem !== undefined) {
        if (problem.key !== undefined) {
          if (this.unknownKeys.has(problem.key) || this.unknownKeys.size >= 100) return;
          this.unknownKeys.add(problem.key);
        }
        return sink.skipped(line, problem.field, problem.reason);
      }
    } else {
      return sink.skipped(line, 'kind', kind === undefined ? 'missing operation kind' : `unknown operation kind ${jsonText(kind)} (0 snapshot, 1 set, 2 push, 3 delete)`);
    }
    this.settle(line, sink, false);
  }

  finish(sink: AdapterSink): void {
    this.reportOrphans(this.lastLine, sink);
    this.dirtyFrom = 0;
    this.settle(this.lastLine, sink, true);
  }

  /** An operation with no state to apply it to: the first of a run is reported, the rest counted (a file whose snapshot line was too long to read holds up to a thousand of them). */
  private orphan(line: number, kind: number, sink: AdapterSink): void {
    if (this.orphans !== undefined) {
      this.orphans.count++;
      this.orphans.last = line;
      return;
    }
    this.orphans = { first: line, last: line, count: 0 };
    sink.skipped(line, 'kind', `an operation (kind ${kind}) before the session's snapshot (kind 0): nothing to apply it to; the ones after it are counted until the next snapshot`);
  }

  private reportOrphans(line: number, sink: AdapterSink): void {
    const o = this.orphans;
    this.orphans = undefined;
    if (o !== undefined && o.count > 0) sink.skipped(line, 'kind', `${o.count} more operation(s) before a snapshot skipped (lines ${o.first + 1} to ${o.last})`);
  }

  private touched(index: number): void {
    this.dirtyFrom = Math.min(this.dirtyFrom, Math.max(0, index));
  }

  /** A request the path's second segment names, or why there is none. */
  private request(requests: Request[], k: Path): Request | Problem {
    const n = k[1];
    if (typeof n !== 'number') return { field: 'k', reason: `${jsonText(k)}: ${jsonText(n)} is not a request's index` };
    const r = requests[n];
    if (r === undefined) return { field: 'k', reason: `${jsonText(k)}: no request ${n} (the session has ${requests.length})` };
    this.touched(n);
    return r;
  }

  /** Kinds 1 and 3 (a delete sets undefined, as `ObjectMutationLog.read` does). */
  private set(requests: Request[], k: Path, v: unknown): Problem | undefined {
    const [root, n, field, ...rest] = k;
    if (root === undefined) return { field: 'k', reason: 'an empty path: the whole state is only written as a snapshot (kind 0)' };
    if (root === 'sessionId') {
      if (k.length === 1) this.session = str(v) ?? this.session;
      return undefined;
    }
    if (root !== 'requests') return ROOT_KEYS.has(String(root)) ? undefined : unknownKey(k, root, 'the session');
    if (n === undefined) {
      this.requests = Array.isArray(v) ? v.map(pruneRequest) : [];
      this.dirtyFrom = 0;
      return undefined;
    }
    if (field === undefined) {
      // One request set whole (an index one past the end appends, as in `_applySet`).
      if (typeof n !== 'number' || n > requests.length) return { field: 'k', reason: `${jsonText(k)}: no request ${jsonText(n)} (the session has ${requests.length})` };
      requests[n] = pruneRequest(v);
      this.touched(n - 1);
      return undefined;
    }
    const r = this.request(requests, k);
    if (!('parts' in r)) return r;
    switch (field) {
      case 'requestId':
        if (rest.length === 0) r.id = str(v);
        return undefined;
      case 'timestamp':
        if (rest.length === 0) r.ts = typeof v === 'number' ? v : undefined;
        return undefined;
      case 'message':
        if (rest.length === 0) r.text = messageText(v);
        else if (rest.length === 1 && rest[0] === 'text') r.text = typeof v === 'string' ? clip(v, 500) : undefined;
        return undefined;
      case 'modelState':
        if (rest.length === 0) r.state = modelState(v);
        else if (rest.length === 1 && rest[0] === 'value') r.state = typeof v === 'number' ? v : undefined;
        return undefined;
      case 'result':
        // A path inside the result sets part of one: it is there.
        r.result = rest.length > 0 || (v !== undefined && v !== null);
        return undefined;
      case 'response': {
        if (rest.length === 0) {
          r.parts = pruneParts(v);
          return undefined;
        }
        const [j, ...inside] = rest;
        if (typeof j !== 'number' || j > r.parts.length) return { field: 'k', reason: `${jsonText(k)}: no part ${jsonText(j)} (the response has ${r.parts.length})` };
        // Parts are whole values in `storageSchema` (`Adapt.v`): VS Code writes no path inside one.
        if (inside.length > 0) return { field: 'k', reason: `${jsonText(k)}: a path inside a response part, which is only written whole` };
        r.parts[j] = prunePart(v);
        return undefined;
      }
      default:
        return REQUEST_KEYS.has(String(field)) ? undefined : unknownKey(k, field, 'a request');
    }
  }

  /** Kind 2: cut the array to `i` when given, then append `v`'s items. */
  private push(requests: Request[], k: Path, v: unknown, i: unknown): Problem | undefined {
    if (v !== undefined && !Array.isArray(v)) return { field: 'v', reason: 'a push (kind 2) whose items are not an array' };
    if (i !== undefined && !(typeof i === 'number' && Number.isInteger(i) && i >= 0)) return { field: 'i', reason: 'a push (kind 2) whose index is not a whole number' };
    const items = v ?? [];
    const [root, , field, ...rest] = k;
    if (root === 'requests' && k.length === 1) {
      const from = Math.min(i ?? requests.length, requests.length);
      requests.length = from;
      for (const item of items) requests.push(pruneRequest(item));
      this.touched(from - 1);
      return undefined;
    }
    if (root !== 'requests') return root !== undefined && ROOT_KEYS.has(String(root)) ? undefined : unknownKey(k, root, 'the session');
    const r = this.request(requests, k);
    if (!('parts' in r)) return r;
    if (field === 'response' && rest.length === 0) {
      r.parts.length = Math.min(i ?? r.parts.length, r.parts.length);
      for (const item of items) r.parts.push(prunePart(item));
      return undefined;
    }
    if (field === 'response') return { field: 'k', reason: `${jsonText(k)}: a path inside a response part, which is only written whole` };
    return field !== undefined && REQUEST_KEYS.has(String(field)) ? undefined : unknownKey(k, field, 'a request');
  }

  /** Reports what the line made known: new requests, and the calls that have ended. */
  private settle(line: number, sink: AdapterSink, finishing: boolean): void {
    const requests = this.requests;
    if (requests === undefined || this.dirtyFrom === Number.POSITIVE_INFINITY) return;
    for (let n = this.dirtyFrom; n < requests.length; n++) {
      const r = requests[n];
      if (r !== undefined) this.settleRequest(r, n, finishing || n < requests.length - 1, line, sink);
    }
    this.dirtyFrom = Number.POSITIVE_INFINITY;
  }

  private settleRequest(r: Request, n: number, over: boolean, line: number, sink: AdapterSink): void {
    const base = { v: 1 as const, session: this.session, agent: AGENT };
    if (r.id === undefined) {
      if (this.reported.add(`no-id:${n}`)) sink.skipped(line, `requests[${n}].requestId`, 'a request without an id: its prompt is not reported');
    } else if (this.reported.add(`request:${r.id}`)) {
      // The person's prompt. Where a prompt event (the request's message, its attachments and
      // mode) would be mapped: here. A failed request's API error (`result.errorDetails`
      // `{message, code?}`, `modelState` Failed) would map beside it; neither is read yet.
      const ts = isoTime(r.ts);
      sink.event(withBase(base, { ...(ts !== undefined ? { ts } : {}), type: 'user', ...(r.text ? { text: r.text } : {}) }), line);
    }
    r.text = undefined;
    const ended = over || (r.state !== undefined ? ENDED.has(r.state) : r.result);
    r.parts.forEach((c, j) => {
      if (c === null || isHookRefusal(c)) return;
      const before = r.parts[j - 1];
      const refusedBy = before !== undefined && isHookRefusal(before) ? before : undefined;
      if (c.id === undefined || c.tool === undefined) {
        r.parts[j] = null;
        if (this.reported.add(`no-id:${r.id ?? n}:${j}`)) sink.skipped(line, `requests[${n}].response[${j}].${c.id === undefined ? 'toolCallId' : 'toolId'}`, 'a tool call without it is not reported');
        return;
      }
      if (this.reported.has(`call:${c.id}`)) {
        r.parts[j] = null;
        return;
      }
      const own = ownOutcome(c, refusedBy);
      if (own === undefined && !ended && j === r.parts.length - 1) return; // may still be running
      this.reported.add(`call:${c.id}`);
      r.parts[j] = null;
      const outcome = own ?? endedOutcome(c, refusedBy);
      const ts = isoTime(c.terminal?.at);
      const event: GuardianEvent = withBase(base, { ...(ts !== undefined ? { ts } : {}), type: 'tool', tool: c.tool, args: argsOf(c, outcome), id: c.id, ...(outcome ?? {}) });
      sink.event(event, line);
      // It ended, and the log does not say how: settled as such, not left waiting for a result.
      if (outcome === undefined) sink.event(withBase(base, { type: 'tool_result', id: c.id }), line);
    });
  }
}

/** The first line of VS Code's chat session log: a snapshot of a session state with its requests. */
function isSessionSnapshot(first: Record<string, unknown>): boolean {
  return first.kind === INITIAL && isObject(first.v) && Array.isArray(first.v.requests) && (typeof first.v.sessionId === 'string' || typeof first.v.version === 'number');
}

export const copilotChatSessionLog: JsonlAdapter = {
  agent: AGENT,
  layout: 'jsonl',
  sniff: isSessionSnapshot,
  decoder: (fallbackSession) => new ChatSessionLogDecoder(fallbackSession),
  rewritesWhole: true,
  // A snapshot holds every result's prompt tree; only shallow fields of it are kept (rawInput bounded).
  lineDepth: Number.POSITIVE_INFINITY,
  // A snapshot is the whole session, results and all, on one line: tens of MB for a long one
  // (lines of hundreds of MB have been seen, ../shared/docs/vscode-agents.md 1.2c). Up to 64 MB is
  // read (about 0.5 GB of memory while it is parsed); a longer one is skipped and reported, and the
  // session is read again from its next snapshot.
  maxLineBytes: 64 << 20,
};
