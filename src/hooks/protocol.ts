import { isObject, nonEmptyString as text } from '../core/guards';

/**
 * The hook contracts of the agents the guardian can enforce: what comes on stdin, and how a call
 * is refused. Pure: no I/O.
 */
export const HOOK_AGENTS = ['claude', 'codex', 'gemini'] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** The `agent` the hook's events carry (the same names the transcript adapters use). */
export const HOOK_AGENT_NAMES: Readonly<Record<HookAgent, string>> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini-cli' };

/** Each agent's names for "before a tool runs" and "after it ran". */
export const HOOK_EVENTS: Readonly<Record<HookAgent, { pre: string; post: readonly string[] }>> = {
  claude: { pre: 'PreToolUse', post: ['PostToolUse', 'PostToolUseFailure'] },
  codex: { pre: 'PreToolUse', post: ['PostToolUse'] },
  gemini: { pre: 'BeforeTool', post: ['AfterTool'] },
};

export type HookPhase = 'pre' | 'post' | 'other';

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
}


/** Reads the hook's stdin JSON; a message (naming the field) when it is not a hook call. */
export function parseHookInput(agent: HookAgent, raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  const names = HOOK_EVENTS[agent];
  const event = text(raw.hook_event_name) ?? (raw.tool_response !== undefined || raw.error !== undefined ? (names.post[0] as string) : names.pre);
  const phase: HookPhase = event === names.pre ? 'pre' : names.post.includes(event) ? 'post' : 'other';
  const session = text(raw.session_id) ?? 'unknown-session';
  const tool = text(raw.tool_name);
  if (phase !== 'other' && tool === undefined) return { problem: `stdin: ${event} without tool_name` };
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
  };
}

/** What the hook process prints and how it exits. */
export interface HookReply {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export type DenyStyle = 'json' | 'exit2';

/**
 * Refuses the call in the agent's protocol: Claude Code and Codex read
 * `hookSpecificOutput.permissionDecision: "deny"`, Gemini CLI `{"decision": "deny"}`; every one of
 * them also takes exit code 2 with the reason on stderr (`exit2`).
 */
export function denyReply(agent: HookAgent, reason: string, style: DenyStyle = 'json'): HookReply {
  if (style === 'exit2') return { stdout: '', stderr: `${reason}\n`, exitCode: 2 };
  if (agent === 'gemini') return { stdout: `${JSON.stringify({ decision: 'deny', reason })}\n`, stderr: '', exitCode: 0 };
  const out = { hookSpecificOutput: { hookEventName: HOOK_EVENTS[agent].pre, permissionDecision: 'deny', permissionDecisionReason: reason } };
  return { stdout: `${JSON.stringify(out)}\n`, stderr: '', exitCode: 0 };
}

/**
 * Lets the call run without a say: no decision, so the agent's own permission rules still apply
 * (an "allow" would skip them). Gemini CLI parses stdout as JSON, so it gets `{}`.
 */
export function allowReply(agent: HookAgent, note?: string): HookReply {
  return { stdout: agent === 'gemini' ? '{}\n' : '', stderr: note !== undefined ? `${note}\n` : '', exitCode: 0 };
}

/** A Bash failure Claude Code reports as a normal result starts `Exit code N`. */
const EXIT_PREFIX = /^(?:Exit code:?|Process exited with code)\s*(-?\d+)/m;

/**
 * The outcome of a finished call from what the hook was given: the failure event's `error`, an
 * error field, `success: false`, a non-zero exit code, or an `Exit code N` line; else success.
 */
export function postOutcome(call: HookCall): { ok: true; output: unknown } | { ok: false; error: string } {
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
