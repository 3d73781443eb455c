import { isObject, nonEmptyString as text } from '../core/guards';
import { exceedsDepth, parseJson, tooDeepReason } from '../core/json';

/**
 * What every agent's hook contract shares: a call read from the hook's stdin, the reply the hook
 * process gives, and the outcome of a finished call. Each agent's own contract (its event names,
 * how it refuses, where its hook is registered) is a `HookProtocol` in its folder. Pure: no I/O.
 */

/**
 * Before a tool call, after it, a prompt about to be sent to the model, the agent's permission
 * request for a call it is about to run (after `pre`: Copilot CLI's `permissionRequest`), or
 * another event.
 */
export type HookPhase = 'pre' | 'post' | 'prompt' | 'permission' | 'other';

export interface HookCall {
  readonly phase: HookPhase;
  /** The event name as the agent sent it. */
  readonly event: string;
  readonly session: string;
  readonly cwd?: string;
  readonly tool?: string;
  readonly input: Record<string, unknown>;
  readonly id?: string;
  /** After the call: what it returned, or why it failed. */
  readonly response?: unknown;
  readonly error?: string;
  /**
   * The registry id of the agent that sent the call, when one hook serves several (a hook file
   * that more than one agent reads) and the payload tells them apart: the call is recorded as that
   * agent's, in its own log. Undefined: the agent the hook was named for.
   */
  readonly caller?: string;
  /** A prompt call: the prompt's text. */
  readonly prompt?: string;
  /** The agent's transcript of the session, where its stdin names it (the answers to earlier prompts are there). */
  readonly transcript?: string;
}

