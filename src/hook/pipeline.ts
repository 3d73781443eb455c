import { readFileSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { GuardianConfig } from '../core/config';
import { DEFAULT_DELEGATION_TOOLS } from '../core/defaults';
import type { StopState } from '../core/stopAll';
import { stopGate } from '../core/verdict';
import type { DenyStyle, HookCall, HookReply } from '../agents/hook';
import { HOOK_REGISTRATION_FILES, hookedAgent, type HookedAgent } from '../agents/hooks';
import { LockTimeoutError } from '../state/atomicFile';
import { recordHeartbeat } from '../state/heartbeat';
import { hookConfig, hookLogPath, readHookTail, withSessionLock } from '../state/hookLog';
import { readStopAllInForceSync } from '../state/stopAllFile';
import { findProject, PATHS, PROJECT_MARKERS, Workspace, type ProjectClues } from '../state/workspace';
import { HookAnswers } from './answer';
import { withTimeout } from './bounded';
import { handedOver, handoverDone, ranWithoutPermission } from './handover';
import { gateModule } from './modules';
import { after, before } from './record';
import { withTerminalExit } from './terminalExit';
import { beforePrompt, recordUnseen, settleFromTranscript } from './transcript';

/*
 * The hook, as a pipeline: parse → STOP → judge → record → answer. Each agent's protocol
 * (src/agents/<agent>/hook.ts) parses its call and gives its answers; what differs between agents
 * along the way is said in that protocol (calls settled from the transcript, calls the agent
 * rejected before its hook, a refusal handed over to a permission request, another agent calling
 * through this one's hook file) and done by the steps here that read it.
 */

export interface HookIo {
  /** `streamOnly`: through Node's public stream, never through libuv's handle (cli/stdinHandle.ts). */
  readStdin(opts?: { streamOnly?: boolean }): Promise<string>;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

export interface HookRequest {
  /** The agent whose hook entry ran. */
  readonly agent: HookedAgent;
  readonly style: DenyStyle;
  /** `--workspace`, as given. */
  readonly workspace?: string;
  readonly io: HookIo;
}

/** How long the hook may take before it lets the call run anyway (or refuses it, when STOP is known). */
const HOOK_DEADLINE_MS = 3000;
const LOCK_TIMEOUT_MS = 1500;
/** How long the configuration may take to load before PAUSE falls back to the default delegation tools. */
const CONFIG_BUDGET_MS = 1500;

/**
 * One hook call answered; never throws. STOP_ALL is read first, bounded and non-blocking, before
 * any lock, log, configuration or cache is touched: when it says STOP, the call is refused whatever
 * else fails. On any other failure of its own the hook lets the call run and says so; past its
 * deadline too (refusing, when a STOP was read in time).
 */
export async function answerHook(req: HookRequest): Promise<HookReply> {
  const answers = new HookAnswers(req.agent, req.style, req.io.env);
  // STOP_ALL of the project named without stdin (option, environment) is read at once, before
  // stdin: a STOP there refuses the call even if stdin never comes.
  const given = namedProject(req.agent, req.workspace, req.io.env, req.io.cwd);
  const earlyStop = typeof given === 'string' ? readStopAllInForceSync(given) : undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<HookReply>((resolve) => {
    timer = setTimeout(() => {
      const verdict = earlyStop ? stopGate(earlyStop.state, undefined, []) : undefined;
      resolve(verdict ? answers.refuse(verdict, 'a call (no decision in time, STOP_ALL says STOP)') : answers.failOpen(`no decision within ${HOOK_DEADLINE_MS} ms`));
    }, HOOK_DEADLINE_MS);
  });
  const work = decide(req, answers, given, earlyStop).catch((err: unknown) => answers.failOpen(err instanceof LockTimeoutError ? err.message : `error: ${(err as Error).message ?? String(err)}`));
  try {
    return await Promise.race([work, deadline]);
  } finally {
    if (timer) clearTimeout(timer);
    // This agent's hook ran here: `status` tells a hook that runs from one that never does. After
    // the decision, and never changing it.
    const { ws, call, who } = answers;
    if (ws !== undefined && call !== undefined) {
      try {
        recordHeartbeat(ws, { agent: who.id, session: call.session, event: call.event });
      } catch {
        // A heartbeat that cannot be written is only a status left older.
      }
    }
  }
}

type Stop = ReturnType<typeof readStopAllInForceSync> | undefined;

async function decide(req: HookRequest, answers: HookAnswers, given: string | null | undefined, earlyStop: Stop): Promise<HookReply> {
  const { agent, io } = req;
  // 1. Parse.
  const call = await parse(req, earlyStop);
  const known = 'problem' in call ? undefined : call;
  answers.call = known;
  if (known?.caller !== undefined) answers.who = hookedAgent(known.caller) ?? agent;
  const root = given === null ? undefined : (given ?? findProject(resolvePath(io.cwd, known?.cwd ?? '.'), projectClues(io.env)));
  // 2. STOP first: the project's, or an enclosing project's.
  const stop = root === undefined ? undefined : (earlyStop ?? readStopAllInForceSync(root));
  if (root !== undefined) answers.ws = new Workspace(root);
  const stopped = stopFirst(answers, known, stop);
  if (stopped !== undefined) return stopped;
  if (known === undefined) return answers.failOpen((call as { problem: string }).problem);
  // Another agent running this agent's hook file (one agent reading another's settings): its
  // call, recorded as its own; where its own entry is in place too, that entry alone decides.
  const foreign = agent.hook.foreignCaller?.(io.env, known);
  const other = foreign === undefined ? undefined : hookedAgent(foreign);
  if (other !== undefined) {
    if (answers.ws !== undefined && registersGuardian(answers.ws, other)) return answers.allow();
    answers.who = other;
  }
  const ws = answers.ws;
  if (ws === undefined) {
    answers.note(`no project found (no ${PROJECT_MARKERS.join(' or ')} above ${resolvePath(io.cwd, known.cwd ?? '.')}, no project folder in the environment): nothing recorded`);
    return answers.allow();
  }
  // The agent asks to run a call its pre-call hook let through: refused, and the run ended, when
  // that hook handed its refusal here (handover.ts).
  if (known.phase === 'permission') {
    const refused = handedOver(ws, hookLogPath(answers.who.id, known.session), known);
    if (refused === undefined) return answers.allow();
    handoverDone(ws, answers.who, known);
    return answers.refuse({ reason: refused, why: 'loop' }, `${known.tool ?? 'a call'} in session ${known.session}`, true);
  }
  const step = stepOf(agent, known);
  if (step === undefined) return answers.allow();
  // 3. The configuration, within a budget: PAUSE must still refuse delegations when it cannot be read.
  const config = await withTimeout(
    hookConfig(ws, (m) => answers.log('WARN', m)),
    CONFIG_BUDGET_MS,
    undefined,
  );
  if (stop && known.phase === 'pre' && known.tool !== undefined) {
    const paused = stopGate(stop.state, known.tool, config?.hooks.delegationTools ?? DEFAULT_DELEGATION_TOOLS);
    if (paused) return answers.refuse(paused, `${known.tool} in session ${known.session}`);
  }
  if (config === undefined) return answers.failOpen('the configuration could not be read in time');
  // 4 and 5. Judged and recorded over the session's history, under its lock.
  const state = stop?.state ?? { status: 'CLEAR' as const };
  const rel = hookLogPath(answers.who.id, known.session);
  return withSessionLock(ws, rel, () => judgeAndRecord({ agent, caller: answers.who, ws, rel, call: known, step, state, config, answers }), LOCK_TIMEOUT_MS);
}

/** stdin, read as the agent's hook call; or what is wrong with it. */
async function parse(req: HookRequest, earlyStop: Stop): Promise<HookCall | { problem: string }> {
  try {
    // A refusal known before stdin never depends on Node's internals (cli/stdinHandle.ts).
    return req.agent.hook.parse(JSON.parse(await req.io.readStdin({ streamOnly: earlyStop !== undefined && earlyStop.state.status !== 'CLEAR' })));
  } catch (err) {
    return { problem: `stdin is not a hook call (${(err as Error).message})` };
  }
}

/** Under STOP, a call or a prompt about to run (or one not understood) is refused; what could not be read is said. */
function stopFirst(answers: HookAnswers, known: HookCall | undefined, stop: Stop): HookReply | undefined {
  if (stop === undefined) return undefined;
  if (!stop.parse.ok) {
    answers.note(`${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR`);
    answers.log('WARN', `hook ${answers.who.id}: ${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR`);
  }
  const beforeCall = known === undefined || known.phase === 'pre' || known.phase === 'prompt' || known.phase === 'permission';
  const stopped = beforeCall ? stopGate(stop.state, undefined, []) : undefined;
  if (!stopped) return undefined;
  // A permission request refused under STOP settles a refusal handed to it.
  if (known?.phase === 'permission' && answers.ws !== undefined) handoverDone(answers.ws, answers.who, known);
  return answers.refuse(stopped, `${known?.phase === 'prompt' ? 'a prompt' : (known?.tool ?? 'a call')} in session ${known?.session ?? '?'}`);
}

/** What a call asks of the hook past STOP: nothing (undefined), or a prompt to judge, a call to judge or record, and whether the session's open calls are settled from the transcript first. */
interface Step {
  readonly prompt: (HookCall & { prompt: string }) | undefined;
  readonly settles: boolean;
}

function stepOf(agent: HookedAgent, call: HookCall): Step | undefined {
  const prompt = call.phase === 'prompt' && call.prompt !== undefined ? { ...call, prompt: call.prompt } : undefined;
  // An agent that cannot refuse a prompt is left alone: its own log has the prompt, and a record
  // here would make the session look hooked, so that its transcript (its failed requests) would
  // no longer be read.
  if (prompt !== undefined && agent.hook.denyPrompt?.('', call) === undefined) return undefined;
  // Calls whose outcome the hook has not recorded are settled from the transcript first: always
  // for an agent that writes outcomes only there; before a call or a prompt for one whose
  // after-call records run in the background (they may not have come yet), or that runs no
  // after-call hook for a failed call (its failure is in the transcript only).
  const settles =
    call.transcript !== undefined &&
    (agent.hook.outcomeInTranscript === true
      ? call.phase !== 'other' || (agent.hook.settleEvents ?? []).includes(call.event)
      : ((agent.hook.registration.background ?? []).length > 0 || agent.hook.failuresInTranscript === true) && (call.phase === 'pre' || call.phase === 'prompt'));
  if (prompt === undefined && !settles && (call.phase === 'other' || call.tool === undefined)) return undefined;
  return { prompt, settles };
}

interface Judging {
  /** The agent whose hook entry ran (its protocol answers, and says how outcomes come). */
  readonly agent: HookedAgent;
  /** The agent that called (it may share the entry): its log and its transcript. */
  readonly caller: HookedAgent;
  readonly ws: Workspace;
  readonly rel: string;
  readonly call: HookCall;
  readonly step: Step;
  readonly state: StopState;
  readonly config: GuardianConfig;
  readonly answers: HookAnswers;
}

async function judgeAndRecord({ agent, caller, ws, rel, call, step, state, config, answers }: Judging): Promise<HookReply> {
  const tool = call.tool;
  // An agent that writes its calls' outcomes only to its transcript: the calls it left unsettled first.
  if (step.settles) await settleFromTranscript(caller, ws, rel, call.transcript as string);
  // An agent that rejects some calls before its hook: those its transcript holds are recorded,
  // and a loop among them is refused at this call, the first the hook is asked about since.
  const unseen = caller.hook.unseenInTranscript !== undefined && call.transcript !== undefined ? await recordUnseen(caller, ws, rel, call.session, call.transcript) : new Set<string>();
  if (unseen.size > 0 && (step.prompt !== undefined || (call.phase === 'pre' && tool !== undefined))) {
    const verdict = gateModule().unseenLoopVerdict(readHookTail(ws.path(rel), rel), unseen, config, step.prompt !== undefined ? 'prompt' : 'call');
    if (!verdict.allow) return answers.refuse(verdict, `${step.prompt !== undefined ? 'a prompt' : tool} in session ${call.session} (a loop its hook never saw)`, true);
  }
  if (step.prompt !== undefined) {
    const verdict = await beforePrompt(caller, ws, rel, step.prompt, state, config);
    return verdict.allow ? answers.allow() : answers.refuse(verdict, `a prompt in session ${call.session}`);
  }
  if (call.phase === 'other' || tool === undefined) return answers.allow();
  const named = { ...call, tool };
  if (call.phase === 'post' && ranWithoutPermission(ws, caller, named)) {
    answers.log('ERROR', `hook ${caller.id}: ${tool} in session ${call.session} ran without the permission request its refusal was handed to; this session's refusals are given before the call from now on`);
  }
  if (call.phase !== 'pre') {
    // Where the outcome is only in the transcript, the next hook call records it (settleFromTranscript).
    // A terminal command's exit code the payload leaves out, from the editor's shell integration (terminalExit.ts).
    if (agent.hook.outcomeInTranscript !== true) after(caller, ws, rel, withTerminalExit(agent, caller, ws, rel, named), agent, (agent.hook.registration.background ?? []).includes(call.event));
    return answers.allow();
  }
  const { verdict, persisting } = before(caller, ws, rel, named, state, config);
  return verdict.allow ? answers.allow() : answers.refuse(verdict, `${tool} in session ${call.session}`, verdict.why === 'stop' || persisting);
}

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
 * Undefined when none is named.
 */
function namedProject(agent: HookedAgent, option: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | null | undefined {
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

/** Whether an agent's own hook file in the workspace runs the guardian (a small file, read at once). */
function registersGuardian(ws: Workspace, agent: HookedAgent): boolean {
  try {
    const file = ws.path(agent.hook.registration.settingsFile);
    return statSync(file).size < 1024 * 1024 && /loop-guardian/.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}
