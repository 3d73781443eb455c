import { renderBlockedStatus } from '../../core/blockedSummary';
import { BlockedTaskRegistry } from '../../state/blockedTaskRegistry';
import { HOOK_AGENTS } from '../../agents';
import { readStopAllInForceSync, StopAllFile } from '../../state/stopAllFile';
import { PATHS } from '../../state/workspace';
import { agentEnforcement, ENFORCEMENT_WORDS, type AgentEnforcement } from '../../watch/enforcement';
import type { CommandContext } from '../context';
import { nestedRepositoryLines } from './stopAll';
import { EXIT, json, paint, type Io } from '../io';

/** "3 min ago", for a time in the past. */
function ago(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}


/** For a hooked agent that reads its hook only in the folder it starts in: where its hook does not run, and the fix. */
function startFolderOnly(a: AgentEnforcement, root: string): string | undefined {
  const sub = HOOK_AGENTS.find((h) => h.id === a.id)?.hook.registration.fromSubfolder;
  if (!a.hooked || sub?.runs !== false) return undefined;
  return `its hook runs only when ${a.label} is started in ${root} itself: started in a subfolder it reads no hook, so neither a loop nor STOP stops it there (${sub.source})`;
}

function agentLines(io: Io, a: AgentEnforcement, now: number, root: string): string[] {
  const mark = a.state === 'enforced' ? paint(io, 'green', '✓') : a.state === 'not-running' || a.state === 'off' || a.state === 'unseen' ? paint(io, 'red', '✗') : '·';
  const when = a.state === 'enforced' && a.lastCall ? ` (its hook ran ${ago(Date.parse(a.lastCall.ts), now)})` : a.lastWork !== undefined && a.state !== 'enforced' ? ` (worked here ${ago(a.lastWork, now)})` : '';
  const lines = [`  ${mark} ${a.label.padEnd(26)} ${ENFORCEMENT_WORDS[a.state]}${when}`];
  for (const p of a.problems) lines.push(`      ${p.cause}`, `      → ${p.fix}`);
  const only = startFolderOnly(a, root);
  if (only !== undefined) lines.push(`      ${only}`, `      → start it in ${root}, or run \`loop-guardian init ${a.id} --workspace <subfolder>\` for each subfolder you start it in`);
  if (a.state === 'watched' || a.state === 'off') {
    if (a.hookFile !== undefined) lines.push(`      → to stop its loops: loop-guardian init ${a.id}`);
  }
  return lines;
}

/**
 * What a person asks first: STOP_ALL, whether each agent that works here is protected (its hook
 * running, installed but not running, watched only, or not at all), and the blocked tasks (seed
 * 003's `status`, as before).
 */
export async function statusCommand(ctx: CommandContext): Promise<number> {
  const [stop, agents, read] = await Promise.all([new StopAllFile(ctx.ws).read(), agentEnforcement(ctx.ws, ctx.config), new BlockedTaskRegistry(ctx.ws).list()]);
  // A STOP_ALL above the project that says more holds for its agents too (the hook reads it).
  const inForce = readStopAllInForceSync(ctx.ws.root);
  const above = inForce.at !== ctx.ws.root ? inForce : undefined;
  for (const p of read.problems) ctx.io.err(`warning: ${p}\n`);
  if (!stop.parse.ok) ctx.io.err(`warning: ${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR\n`);
  if (ctx.json) {
    ctx.io.out(
      json({
        workspace: ctx.ws.root,
        stopAll: stop.state,
        ...(above !== undefined ? { stopAllAbove: { ...above.state, workspace: above.at } } : {}),
        agents: agents.map((a) => {
          const { id, label, state, lastCall, lastWork, problems, hookFile, transcripts, watched } = a;
          const only = startFolderOnly(a, ctx.ws.root);
          return { id, label, state, lastCall, lastWork, problems, hookFile, transcripts, watched, ...(only !== undefined ? { fromSubfolder: only } : {}) };
        }),
        blocked: read.tasks,
      }),
    );
    return EXIT.ok;
  }
  const now = Date.now();
  const s = stop.state;
  const stopLine = s.status === 'CLEAR' ? 'CLEAR (agents run)' : `${paint(ctx.io, 'red', s.status)}${s.timestamp ? ` since ${s.timestamp}` : ''}${s.reason ? ` (${s.reason})` : ''}`;
  const aboveLine = above === undefined ? [] : [`  and ${paint(ctx.io, 'red', above.state.status)} in the enclosing ${above.at}${above.state.timestamp ? ` since ${above.state.timestamp}` : ''}${above.state.reason ? ` (${above.state.reason})` : ''}: it holds for every agent here`];
  const unprotected = agents.filter((a) => a.state === 'not-running' || a.state === 'off');
  const lines = [
    `Loop Guardian in ${ctx.ws.root}`,
    `STOP_ALL: ${stopLine}`,
    ...aboveLine,
    ...nestedRepositoryLines(ctx.io.cwd, ctx.ws),
    '',
    agents.length === 0 ? 'Agents: none has worked here yet, as far as their files tell.' : 'Agents:',
    ...agents.flatMap((a) => agentLines(ctx.io, a, now, ctx.ws.root)),
    ...(unprotected.length > 0 ? ['', paint(ctx.io, 'red', `Not protected: ${unprotected.map((a) => a.label).join(', ')}. A loop there runs on until you stop it.`)] : []),
    '',
  ];
  ctx.io.out(`${lines.join('\n')}\n${renderBlockedStatus(read.tasks, PATHS.summaries)}`);
  return EXIT.ok;
}