/** What the hook process prints and how it exits. */
export interface HookReply {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export type DenyStyle = 'json' | 'exit2';

/** How the guardian's hook is registered in an agent's settings file. */
export interface HookRegistration {
  /**
   * The project's settings file `init` writes the hook to, relative to the workspace: the agent's
   * per-user (git-ignored) file for the project where it has one, else its project file; for the
   * `script` layout, the folder of its hook files.
   */
  readonly settingsFile: string;
  /** The events the hook is registered on. */
  readonly events: readonly string[];
  /** The matcher that selects every tool, for agents whose hook groups carry one. */
  readonly matcher?: string;
  /** The timeout written with the registration, in the agent's own unit. */
  readonly timeout: number;
  /**
   * How an event's hooks are listed: `grouped` (Claude Code, Codex, Gemini CLI: groups, each
   * with an optional matcher and its `hooks` array of `{type, command, timeout}`), or `flat`
   * (the entries themselves, each an object with the command under `entry.commandKey` and the
   * other fields of `entry.fields`), or `script` (Cline: no settings file but an executable file
   * per event, named after the event, in the folder `settingsFile`; the guardian's file runs the
   * command). Default `grouped`.
   */
  readonly layout?: 'grouped' | 'flat' | 'script';
  /** For the `flat` layout: the key that holds the command, and the other fields of a new entry. */
  readonly entry?: { readonly commandKey: string; readonly fields: Readonly<Record<string, unknown>> };
  /** The file's format version, written when the file has none (`"version": 1`). */
  readonly version?: number;
  /** Another hook's failure or refusal can stop such an agent (Copilot refuses a call whose pre-call hook exits non-zero): the hook then never exits non-zero except to refuse. */
  readonly failClosed?: boolean;
  /**
   * Other agents whose hook is registered in the same file on the same events, one entry serving
   * them all (the hook tells the callers apart by their payloads): an entry naming any of them is
   * the guardian's, so registering one never adds a second.
   */
  readonly sharedWith?: readonly string[];
  /**
   * Settings files an earlier `init` wrote the hook to (the project's shared file, before the
   * per-user one): the guardian's entries there are moved to `settingsFile` (others' are kept),
   * unless they already run the very command `init` would write.
   */
  readonly migrateFrom?: readonly string[];
  /**
   * The agent keeps `settingsFile` out of git only when it creates the file itself: when `init`
   * creates it, it adds it to the clone's own ignore list (`.git/info/exclude`, never committed).
   */
  readonly gitIgnored?: boolean;
  /** Events registered without the tool matcher (a prompt event matches no tool). */
  readonly unmatched?: readonly string[];
  /**
   * The key of an entry that holds the command for Windows, where the agent takes one (Codex
   * `command_windows`, openai/codex `codex-rs/hooks/src/engine/discovery.rs`; Copilot
   * `powershell`, github/docs hooks-reference): `init` writes the Node command there
   * (`windowsHookCommand`), so that the hook runs where there is no POSIX shell.
   */
  readonly windowsKey?: 'command_windows' | 'powershell';
  /**
   * Whether the agent, started in a subfolder of the project (not in a nested repository), still
   * finds and runs this registration, with what says so (its source, and what was seen live:
   * docs/agents.md). An agent that reads it only in the folder it starts in runs no hook there:
   * `init` and `status` say so, with the fix.
   */
  readonly fromSubfolder?: { readonly runs: boolean; readonly source: string };
  /**
   * Events whose entry is registered to run in the background, where the agent allows it and the
   * event decides nothing (Claude Code's `"async": true`: the agent starts the hook and goes on
   * without waiting for it). Never a before-call or prompt event: those decide. The session's next
   * hook call before a call settles from the transcript the calls such a record has not reached yet
   * (`settleFromTranscript`), and a record that comes after that is not made twice.
   */
  readonly background?: readonly string[];
  /**
   * Other files, relative to the workspace (a glob), whose hooks the agent runs besides the
   * guardian's: a change to any of them may change how well it is protected.
   */
  readonly alsoReads?: string;
}

/**
 * The files, relative to the workspace, whose text names the guardian's command where its hook is
 * registered: the settings file, or for the `script` layout each event's file in that folder
 * (Cline's `.clinerules/hooks/PreToolUse`: the folder itself is no file to read); then the files
 * an earlier `init` wrote it to.
 */
export function registrationFiles(reg: HookRegistration): string[] {
  const own = reg.layout === 'script' ? reg.events.map((event) => `${reg.settingsFile}/${event}`) : [reg.settingsFile];
  return [...own, ...(reg.migrateFrom ?? [])];
}

/** One agent's hook contract: stdin to a call, and its allow and deny replies. */
export interface HookProtocol {
  /** The agent's names for "before a tool runs", "after it ran", and "a prompt is about to be sent" where it has one. */
  readonly events: { readonly pre: string; readonly post: readonly string[]; readonly prompt?: string };
  /** Environment variables the agent sets to the project's folder, in the order they are trusted. */
  readonly projectDirEnv: readonly string[];
  /** The call the stdin JSON describes; a message naming the field when it is not one. */
  parse(raw: unknown): HookCall | { problem: string };
  /**
   * Refuses the call through the agent's JSON answer; `call`, when stdin could be read, lets an
   * agent that is called in more than one dialect answer in the caller's.
   */
  deny(reason: string, call?: HookCall): HookReply;
  /** Lets the call run without a say, so the agent's own permission rules still apply. */
  allow(note?: string): HookReply;
  /**
   * Refuses the call and ends the agent's whole run, so that it stops paying for model requests
   * (STOP, or a halt the agent keeps retrying after its refusal). Undefined for a call whose run
   * the agent does not end from this event (Copilot CLI ends a run only at a permission request),
   * and absent where it never can be ended from its hook (Codex: nothing mid-turn): a refusal there
   * is `deny` alone, and says so. What is measured, per agent and event: docs/agents.md.
   */
  halt?(reason: string, call?: HookCall): HookReply | undefined;
  /** Every refusal by `deny` ends the agent's whole run too (Cline: `cancel: true` cancels the task; it has no refusal of one call). */
  readonly denyEnds?: boolean;
  /**
   * The run is ended at a later hook event of the same call rather than before it (Copilot CLI
   * ends a run only from its `permissionRequest` hook, which runs after `preToolUse` and only when
   * that one gave no decision): true for a call whose refusal with an ended run is handed there.
   */
  endsLater?(call: HookCall): boolean;
  /**
   * How a finished call went, where the agent reports it in a shape of its own (a failed command
   * reported as a success with its exit code in the text); absent: `postOutcome`.
   */
  outcome?(call: HookCall): Outcome;
  /**
   * The agent tells its hook nothing of how a call ended (Codex: the output text, no exit code),
   * but writes it to its transcript once the hook has returned: the outcome is recorded from the
   * transcript at the session's next hook call (`settleEvents`), not after the call.
   */
  readonly outcomeInTranscript?: boolean;
  /**
   * Another agent that runs this agent's hooks from this agent's settings file, told by its
   * environment and payload: the registry id of that agent (its calls are then its own, and where
   * its own hook entry is in place too, it alone decides, so that a call meets the guardian once).
   */
  foreignCaller?(env: NodeJS.ProcessEnv, call: HookCall): string | undefined;
  /**
   * Some calls never reach the hook (Claude Code rejects a call whose input fails its own checks
   * before any PreToolUse hook runs), and the transcript stdin names holds them under the ids the
   * hook is given: at each hook call the transcript is read for the calls the hook never saw (they
   * are recorded, and a loop among them is refused there), and a watcher reads the session's
   * transcript for them too (paired by id, nothing counted twice). `resultIds`: a pattern (global)
   * whose first group is the call id of each result in the transcript's text: an end of it that
   * names no id the hook log lacks holds nothing unseen, and the transcript readers are not loaded.
   */
  readonly unseenInTranscript?: { readonly resultIds: RegExp };
  /** Events (besides pre, post and prompt) at which calls still unsettled are settled from the transcript: the end of a turn. */
  readonly settleEvents?: readonly string[];
  /**
   * The agent runs no after-call hook for a call that failed, but writes the failure to the
   * transcript stdin names before its next hook runs (Copilot in VS Code): before a call or a
   * prompt, the session's calls with no outcome are settled from the transcript.
   */
  readonly failuresInTranscript?: boolean;
  /**
   * The commands a finished call ran in a terminal the editor created for the agent, where the
   * agent's after-call payload may not say how the command exited but the editor's shell
   * integration does (Copilot in VS Code): the extension records those exit codes
   * (src/state/terminalExits.ts), and a call that returned without an error is recorded failed when
   * its command, ended after the call was recorded, exited non-zero. Empty: not such a call.
   */
  terminalCommands?(call: HookCall): readonly string[];
  /** How the agent's transcript names a call its hook is given as `id`; absent: by the same id. */
  transcriptCallId?(id: string): string;
  /**
   * Refuses a prompt (a call of phase `prompt`) through the agent's answer; undefined where the
   * agent, or the dialect it called in, cannot refuse one (the prompt is then only recorded).
   * Absent: the agent's prompts are not refused.
   */
  denyPrompt?(reason: string, call: HookCall): HookReply | undefined;
  readonly registration: HookRegistration;
}

/**
 * A field some agents send as JSON text (Cursor's `tool_input`, Copilot CLI's `toolArgs`) as an
 * object. The text is parsed under the same depth limit as stdin; text that is not JSON, or nests
 * too deep, is kept as text under `input`, as is any other value.
 */
export function objectOfJsonText(v: unknown): Record<string, unknown> {
  if (isObject(v)) return v;
  if (typeof v === 'string') {
    const parsed = parseJson(v);
    if (!parsed.ok) return { input: v };
    return isObject(parsed.value) ? parsed.value : { input: parsed.value };
  }
  return v === undefined || v === null ? {} : { input: v };
}

/**
 * Reads the stdin of agents whose hooks send `hook_event_name`, `session_id`, `cwd`, `tool_name`,
 * `tool_input`, `tool_use_id`, and after a call `tool_response` or `error` (Claude Code, Codex,
 * Gemini CLI). Without an event name, a response or error means "after", else "before".
 */
export function parseToolHookInput(events: HookProtocol['events'], raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  // The call's input is the agent's: nested too deep, it would overflow what compares and logs it.
  if (exceedsDepth(raw)) return { problem: `stdin: ${tooDeepReason()}` };
  const event = text(raw.hook_event_name) ?? (raw.tool_response !== undefined || raw.error !== undefined ? (events.post[0] as string) : events.pre);
  const phase: HookPhase = event === events.pre ? 'pre' : events.post.includes(event) ? 'post' : event === events.prompt ? 'prompt' : 'other';
  const session = text(raw.session_id) ?? 'unknown-session';
  if (phase === 'prompt') {
    if (typeof raw.prompt !== 'string') return { problem: `stdin: ${event} without prompt` };
    return { phase, event, session, input: {}, prompt: raw.prompt, ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}), ...(text(raw.transcript_path) !== undefined ? { transcript: raw.transcript_path as string } : {}) };
  }
  const tool = text(raw.tool_name);
  if (phase !== 'other' && tool === undefined) return { problem: `stdin: ${event} without tool_name` };
  const transcript = text(raw.transcript_path);
  const input = isObject(raw.tool_input) ? raw.tool_input : raw.tool_input === undefined ? {} : { input: raw.tool_input };
  const error = typeof raw.error === 'string' ? raw.error : isObject(raw.error) && typeof raw.error.message === 'string' ? raw.error.message : undefined;
  return {
    phase,
    event,
    session,
    input,
    ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}),
    ...(tool !== undefined ? { tool } : {}),
    ...(text(raw.tool_use_id) !== undefined ? { id: raw.tool_use_id as string } : {}),
    ...(raw.tool_response !== undefined ? { response: raw.tool_response } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(transcript !== undefined ? { transcript } : {}),
  };
}

