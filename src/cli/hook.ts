import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { GuardianEvent } from '../core/events';
import { HOOK_AGENTS, hookAgent, type AgentWithHook } from '../agents';
import { denyReply, postOutcome, type DenyStyle, type HookCall, type HookReply } from '../agents/hook';
import { gate } from '../core/gate';
import { LockTimeoutError } from '../state/atomicFile';
import { GuardianLog } from '../state/guardianLog';
import { appendEvent, hookConfig, hookLogPath, readHookTail, withSessionLock } from '../state/hookLog';
import { StopAllFile } from '../state/stopAllFile';
import { PATHS, Workspace } from '../state/workspace';

export const HOOK_USAGE = `Usage: loop-guardian hook ${HOOK_AGENTS.map((a) => a.id).join('|')} [--workspace DIR] [--deny-with json|exit2]

The enforcing hook: reads the agent's hook JSON on stdin, records the call under
${PATHS.logsDir}/, and refuses it when STOP_ALL says STOP (every call), PAUSE (new
subagents and tasks), or when it would trip a halt signal. After a call it records the outcome.

  --workspace DIR   the workspace (default: the project folder the agent names in its
                    environment, else the nearest folder above the hook's cwd holding
                    .github/guardian or .git)
  --deny-with       json (default): the agent's JSON decision; exit2: exit code 2, reason on stderr

It never blocks by failing: on any error of its own it lets the call run and logs the error.
Exit codes: 0 (allowed, or refused in JSON), 2 (refused, with --deny-with exit2), 1 usage error.
`;

