import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import { AGENTS, HOOK_AGENTS, type NotRunning, type TrustScope } from '../agents';
import type { GuardianConfig } from '../core/config';
import { latestHeartbeats, type Heartbeat } from '../state/heartbeat';
import { launcherPath } from '../state/launcher';
import { readRegularBounded } from '../state/regularFile';
import { isWithin, registersGuardianIn, type Workspace } from '../state/workspace';
import type { LocatedEvent } from '../core/events';
import { unseenLoopVerdict } from '../core/unseenLoop';
import { hookLogPath, readHookTail } from '../state/hookLog';
import { findAgents, type FoundAgent } from './foundAgents';
import { unseenCalls } from './transcriptTail';

/*
 * Whether each agent in a folder is protected (issue 24): a hook that an agent does not run looks,
 * from the outside, exactly like a hook that runs and finds nothing. The hooks leave a heartbeat
 * (state/heartbeat.ts); the agents' transcripts say when they last worked here; the agents' own
 * settings say what trust they still ask for; the launcher must be there for the hook to start.
 */

export type EnforcementState =
  /** Its hook runs: a heartbeat at least as new as its latest work here. */
  | 'enforced'
  /** Its hook is registered, but the agent worked here since without running it, or something its files tell stands in the way. */
  | 'not-running'
  /** Its hook runs, but a loop ran that it never saw (calls the agent rejects before its hook: its transcript holds them), and no hook call has come since to refuse it. */
  | 'unseen'
  /** Its hook is registered, and no call has come yet, nor any work here since. */
  | 'installed'
  /** No hook, but its transcripts are read: loops are shown, not stopped. */
  | 'watched'
  /** Neither hooked nor watched. */
  | 'off';

/** An agent found in the folder (`findAgents`), with how well it is protected. */
export interface AgentEnforcement extends FoundAgent {
  readonly state: EnforcementState;
  /** The hook's newest heartbeat here. */
  readonly lastCall?: Heartbeat;
  /** For `not-running`: why, and what to do; for `installed`: what would keep it from running. */
  readonly problems: readonly NotRunning[];
}

/** A transcript written this long after the last heartbeat shows work the hook did not see (a transcript lags its calls by a few seconds). */
const SLACK_MS = 60_000;

async function launcherProblems(env: NodeJS.ProcessEnv): Promise<NotRunning[]> {
  const file = launcherPath(env);
  const read = await readRegularBounded(file, 64 * 1024).catch(() => undefined);
  if (read?.kind !== 'text') {
    return [{ cause: `the launcher ${file} is missing on this machine, so the hook lets every call through`, fix: 'run `loop-guardian init <agent>` here, or "Loop Guardian: Install the Agent Hook…" in VS Code' }];
  }
  const cli = /^cli='((?:[^']|'\\'')*)'$/m.exec(read.text)?.[1]?.replace(/'\\''/g, "'");
  if (cli !== undefined && (await fs.stat(cli).catch(() => undefined)) === undefined) {
    return [{ cause: `the launcher ${file} starts ${cli}, which is gone (an update or a removed checkout), so the hook lets every call through`, fix: 'run `loop-guardian init <agent>` again, or open VS Code with the extension' }];
  }
  return [];
}

/** What the agents' trust checks read: the workspace, the home, the environment, bounded reads of their files. */
function trustScope(ws: Workspace, env: NodeJS.ProcessEnv): TrustScope {
  return {
    root: ws.root,
    home: env.HOME ?? os.homedir(),
    env,
    readText: async (file) => {
      const read = await readRegularBounded(file, 1024 * 1024).catch(() => undefined);
      return read?.kind === 'text' ? read.text : undefined;
    },
    realPath: (file) => fs.realpath(file).catch(() => file),
    within: isWithin,
  };
}

/** Each agent that has worked in the folder or is set up in it, with how well it is protected. */
export async function agentEnforcement(ws: Workspace, config: GuardianConfig, env: NodeJS.ProcessEnv = process.env, editorStorage?: string): Promise<AgentEnforcement[]> {
  const found = await findAgents(ws, config, env, editorStorage);
  const beats = await latestHeartbeats(ws);
  let launcher: NotRunning[] | undefined;
  const scope = trustScope(ws, env);
  const out: AgentEnforcement[] = [];
  for (const f of found) {
    const agent = AGENTS.find((a) => a.id === f.id);
    const lastCall = beats.get(f.id);
    const base = { ...f, ...(lastCall ? { lastCall } : {}) };
    if (!f.hooked) {
      out.push({ ...base, state: f.watched ? 'watched' : 'off', problems: [] });
      continue;
    }
    launcher ??= await launcherProblems(env);
    const problems = [...launcher, ...((await agent?.hookTrust?.(scope)) ?? [])];
    const called = lastCall === undefined ? undefined : Date.parse(lastCall.ts);
    const since = Math.max(called ?? 0, f.hookedSince ?? 0);
    const unseenWork = f.lastWork !== undefined && f.lastWork > since + SLACK_MS;
    const unseen = called !== undefined && !unseenWork && agent?.hook?.unseenInTranscript !== undefined ? await unseenLoop(ws, config, f) : undefined;
    let state: EnforcementState;
    if (unseen !== undefined) {
      out.push({ ...base, state: 'unseen', problems: [unseen] });
      continue;
    }
    if (called !== undefined && !unseenWork) state = 'enforced';
    else if (unseenWork || problems.length > 0) state = 'not-running';
    else state = 'installed';
    const shown =
      state === 'not-running' && problems.length === 0
        ? [{ cause: `${f.label} worked here after its hook last ran (its transcript is newer), so the hook did not see those calls`, fix: `check that ${f.label} reads ${f.hookFile ?? 'its hook settings'} in this folder, and run \`loop-guardian init ${f.id}\` again` }]
        : state === 'enforced'
          ? []
          : problems;
    out.push({ ...base, state, problems: shown });
  }
  return out;
}