/** The `hookSpecificOutput.permissionDecision: "deny"` answer (Claude Code, Codex). */
export function permissionDenyReply(eventName: string, reason: string): HookReply {
  const out = { hookSpecificOutput: { hookEventName: eventName, permissionDecision: 'deny', permissionDecisionReason: reason } };
  return { stdout: `${JSON.stringify(out)}\n`, stderr: '', exitCode: 0 };
}

/**
 * Refuses the call and ends the run, in the hooks' common output that Claude Code (and agents that
 * took its contract) reads: `continue: false` with a `stopReason` stops the agent after the hook,
 * and the `permissionDecision: "deny"` beside it keeps the call itself from running first
 * (code.claude.com/docs/en/hooks, "Common JSON fields"; seen live: without the deny the call runs
 * before the agent stops, ../shared/docs/live-agents.md).
 */
export function permissionHaltReply(eventName: string, reason: string): HookReply {
  const out = { continue: false, stopReason: reason, systemMessage: userNotice(reason), hookSpecificOutput: { hookEventName: eventName, permissionDecision: 'deny', permissionDecisionReason: reason } };
  return { stdout: `${JSON.stringify(out)}\n`, stderr: '', exitCode: 0 };
}

/**
 * What a person reading the agent's output is told when the guardian ends its run (the hooks'
 * common `systemMessage`, "a warning message shown to the user": Claude Code prints it as a
 * notice, in its terminal and as a `system` event of `--output-format stream-json`, seen live from
 * 2.1.328, where `stopReason` shows nowhere; Gemini CLI's hooks reference, "Common Output Fields").
 * Without it a headless run ended by the guardian printed nothing at all (issue 33 item 4).
 * Worded apart from the model's refusals ("Loop Guardian refused this call", "… ended this run"):
 * the command registered for machines without the guardian carries it, and Gemini CLI prints
 * that command in a warning at every start.
 */