export interface HookIo {
  readStdin(): Promise<string>;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** How long the hook may take before it lets the call run anyway. */
export const HOOK_DEADLINE_MS = 3000;
const LOCK_TIMEOUT_MS = 1500;

/** The workspace folder the agent works in. */
export function hookWorkspace(agent: AgentWithHook, option: string | undefined, env: NodeJS.ProcessEnv, callCwd: string | undefined, cwd: string): string {
  if (option !== undefined) return path.resolve(cwd, option);
  const fromEnv = agent.hook.projectDirEnv.map((name) => env[name]).find((v) => v !== undefined && v !== '');
  if (fromEnv) return path.resolve(fromEnv);
  const start = path.resolve(cwd, callCwd ?? '.');
  for (const marker of ['.github/guardian', '.git']) {
    for (let dir = start, i = 0; i < 64; i++) {
      if (existsSync(path.join(dir, marker))) return dir;
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return start;
}

/** Runs one hook invocation; never throws, and on its own failure lets the call run. */
export async function runHook(argv: readonly string[], io: HookIo): Promise<HookReply> {
  let agent: AgentWithHook;
  let options: { workspace?: string; 'deny-with'?: string; help?: boolean };
  try {
    const parsed = parseArgs({ args: [...argv], options: { workspace: { type: 'string' }, 'deny-with': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    options = parsed.values;
    if (options.help) return { stdout: HOOK_USAGE, stderr: '', exitCode: 0 };
    const [name, ...extra] = parsed.positionals;
    const found = name === undefined ? undefined : hookAgent(name);
    if (found === undefined) throw new Error(`the agent must be one of ${HOOK_AGENTS.map((a) => a.id).join(', ')}${name === undefined ? '' : `, not ${JSON.stringify(name)}`}`);
    if (extra.length > 0) throw new Error(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (options['deny-with'] !== undefined && options['deny-with'] !== 'json' && options['deny-with'] !== 'exit2') throw new Error('--deny-with must be json or exit2');
    agent = found;
  } catch (err) {
    // Exit 1: a usage error must not block the agent (exit 2 would).
    return { stdout: '', stderr: `loop-guardian hook: ${(err as Error).message}\n\n${HOOK_USAGE}`, exitCode: 1 };
  }
  const style = (options['deny-with'] ?? 'json') as DenyStyle;
  let ws: Workspace | undefined;
  const failOpen = async (what: string): Promise<HookReply> => {
    const message = `hook ${agent.id}: ${what}; the call is allowed (fail-open)`;
    if (ws) await new GuardianLog(ws).write('ERROR', message).catch(() => undefined);
    return agent.hook.allow(`loop-guardian ${message}`);
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<HookReply>((resolve) => {
    timer = setTimeout(() => resolve(failOpen(`no decision within ${HOOK_DEADLINE_MS} ms`)), HOOK_DEADLINE_MS);
  });
  const work = (async (): Promise<HookReply> => {
    let raw: unknown;
    const input = await io.readStdin();
    try {
      raw = JSON.parse(input);
    } catch (err) {
      return failOpen(`stdin is not JSON (${(err as Error).message})`);
    }
    const call = agent.hook.parse(raw);
    if ('problem' in call) return failOpen(call.problem);
    ws = new Workspace(hookWorkspace(agent, options.workspace, io.env, call.cwd, io.cwd));
    const tool = call.tool;
    if (call.phase === 'other' || tool === undefined) return agent.hook.allow();
    const rel = hookLogPath(agent.id, call.session);
    const workspace = ws;
    const named = { ...call, tool };
    return withSessionLock(workspace, rel, () => (call.phase === 'pre' ? before(agent, workspace, rel, named, style) : after(agent, workspace, rel, named)), LOCK_TIMEOUT_MS);
  })().catch((err: unknown) => failOpen(err instanceof LockTimeoutError ? err.message : `error: ${(err as Error).message ?? String(err)}`));
  try {
    return await Promise.race([work, deadline]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

function newId(): string {
  return `lg-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

async function before(agent: AgentWithHook, ws: Workspace, rel: string, call: HookCall & { tool: string }, style: DenyStyle): Promise<HookReply> {
  const log = new GuardianLog(ws);
  const stop = await new StopAllFile(ws).read();
  if (!stop.parse.ok) await log.write('WARN', `${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR`);
  const config = await hookConfig(ws, (m) => void log.write('WARN', m).catch(() => undefined));
  const history = await readHookTail(ws.path(rel), rel);
  const ts = new Date().toISOString();
  const base = { v: 1 as const, ts, session: call.session, agent: agent.eventAgent };
  const verdict = gate({ history, call: { tool: call.tool, args: call.input, session: call.session, agent: base.agent, ts }, stop: stop.state, config });
  if (verdict.allow) {
    await appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args: call.input, id: call.id ?? newId() });
    return agent.hook.allow();
  }
  if (verdict.why === 'loop') {
    // The refused call is recorded as a failed one: trying it again goes on counting.
    const event: GuardianEvent = { ...base, type: 'tool', tool: call.tool, args: call.input, ok: false, error: `Refused by Loop Guardian (${verdict.finding?.signal ?? 'loop'})` };
    await appendEvent(ws, rel, event);
  }
  await log.write('WARN', `hook ${agent.id}: refused ${call.tool} in session ${call.session}: ${verdict.reason}`);
  return denyReply(agent.hook, verdict.reason, style);
}

async function after(agent: AgentWithHook, ws: Workspace, rel: string, call: HookCall & { tool: string }): Promise<HookReply> {
  const outcome = postOutcome(call);
  const base = { v: 1 as const, ts: new Date().toISOString(), session: call.session, agent: agent.eventAgent };
  const fields = outcome.ok ? { ok: true, output: outcome.output } : { ok: false, error: outcome.error };
  let id = call.id;
  if (id === undefined) {
    // No id from the agent (not every agent sends one): the oldest unanswered call of the same tool and arguments.
    const history = await readHookTail(ws.path(rel), rel);
    const answered = new Set(history.flatMap((e) => (e.event.type === 'tool_result' ? [e.event.id] : [])));
    const same = JSON.stringify(call.input);
    const open = history.find((e) => e.event.type === 'tool' && e.event.id !== undefined && e.event.ok === undefined && !answered.has(e.event.id) && e.event.tool === call.tool && JSON.stringify(e.event.args ?? {}) === same);
    id = open?.event.type === 'tool' ? open.event.id : undefined;
  }
  if (id !== undefined) await appendEvent(ws, rel, { ...base, type: 'tool_result', id, ...fields } as GuardianEvent);
  // Without a recorded call (the hook was not installed before it), the call and its outcome in one event.
  else await appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args: call.input, ...fields } as GuardianEvent);
  return agent.hook.allow();
}

/**
 * stdin as text, in full. Read from the file descriptor: cheaper to start than `process.stdin`
 * (which loads the socket machinery); a non-blocking pipe falls back to the stream.
 */
export async function readStdin(): Promise<string> {
  try {
    return readFileSync(0, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