/**
 * A loop in one of the agent's newest hooked sessions that its hook never saw: the session's calls
 * its transcript holds and its hook log lacks (`unseenCalls`, as the hook reads them), judged with
 * the session's record by the engine (`unseenLoopVerdict`). What to tell, or undefined.
 */
async function unseenLoop(ws: Workspace, config: GuardianConfig, f: FoundAgent): Promise<NotRunning | undefined> {
  const transcript = AGENTS.find((a) => a.id === f.id)?.transcript;
  if (transcript?.layout !== 'jsonl') return undefined;
  for (const t of f.recent ?? []) {
    if (t.session === undefined) continue;
    const rel = hookLogPath(f.id, t.session);
    let history: LocatedEvent[];
    try {
      history = readHookTail(ws.path(rel), rel);
    } catch {
      continue;
    }
    if (history.length === 0) continue;
    const known = new Set(history.flatMap((e) => ((e.event.type === 'tool' || e.event.type === 'tool_result') && e.event.id !== undefined ? [e.event.id] : [])));
    const unseen = await unseenCalls(t.file, transcript, t.session, known, history[0]?.event.ts).catch(() => []);
    if (unseen.length === 0) continue;
    const last = history[history.length - 1] as LocatedEvent;
    const located = unseen.map((event, i) => ({ event, ref: { file: t.file, line: last.ref.line + i + 1, event: last.ref.event + i + 1 } }));
    const verdict = unseenLoopVerdict([...history, ...located], new Set(unseen.flatMap((e) => (e.id !== undefined ? [e.id] : []))), config);
    if (verdict.allow) continue;
    return {
      cause: `${f.label} ran a loop its hook never saw, in session ${t.session} (${verdict.finding?.signal ?? 'loop'}: ${verdict.finding?.message ?? ''}): it rejects such calls before its hook runs, and no hook call has come since`,
      fix: `its next hook call refuses it and ends the run; to stop it now, \`loop-guardian stop\``,
    };
  }
  return undefined;
}

/** The state in a few words, as the CLI and the editor say it. */
export const ENFORCEMENT_WORDS: Readonly<Record<EnforcementState, string>> = {
  enforced: 'enforced',
  'not-running': 'installed but not running',
  unseen: 'its hook runs, but a loop ran that it never saw',
  installed: 'installed (no call seen yet)',
  watched: 'watched only: loops are shown, not stopped',
  off: 'not protected',
};

/** Whether a STOP written in a project reaches an agent found there, and why not. */
export interface StopReach {
  readonly id: string;
  readonly label: string;
  readonly reached: boolean;
  /** Why not (watched only, not hooked, its hook not running); for a reached agent, where it is not (a subfolder it reads no hook from). */
  readonly note?: string;
}

/**
 * Which agents of a project a STOP there reaches, from what is registered, quickly (a STOP must
 * not wait for transcripts to be found): those whose hook is registered in its settings and can
 * run (it reads STOP_ALL before every call, with the launcher or, without it, by itself), and which
 * it cannot: a hook its agent does not run (trust), and agents only watched. For one that runs its
 * hook only when started at the project's root (`fromSubfolder`), where it is not reached.
 */
export async function stopReach(ws: Workspace, config: GuardianConfig, env: NodeJS.ProcessEnv = process.env): Promise<StopReach[]> {
  const scope = trustScope(ws, env);
  const out: StopReach[] = [];
  for (const agent of AGENTS) {
    const base = { id: agent.id, label: agent.label };
    const reg = HOOK_AGENTS.find((h) => h.id === agent.id)?.hook.registration;
    const files = reg === undefined ? [] : reg.layout === 'script' ? [`${reg.settingsFile}/${reg.events[0] ?? ''}`] : [reg.settingsFile, ...(reg.migrateFrom ?? [])];
    if (reg !== undefined && registersGuardianIn(ws.root, { registrations: files })) {
      const trust = (await agent.hookTrust?.(scope)) ?? [];
      if (trust.length > 0) out.push({ ...base, reached: false, note: `its hook does not run: ${trust.map((p) => p.cause).join('; ')}` });
      else out.push(reg.fromSubfolder?.runs === false ? { ...base, reached: true, note: `only when started in ${ws.root} itself: from a subfolder it runs no hook` } : { ...base, reached: true });
    } else if (config.agents[agent.id]?.enabled === true) {
      out.push({ ...base, reached: false, note: reg === undefined ? 'watched only: its loops are shown, it cannot be refused' : `watched only, no hook: run \`loop-guardian init ${agent.id}\`` });
    }
  }
  return out;
}
