import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';
import type { GuardianConfig } from '../core/config';
import { DEFAULT_DELEGATION_TOOLS } from '../core/defaults';
import type { GuardianEvent } from '../core/events';
import { boundedArgs, boundedText, boundedValue } from '../core/redact';
import type { StopState } from '../core/stopAll';
import { HOOK_REGISTRATION_FILES, HOOKED_AGENTS, hookedAgent, type HookedAgent } from '../agents/hooks';
import { denyReply, outcomeOf, type DenyStyle, type HookCall, type HookReply } from '../agents/hook';
import { attemptKey } from '../core/attempt';
import { Canonicalizer } from '../core/canonical';
import { mayRepeatIn, quickVerdict, stopGate, type GateVerdict } from '../core/verdict';
import { LockTimeoutError } from '../state/atomicFile';
import { GuardianLog } from '../state/guardianLog';
import { handoverFailed, recordHandover, recordHeartbeat, settleHandover } from '../state/heartbeat';
import { appendEvent, hookConfig, hookLogPath, readHookTail, withSessionLock } from '../state/hookLog';
import { openRegularFileSync, readTailTextSync } from '../state/regularFile';
import { readStopAllInForceSync } from '../state/stopAllFile';
import { findProject, PATHS, PROJECT_MARKERS, Workspace, type ProjectClues } from '../state/workspace';
import { exportConfigured } from '../watch/otelConfig';
import { publisherBusy } from '../state/otelQueue';
import { readToEnd } from '../watch/streamText';
import type { PreviousTurn } from '../watch/transcriptTail';
import { requireWithCodeCache } from './codeCache';
import { readStdinByHandle } from './stdinHandle';
import type * as HookGate from './hookGate';
import type * as HookTurn from './hookTurn';

const HOOK_USAGE = `Usage: loop-guardian hook ${HOOKED_AGENTS.map((a) => a.id).join('|')} [--workspace DIR] [--deny-with json|exit2]

The enforcing hook: reads the agent's hook JSON on stdin, records the call under
${PATHS.logsDir}/, and refuses it when STOP_ALL says STOP (every call), PAUSE (new
subagents and tasks), or when it would trip a halt signal. After a call it records the outcome.
Before a prompt (where the agent has a prompt hook) it records the prompt and refuses it under
STOP, or when the same prompt keeps getting the same answer (repeated-prompt).

  --workspace DIR   the workspace (default: the project of the folder the agent names in
                    its environment, else of the hook's cwd: the nearest folder at or above
                    it holding .github/guardian, else an agent's registration of this hook,
                    else .git)
  --deny-with       json (default): the agent's JSON decision; exit2: exit code 2, reason on stderr

It never blocks by failing: on any error of its own it lets the call run and logs the error.
Exit codes: 0 (allowed, or refused in JSON), 2 (refused, with --deny-with exit2 or for an agent
that reads only exit codes), 1 usage error (0 for agents that refuse a call whose hook fails).
`;