export function userNotice(reason: string): string {
  return `Loop Guardian stopped this run. ${reason.replace(/^Loop Guardian: /, '')}`;
}

/** Refuses a prompt by Claude Code's `UserPromptSubmit` answer: `decision: "block"`, the reason shown to the person. */
export function blockPromptReply(reason: string): HookReply {
  return { stdout: `${JSON.stringify({ decision: 'block', reason })}\n`, stderr: '', exitCode: 0 };
}

/** No decision: an empty stdout, and the note (if any) on stderr. */
export function silentAllowReply(note?: string): HookReply {
  return { stdout: '', stderr: note !== undefined ? `${note}\n` : '', exitCode: 0 };
}

/** A refusal as the hook gives it: the reply, and whether the agent's run ends with it. */
export interface Refusal {
  readonly reply: HookReply;
  /** The agent ends its whole run on this reply (as measured: docs/agents.md), not just this call. */
  readonly ends: boolean;
}

/**
 * Refuses the call: in the agent's JSON answer, or (`exit2`, which every agent here takes) exit code 2 with the reason on stderr.
 * A prompt is refused by the agent's prompt answer; undefined where the agent cannot refuse it.
 * `end`: the agent's run is ended too, where its protocol ends it for this call (`halt`); exit
 * code 2 never ends a run. `unended`: the reason given instead where the run is to end but cannot
 * (the model is asked to end its turn itself).
 */