export interface HookIo {
  /** `streamOnly`: through Node's public stream, never through libuv's handle (cli/stdinHandle.ts). */
  readStdin(opts?: { streamOnly?: boolean }): Promise<string>;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** How long the hook may take before it lets the call run anyway (or refuses it, when STOP is known). */
const HOOK_DEADLINE_MS = 3000;
const LOCK_TIMEOUT_MS = 1500;
/** How long the configuration may take to load before PAUSE falls back to the default delegation tools. */
const CONFIG_BUDGET_MS = 1500;
/** The most of stdin the hook reads: a hook call is a few KB; anything past this is not one. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** What finds the project above a folder: the guardian's folder, the agents' registrations of the hook (not in the user's home), the repository. */
function projectClues(env: NodeJS.ProcessEnv): ProjectClues {
  return { registrations: HOOK_REGISTRATION_FILES, ...(env.HOME ? { home: env.HOME } : {}) };
}

/**
 * The project folder named without stdin: `--workspace` (null when it is not a folder: then there
 * is no project), else the project of the folder the agent names in its environment, found upward
 * from it (`findProject`): an agent may name the folder it was started in (a subfolder, seen live:
 * docs/agents.md), not the one its hook is registered in.
 * Undefined when none is named. (Exported for its tests.)
 */
export function namedProject(agent: HookedAgent, option: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | null | undefined {
  if (option !== undefined) {
    const dir = resolvePath(cwd, option);
    return isFolder(dir) ? dir : null;
  }
  for (const name of agent.hook.projectDirEnv) {
    const value = env[name];
    if (value !== undefined && value !== '' && isFolder(resolvePath(value))) return findProject(resolvePath(value), projectClues(env)) ?? resolvePath(value);
  }
  return undefined;
}

interface HookOptions {
  readonly values: { workspace?: string; 'deny-with'?: string; help?: boolean };
  readonly positionals: string[];
}

/**
 * The hook's arguments as `parseArgs` (strict) reads them. The forms agents run it with (the agent,
 * `--workspace DIR`, `--deny-with STYLE`) are read here, without loading Node's parser, which cost
 * the hook a millisecond; any other form goes to it, with its errors. (Exported for the test that
 * holds the two together.)
 */
export function hookOptions(argv: readonly string[]): HookOptions {
  const values: { workspace?: string; 'deny-with'?: string } = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = argv[i + 1];
    if (!arg.startsWith('-')) {
      positionals.push(arg);
    } else if ((arg === '--workspace' || arg === '--deny-with') && value !== undefined && !value.startsWith('-')) {
      values[arg === '--workspace' ? 'workspace' : 'deny-with'] = value;
      i++;
    } else return parseArgs({ args: [...argv], options: { workspace: { type: 'string' }, 'deny-with': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  }
  return { values, positionals };
}

function withTimeout<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work.catch(() => fallback), new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]).finally(() => timer && clearTimeout(timer));
}

/**
 * Runs one hook invocation; never throws. STOP_ALL is read first, bounded and non-blocking, before
 * any lock, log, configuration or cache is touched: when it says STOP, the call is refused whatever
 * else fails. On any other failure of its own the hook lets the call run and says so.
 */
export async function runHook(argv: readonly string[], io: HookIo): Promise<HookReply> {
  let agent: HookedAgent;
  let options: { workspace?: string; 'deny-with'?: string; help?: boolean };
  // Named before the options are checked: an agent that refuses a call whose hook exits non-zero must get exit 0 even on a usage error.
  const named = argv.find((a) => !a.startsWith('-'));
  try {
    const parsed = hookOptions(argv);
    options = parsed.values;
    if (options.help) return { stdout: HOOK_USAGE, stderr: '', exitCode: 0 };
    const [name, ...extra] = parsed.positionals;
    const found = name === undefined ? undefined : hookedAgent(name);
    if (found === undefined) throw new Error(`the agent must be one of ${HOOKED_AGENTS.map((a) => a.id).join(', ')}${name === undefined ? '' : `, not ${JSON.stringify(name)}`}`);
    if (extra.length > 0) throw new Error(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (options['deny-with'] !== undefined && options['deny-with'] !== 'json' && options['deny-with'] !== 'exit2') throw new Error('--deny-with must be json or exit2');
    agent = found;
  } catch (err) {
    // Exit 1: a usage error must not block the agent (exit 2 would); 0 for agents that read any non-zero exit as a refusal.
    const failClosed = named !== undefined && hookedAgent(named)?.hook.registration.failClosed === true;
    return { stdout: '', stderr: `loop-guardian hook: ${(err as Error).message}\n\n${HOOK_USAGE}`, exitCode: failClosed ? 0 : 1 };
  }
  const style = (options['deny-with'] ?? 'json') as DenyStyle;
  let ws: Workspace | undefined;
  const notes: string[] = [];
  // The agent the call is from: the one named, unless its payload says another that shares its hook file.
  let who: HookedAgent = agent;
  const log = (level: 'WARN' | 'ERROR', message: string) => {
    // Written at once (a synchronous append that refuses a FIFO in the log's place); a failure to
    // write it never changes the decision.
    if (ws) void new GuardianLog(ws).write(level, message).catch(() => undefined);
  };
  const allow = (): HookReply => agent.hook.allow(notes.length > 0 ? notes.map((n) => `loop-guardian hook ${who.id}: ${n}`).join('\n') : undefined);
  const failOpen = (what: string): HookReply => {
    const message = `${what}; the call is allowed (fail-open)`;
    log('ERROR', `hook ${who.id}: ${message}`);
    notes.push(message);
    return allow();
  };
  let parsed: HookCall | undefined;
  // `end`: the agent's run is ended as well where it can be (STOP; a halt the agent keeps retrying).
  const refuse = (verdict: { reason: string; why?: string }, what: string, end = verdict.why === 'stop'): HookReply => {
    if (end && style === 'json' && parsed !== undefined && agent.hook.endsLater?.(parsed) === true && ws !== undefined && !safely(() => handoverFailed(ws as Workspace, who.id, (parsed as HookCall).session), true)) {
      // No decision here: the agent's permission request for this very call refuses it and ends the
      // run. Recorded, so that a call that runs instead is seen (then this session's refusals are given at once).
      const handed = safely(() => (recordHandover(ws as Workspace, who.id, (parsed as HookCall).session, (parsed as HookCall).tool ?? ''), true), false);
      if (handed) {
        log('WARN', `hook ${who.id}: ${what}: to be refused, and the run ended, at the agent's permission request: ${verdict.reason}`);
        return agent.hook.allow();
      }
    }
    // Where the run is to end and the agent does not end it for this call, the model is asked to end its turn.
    const refusal = denyReply(agent.hook, verdict.reason, style, parsed, end, verdict.why !== undefined ? `${verdict.reason} ${CANNOT_END}` : verdict.reason);
    if (refusal === undefined) {
      // A prompt this agent (or the dialect it called in) cannot refuse: recorded, and said.
      log('WARN', `hook ${who.id}: would refuse ${what}, but this agent cannot refuse a prompt: ${verdict.reason}`);
      notes.push(`${what} cannot be refused here: ${verdict.reason}`);
      return allow();
    }
    // Said as it is: "ended the run" only where the agent ends it on this reply (its protocol says, per event and call).
    const outcome = refusal.ends ? ' and ended the run' : end && parsed?.phase !== 'prompt' ? ` (the run goes on: ${who.id} does not end it from its ${parsed?.event ?? 'hook'} hook${parsed?.tool !== undefined ? ` for ${parsed.tool}` : ''}; the model is asked to end its turn)` : '';
    log('WARN', `hook ${who.id}: refused ${what}${outcome}: ${verdict.reason}`);
    if (verdict.why === 'loop' && ws !== undefined) publishInBackground(io.env, ws.root);
    return refusal.reply;
  };

  // STOP_ALL of the project named without stdin (option, environment) is read at once, before
  // stdin: a STOP there refuses the call even if stdin never comes.
  const given = namedProject(agent, options.workspace, io.env, io.cwd);
  const earlyStop = typeof given === 'string' ? readStopAllInForceSync(given) : undefined;

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<HookReply>((resolve) => {
    timer = setTimeout(() => {
      const verdict = earlyStop ? stopGate(earlyStop.state, undefined, []) : undefined;
      resolve(verdict ? refuse(verdict, 'a call (no decision in time, STOP_ALL says STOP)') : failOpen(`no decision within ${HOOK_DEADLINE_MS} ms`));
    }, HOOK_DEADLINE_MS);
  });

  const work = (async (): Promise<HookReply> => {
    let call: HookCall | { problem: string };
    try {
      // A refusal known before stdin never depends on Node's internals (cli/stdinHandle.ts).
      call = agent.hook.parse(JSON.parse(await io.readStdin({ streamOnly: earlyStop !== undefined && earlyStop.state.status !== 'CLEAR' })));
    } catch (err) {
      call = { problem: `stdin is not a hook call (${(err as Error).message})` };
    }
    const known = 'problem' in call ? undefined : call;
    parsed = known;
    if (known?.caller !== undefined) who = hookedAgent(known.caller) ?? agent;
    const root = given === null ? undefined : (given ?? findProject(resolvePath(io.cwd, known?.cwd ?? '.'), projectClues(io.env)));
    // 1. STOP first: the project's, or an enclosing project's.
    const stop = root === undefined ? undefined : (earlyStop ?? readStopAllInForceSync(root));
    if (root !== undefined) ws = new Workspace(root);
    if (stop && !stop.parse.ok) {
      notes.push(`${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR`);
      log('WARN', `hook ${who.id}: ${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR`);
    }
    const beforeCall = known === undefined || known.phase === 'pre' || known.phase === 'prompt' || known.phase === 'permission';
    if (stop && beforeCall) {
      const stopped = stopGate(stop.state, undefined, []);
      if (stopped) {
        // A permission request refused under STOP settles a refusal handed to it.
        if (known?.phase === 'permission' && ws !== undefined) safely(() => recordHandover(ws as Workspace, who.id, known.session, known.tool ?? '', 'done'), undefined);
        return refuse(stopped, `${known?.phase === 'prompt' ? 'a prompt' : (known?.tool ?? 'a call')} in session ${known?.session ?? '?'}`);
      }
    }
    if (known === undefined) return failOpen((call as { problem: string }).problem);
    // Another agent running this agent's hook file (one agent reading another's settings): its
    // call, recorded as its own; where its own entry is in place too, that entry alone decides.
    const foreign = agent.hook.foreignCaller?.(io.env, known);
    const other = foreign === undefined ? undefined : hookedAgent(foreign);
    if (other !== undefined) {
      if (ws !== undefined && registersGuardian(ws, other)) return allow();
      who = other;
    }
    if (ws === undefined) {
      notes.push(`no project found (no ${PROJECT_MARKERS.join(' or ')} above ${resolvePath(io.cwd, known.cwd ?? '.')}, no project folder in the environment): nothing recorded`);
      return allow();
    }
    // The agent asks to run a call its pre-call hook let through: refused, and the run ended, when
    // that hook recorded it as refused (its refusal handed here, `endsLater`).
    if (known.phase === 'permission') {
      const refused = handedOver(ws, hookLogPath(who.id, known.session), known);
      if (refused === undefined) return allow();
      safely(() => recordHandover(ws as Workspace, who.id, known.session, known.tool ?? '', 'done'), undefined);
      return refuse({ reason: refused, why: 'loop' }, `${known.tool ?? 'a call'} in session ${known.session}`, true);
    }
    const prompt = known.phase === 'prompt' && known.prompt !== undefined ? { ...known, prompt: known.prompt } : undefined;
    // An agent that cannot refuse a prompt is left alone: its own log has the prompt, and a record
    // here would make the session look hooked, so that its transcript (its failed requests) would
    // no longer be read.
    if (prompt !== undefined && agent.hook.denyPrompt?.('', known) === undefined) return allow();
    const tool = known.tool;
    // Calls whose outcome the hook has not recorded are settled from the transcript first: always
    // for an agent that writes outcomes only there; before a call or a prompt for one whose
    // after-call records run in the background (they may not have come yet).
    const settles =
      known.transcript !== undefined &&
      (agent.hook.outcomeInTranscript === true ? known.phase !== 'other' || (agent.hook.settleEvents ?? []).includes(known.event) : (agent.hook.registration.background ?? []).length > 0 && (known.phase === 'pre' || known.phase === 'prompt'));
    if (prompt === undefined && !settles && (known.phase === 'other' || tool === undefined)) return allow();
    const workspace = ws;
    // 2. The configuration, within a budget: PAUSE must still refuse delegations when it cannot be read.
    const config = await withTimeout(
      hookConfig(workspace, (m) => log('WARN', m)),
      CONFIG_BUDGET_MS,
      undefined,
    );
    if (stop && known.phase === 'pre' && tool !== undefined) {
      const paused = stopGate(stop.state, tool, config?.hooks.delegationTools ?? DEFAULT_DELEGATION_TOOLS);
      if (paused) return refuse(paused, `${tool} in session ${known.session}`);
    }
    if (config === undefined) return failOpen('the configuration could not be read in time');
    // 3. The session's history, under its lock.
    // Recorded under the agent that called, which may not be the entry's (agents that share one
    // hook entry): its log and its transcript are read with that agent's readers.
    const caller = who;
    const rel = hookLogPath(caller.id, known.session);
    const state = stop?.state ?? { status: 'CLEAR' as const };
    return withSessionLock(
      workspace,
      rel,
      async () => {
        // An agent that writes its calls' outcomes only to its transcript: the calls it left unsettled first.
        if (settles) await settleFromTranscript(caller, workspace, rel, known.transcript as string);
        // An agent that rejects some calls before its hook: those its transcript holds are recorded,
        // and a loop among them is refused at this call, the first the hook is asked about since.
        const unseen = caller.hook.unseenInTranscript !== undefined && known.transcript !== undefined ? await recordUnseen(caller, workspace, rel, known.session, known.transcript) : new Set<string>();
        if (unseen.size > 0 && (prompt !== undefined || (known.phase === 'pre' && tool !== undefined))) {
          const verdict = gateModule().unseenLoopVerdict(readHookTail(workspace.path(rel), rel), unseen, config, prompt !== undefined ? 'prompt' : 'call');
          if (!verdict.allow) return refuse(verdict, `${prompt !== undefined ? 'a prompt' : tool} in session ${known.session} (a loop its hook never saw)`, true);
        }
        if (prompt === undefined && (known.phase === 'other' || tool === undefined)) return allow();
        if (prompt !== undefined) {
          const verdict = await beforePrompt(caller, workspace, rel, prompt, state, config);
          return verdict.allow ? allow() : refuse(verdict, `a prompt in session ${known.session}`);
        }
        const named = { ...known, tool: tool as string };
        if (known.phase === 'post' && safely(() => settleHandover(workspace, caller.id, known.session, named.tool), false)) {
          // The call whose refusal was handed over to its permission request ran: the agent did not ask.
          log('ERROR', `hook ${caller.id}: ${named.tool} in session ${known.session} ran without the permission request its refusal was handed to; this session's refusals are given before the call from now on`);
        }
        if (known.phase !== 'pre') {
          // Where the outcome is only in the transcript, the next hook call records it (settleFromTranscript).
          if (agent.hook.outcomeInTranscript !== true) after(caller, workspace, rel, named, agent, (agent.hook.registration.background ?? []).includes(known.event));
          return allow();
        }
        const { verdict, persisting } = before(caller, workspace, rel, named, state, config);
        return verdict.allow ? allow() : refuse(verdict, `${named.tool} in session ${known.session}`, verdict.why === 'stop' || persisting);
      },
      LOCK_TIMEOUT_MS,
    );
  })().catch((err: unknown) => failOpen(err instanceof LockTimeoutError ? err.message : `error: ${(err as Error).message ?? String(err)}`));
  try {
    return await Promise.race([work, deadline]);
  } finally {
    if (timer) clearTimeout(timer);
    // This agent's hook ran here: `status` tells a hook that runs from one that never does. After
    // the decision, and never changing it.
    if (ws !== undefined && parsed !== undefined) {
      try {
        recordHeartbeat(ws, { agent: who.id, session: parsed.session, event: parsed.event });
      } catch {
        // A heartbeat that cannot be written is only a status left older.
      }
    }
  }
}

declare const __BUNDLED__: boolean | undefined;

/** The engine and its detectors (hookGate.ts), loaded when a call or a prompt must be replayed. */
function gateModule(): typeof HookGate {
  return bundledModule<typeof HookGate>('cli-gate.js', 'hookGate');
}

/** The agents' transcript readers (hookTurn.ts), loaded before a prompt. */
function turnModule(): typeof HookTurn {
  return bundledModule<typeof HookTurn>('cli-turn.js', 'hookTurn');
}

/** A bundle of its own, from its code cache; the module itself where nothing is bundled (tests on out/). */
function bundledModule<T>(bundle: string, module: string): T {
  const bundled = typeof __BUNDLED__ === 'boolean' && __BUNDLED__;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return bundled ? requireWithCodeCache<T>(join(__dirname, bundle)) : (require(join(__dirname, module)) as T);
}

function newId(): string {
  return `lg-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** What the hook records for a call it refused as a loop: trying it again goes on counting, and says it was refused. */
export const REFUSED_PREFIX = 'Refused by Loop Guardian';

/**
 * Before a call: the gate's verdict over the session's history, and the call recorded (bounded
 * and masked: what the gate compares is what is recorded, so repeats still look alike).
 * `persisting`: the call is one the guardian has already refused as a loop in this session, and
 * the agent asks for it again: its refusal did not change the agent's course, so its run is ended
 * where the agent allows it.
 */
function before(agent: HookedAgent, ws: Workspace, rel: string, call: HookCall & { tool: string }, stop: StopState, config: GuardianConfig): { verdict: GateVerdict; persisting: boolean } {
  const args = boundedArgs(call.input);
  // A call whose attempt cannot be in the log is allowed by quickVerdict whatever the log holds: not parsed.
  const history = readHookTail(ws.path(rel), rel, (text) => mayRepeatIn(text, { tool: call.tool, args }, config));
  const ts = new Date().toISOString();
  const base = { v: 1 as const, ts, session: call.session, agent: agent.eventAgent };
  const input = { history, call: { tool: call.tool, args, session: call.session, agent: base.agent, ts }, stop, config };
  const verdict = quickVerdict(input) ?? gateModule().judgeByReplay(input);
  let persisting = false;
  if (verdict.allow) appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args, id: call.id ?? newId() });
  else if (verdict.why === 'loop') {
    const canon = new Canonicalizer(config.volatileKeys, config.volatileArgs);
    const attempt = attemptKey(canon, call.tool, args);
    persisting = history.some(({ event: e }) => e.type === 'tool' && e.ok === false && e.error?.startsWith(REFUSED_PREFIX) === true && e.tool === call.tool && attemptKey(canon, e.tool, e.args ?? {}) === attempt);
    // The refused call is recorded as a failed one: trying it again goes on counting. With the
    // agent's id for it, where it gives one: the agent's transcript holds the call too, and is read
    // only for calls the hook never saw (without, each refused call was counted twice).
    appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args, ...(call.id !== undefined ? { id: call.id } : {}), ok: false, error: `${REFUSED_PREFIX} (${verdict.finding?.signal ?? 'loop'})` });
  }
  return { verdict, persisting };
}

/** How much of a transcript's end is looked through for calls the hook never saw (as `unseenCalls` reads it). */
const TRANSCRIPT_TAIL_BYTES = 256 * 1024;
/** How long reading the agent's transcript for the previous turn may take. */
const TRANSCRIPT_BUDGET_MS = 500;
/** What a previous turn's record in the hook log holds beyond the calls: any of them, and it is recorded. */
const TURN_RECORDED = new Set(['reply', 'api_error', 'delegation', 'delegation_result']);

/**
 * Before a prompt: what the previous turn left in the agent's transcript (where stdin names it) is
 * recorded first, once: its last answer, so that the gate compares answers, and its failed model
 * requests and delegations, which the hook sees no other way (and which, the session being
 * recorded here, are not read from the transcript). Then the gate's verdict, and the prompt
 * recorded (refused or not: sending it again goes on counting).
 */
async function beforePrompt(agent: HookedAgent, ws: Workspace, rel: string, call: HookCall & { prompt: string }, stop: StopState, config: GuardianConfig): Promise<GateVerdict> {
  let history = readHookTail(ws.path(rel), rel);
  const ts = new Date().toISOString();
  const base = { v: 1 as const, ts, session: call.session, agent: agent.eventAgent };
  const lastPrompt = history.map((e) => e.event.type).lastIndexOf('prompt');
  const recorded = lastPrompt >= 0 && history.slice(lastPrompt + 1).some((e) => TURN_RECORDED.has(e.event.type));
  const { jsonlTranscript, previousTurn } = turnModule();
  const adapter = jsonlTranscript(agent.id);
  if (lastPrompt >= 0 && !recorded && call.transcript !== undefined && adapter !== undefined) {
    const turn = await withTimeout<PreviousTurn>(previousTurn(call.transcript, adapter, call.prompt), TRANSCRIPT_BUDGET_MS, { events: [] });
    for (const e of turn.events) appendEvent(ws, rel, { ...e, session: call.session, agent: agent.eventAgent } as GuardianEvent);
    if (turn.reply !== undefined) appendEvent(ws, rel, { ...base, type: 'reply', text: boundedText(turn.reply) });
    if (turn.reply !== undefined || turn.events.length > 0) history = readHookTail(ws.path(rel), rel);
  }
  const text = boundedText(call.prompt);
  const verdict = gateModule().promptGate({ history, prompt: { text, session: call.session, agent: base.agent, ts }, stop, config });
  appendEvent(ws, rel, { ...base, type: 'prompt', text });
  return verdict;
}

/** Whether an agent's own hook file in the workspace runs the guardian (a small file, read at once). */
function registersGuardian(ws: Workspace, agent: HookedAgent): boolean {
  try {
    const file = ws.path(agent.hook.registration.settingsFile);
    return statSync(file).size < 1024 * 1024 && /loop-guardian/.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

/** `fn`'s value, or `fallback` where it throws (a state file that cannot be read or written never changes a decision). */
function safely<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** What the model reads where the agent cannot be ended from its hook: it is asked to end its turn itself. */
const CANNOT_END = 'Loop Guardian cannot end this run from its hook: end your turn now, without another tool call, and tell the person what happened.';

/**
 * Whether the call an agent asks permission for is the one its pre-call hook just recorded as
 * refused (its refusal handed over to the permission request): the session's last record is a
 * refusal of the same tool, with every argument the request names equal. The reason to give, or
 * undefined.
 */
function handedOver(ws: Workspace, rel: string, call: HookCall): string | undefined {
  const last = readHookTail(ws.path(rel), rel).at(-1)?.event;
  if (last === undefined || last.type !== 'tool' || last.ok !== false || last.error?.startsWith(REFUSED_PREFIX) !== true || last.tool !== call.tool) return undefined;
  const args = last.args ?? {};
  const same = Object.entries(call.input).every(([k, v]) => JSON.stringify(args[k]) === JSON.stringify(v));
  return same ? `Loop Guardian ended this run: ${call.tool} was refused as a loop (${last.error.slice(REFUSED_PREFIX.length).trim()}) and asked for again. Change the approach, or ask the person.` : undefined;
}

/** How long reading the agent's transcript for calls' outcomes may take. */
const SETTLE_BUDGET_MS = 500;

/**
 * Records how the session's recorded calls that have no outcome yet ended, from the end of the
 * agent's transcript (an agent whose protocol has `outcomeInTranscript` writes a call's output, with its exit code, only once its hook has
 * returned): their results are appended in the transcript's order, before the call being judged.
 * Calls the transcript does not show yet stay open; a transcript that cannot be read changes nothing.
 */
async function settleFromTranscript(agent: HookedAgent, ws: Workspace, rel: string, transcript: string): Promise<void> {
  const history = readHookTail(ws.path(rel), rel);
  const answered = new Set(history.flatMap((e) => (e.event.type === 'tool_result' ? [e.event.id] : [])));
  const open = new Set(history.flatMap((e) => (e.event.type === 'tool' && e.event.id !== undefined && e.event.ok === undefined && !answered.has(e.event.id) ? [e.event.id] : [])));
  if (open.size === 0) return;
  // Where the agent's results name their call (`resultIds`), a transcript's end that names none of the open calls settles nothing: its readers stay unloaded.
  const pattern = agent.hook.unseenInTranscript?.resultIds;
  if (pattern !== undefined) {
    const tail = safely(() => readTailTextSync(openRegularFileSync(transcript), TRANSCRIPT_TAIL_BYTES).text, '');
    if (![...tail.matchAll(pattern)].some((m) => m[1] !== undefined && open.has(m[1]))) return;
  }
  const { jsonlTranscript, transcriptResults } = turnModule();
  const adapter = jsonlTranscript(agent.id);
  if (adapter === undefined) return;
  const found = await withTimeout(transcriptResults(transcript, adapter, open), SETTLE_BUDGET_MS, []);
  const ts = new Date().toISOString();
  const done = new Set<string>();
  for (const e of found) {
    if (e.type !== 'tool_result' && e.type !== 'tool') continue;
    const id = e.id;
    if (id === undefined || done.has(id)) continue;
    done.add(id);
    const fields = e.ok === false ? { ok: false, error: boundedText(e.error ?? 'failed') } : { ok: true, output: boundedValue(e.output ?? null) };
    appendEvent(ws, rel, { v: 1, ts, session: history[history.length - 1]?.event.session ?? '', agent: agent.eventAgent, type: 'tool_result', id, ...fields } as GuardianEvent);
  }
}

/**
 * Records the session's calls its hook never saw (`unseenInTranscript`), from the end of the
 * agent's transcript: settled calls whose ids the session's log does not hold, each as one call
 * with its outcome, at its own time. Their ids; none where the transcript cannot be read in time.
 */
async function recordUnseen(agent: HookedAgent, ws: Workspace, rel: string, session: string, transcript: string): Promise<Set<string>> {
  const history = readHookTail(ws.path(rel), rel);
  const known = new Set(history.flatMap((e) => (e.event.type === 'tool' || e.event.type === 'tool_result') && e.event.id !== undefined ? [e.event.id] : []));
  // Most calls have nothing unseen: the end of the transcript names no result the log lacks, and the readers stay unloaded.
  const pattern = agent.hook.unseenInTranscript?.resultIds;
  const tail = safely(() => readTailTextSync(openRegularFileSync(transcript), TRANSCRIPT_TAIL_BYTES).text, '');
  if (pattern === undefined || ![...tail.matchAll(pattern)].some((m) => m[1] !== undefined && !known.has(m[1]))) return new Set();
  const { jsonlTranscript, unseenCalls } = turnModule();
  const adapter = jsonlTranscript(agent.id);
  if (adapter === undefined) return new Set();
  const found = await withTimeout(unseenCalls(transcript, adapter, session, known, history[0]?.event.ts), TRANSCRIPT_BUDGET_MS, []);
  const ids = new Set<string>();
  for (const e of found) {
    if (e.id === undefined || ids.has(e.id)) continue;
    ids.add(e.id);
    const fields = e.ok === false ? { ok: false, error: boundedText(e.error ?? 'failed') } : { ok: true, output: boundedValue(e.output ?? null) };
    appendEvent(ws, rel, { v: 1, ts: e.ts ?? new Date().toISOString(), session, agent: agent.eventAgent, type: 'tool', tool: e.tool, args: boundedArgs(e.args ?? {}), id: e.id, ...fields } as GuardianEvent);
  }
  return ids;
}

/** After a call: its outcome (read in the shape of the protocol that parsed it), bounded and masked, paired with the recorded call. */
function after(agent: HookedAgent, ws: Workspace, rel: string, call: HookCall & { tool: string }, parser: HookedAgent, background = false): void {
  const outcome = outcomeOf(parser.hook, call);
  const base = { v: 1 as const, ts: new Date().toISOString(), session: call.session, agent: agent.eventAgent };
  const fields = outcome.ok ? { ok: true, output: boundedValue(outcome.output) } : { ok: false, error: boundedText(outcome.error) };
  const args = boundedArgs(call.input);
  let id = call.id;
  // Run in the background, this record may come after the next call settled it from the transcript: not made twice.
  if (background && id !== undefined && readHookTail(ws.path(rel), rel).some((e) => e.event.type === 'tool_result' && e.event.id === id)) return;
  if (id === undefined) {
    // No id from the agent (not every agent sends one): the oldest unanswered call of the same tool and arguments.
    const history = readHookTail(ws.path(rel), rel);
    const answered = new Set(history.flatMap((e) => (e.event.type === 'tool_result' ? [e.event.id] : [])));
    const same = JSON.stringify(args);
    const open = history.find((e) => e.event.type === 'tool' && e.event.id !== undefined && e.event.ok === undefined && !answered.has(e.event.id) && e.event.tool === call.tool && JSON.stringify(e.event.args ?? {}) === same);
    id = open?.event.type === 'tool' ? open.event.id : undefined;
  }
  if (id !== undefined) appendEvent(ws, rel, { ...base, type: 'tool_result', id, ...fields } as GuardianEvent);
  // Without a recorded call (the hook was not installed before it), the call and its outcome in one event.
  else appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args, ...fields } as GuardianEvent);
}

/**
 * stdin as text, at most MAX_STDIN_BYTES. A file is read at once. A pipe, what is in it at once,
 * without waiting (through a second, non-blocking opening of it): when its writer has closed it,
 * that is all of it, and no stream is loaded (its loading was a good part of the hook's time).
 * Otherwise (a pipe still open, a socket: the stdin of agents that run on Node) the rest through
 * the event loop, never by a blocking read on a worker thread, which would keep the process from
 * exiting: a stdin that never ends cannot hold the hook past its deadline. On the event loop
 * through libuv's own handle where Node allows it (cli/stdinHandle.ts: no `net`, about 5 ms less),
 * else, or with `streamOnly`, through `process.stdin`.
 */
export function readStdin({ streamOnly = false }: { streamOnly?: boolean } = {}): Promise<string> {
  let head: Buffer | undefined;
  try {
    const st = fstatSync(0);
    if (st.isFile()) return Promise.resolve(readFileSync(0, 'utf8'));
    if (st.isFIFO()) {
      const now = readPipeNow();
      if (now.ended) return Promise.resolve(now.bytes.toString('utf8'));
      head = now.bytes;
    }
  } catch (err) {
    if (err instanceof StdinTooLargeError) return Promise.reject(err);
    // No usable stdin descriptor, or the pipe cannot be opened again (no /proc): read as a stream below.
  }
  // The handle takes fd 0 only when it is a socket or a pipe (its own check): a terminal, or no
  // usable descriptor, goes to the stream.
  const byHandle = streamOnly ? undefined : readStdinByHandle(MAX_STDIN_BYTES, () => new StdinTooLargeError(), head);
  return byHandle ?? readToEnd(process.stdin, 'stdin', MAX_STDIN_BYTES, head);
}

class StdinTooLargeError extends Error {
  constructor() {
    super(`stdin: more than ${MAX_STDIN_BYTES} bytes`);
  }
}

/**
 * What the stdin pipe holds now, read through a non-blocking opening of it of its own (Linux:
 * /proc/self/fd/0; fd 0 itself stays as it is): `ended` when its writer has closed it (a read
 * returns 0); otherwise what came before the pipe ran empty (EAGAIN) or a read failed.
 */
function readPipeNow(): { bytes: Buffer; ended: boolean } {
  const fd = openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(64 * 1024);
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch {
        // EAGAIN: the writer has not written the rest yet. Any other error: the stream will say.
        return { bytes: Buffer.concat(chunks, total), ended: false };
      }
      if (n === 0) return { bytes: Buffer.concat(chunks, total), ended: true };
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > MAX_STDIN_BYTES) throw new StdinTooLargeError();
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * With an OTLP endpoint configured, a loop the hook refuses is published as OpenTelemetry (its
 * incident, as `scan` sends it: src/watch/incidentExport.ts) by a `scan` started apart, detached,
 * its output dropped: the agent's call is answered at once, whatever the endpoint does (a slow or
 * unreachable endpoint never holds up the refusal). Only from the shipped CLI, whose path is this
 * process's script; a failure to start is nothing the agent hears of. Not while another publisher
 * is at work in the workspace (its lock): refusals in quick succession start one, not one each.
 */
function publishInBackground(env: NodeJS.ProcessEnv, root: string): void {
  const script = process.argv[1];
  if (!exportConfigured(env) || script === undefined || !/(?:^|[\\/])cli\.js$/.test(script) || publisherBusy(root)) return;
  try {
    // Required here only: loading child_process loads net, which the hook otherwise never does.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [script, 'scan', '--workspace', root], { detached: true, stdio: 'ignore', env: { ...env, LOOP_GUARDIAN_OTEL_SOURCE: 'hook' } });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Not published: the refusal stands.
  }
}