export function denyReply(protocol: HookProtocol, reason: string, style: DenyStyle = 'json', call?: HookCall, end = false, unended: string = reason): Refusal | undefined {
  if (call?.phase === 'prompt') {
    // A prompt the agent cannot refuse is not refused by exit code either.
    const reply = protocol.denyPrompt?.(reason, call);
    return reply === undefined ? undefined : { reply: style === 'json' ? reply : exit2Reply(reason), ends: false };
  }
  if (style === 'exit2') return { reply: exit2Reply(end ? unended : reason), ends: false };
  const halted = end ? protocol.halt?.(reason, call) : undefined;
  if (halted !== undefined) return { reply: halted, ends: true };
  const ends = protocol.denyEnds === true;
  return { reply: protocol.deny(end && !ends ? unended : reason, call), ends };
}

/** How a finished call went: its output, or its error. */
export type Outcome = { readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly error: string };

/** The outcome of a finished call, in the agent's own shape where it has one. */
export function outcomeOf(protocol: HookProtocol, call: HookCall): Outcome {
  return protocol.outcome?.(call) ?? postOutcome(call);
}

/** Refuses by exit code 2 with the reason on stderr, which every agent here takes. */
export function exit2Reply(reason: string): HookReply {
  return { stdout: '', stderr: `${reason}\n`, exitCode: 2 };
}

/** A Bash failure Claude Code reports as a normal result starts `Exit code N`. */
const EXIT_PREFIX = /^(?:Exit code:?|Process exited with code)\s*(-?\d+)/m;

/**
 * The outcome of a finished call from what the hook was given: the failure event's `error`, an
 * error field, `success: false`, a non-zero exit code, or an `Exit code N` line; else success.
 */
export function postOutcome(call: HookCall): Outcome {
  if (call.error !== undefined) return { ok: false, error: call.error || 'failed' };
  const r = call.response;
  if (isObject(r)) {
    const err = r.error;
    const errText = typeof err === 'string' ? err : isObject(err) && typeof err.message === 'string' ? err.message : undefined;
    if (errText !== undefined && errText !== '') return { ok: false, error: errText };
    if (r.success === false || r.is_error === true) return { ok: false, error: responseText(r) || 'failed' };
    const code = typeof r.exit_code === 'number' ? r.exit_code : typeof r.exitCode === 'number' ? r.exitCode : undefined;
    if (code !== undefined && code !== 0) return { ok: false, error: responseText(r) || `exit code ${code}` };
  } else if (typeof r === 'string') {
    const m = EXIT_PREFIX.exec(r);
    if (m && Number(m[1]) !== 0) return { ok: false, error: r };
  }
  return { ok: true, output: r ?? null };
}

function responseText(r: Record<string, unknown>): string {
  for (const key of ['stderr', 'output', 'stdout', 'content', 'llmContent', 'returnDisplay']) {
    const v = r[key];
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return '';
}
