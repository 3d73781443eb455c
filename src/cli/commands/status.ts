import { renderBlockedStatus } from '../../core/blockedSummary';
import { BlockedTaskRegistry } from '../../state/blockedTaskRegistry';
import { StopAllFile } from '../../state/stopAllFile';
import { PATHS } from '../../state/workspace';
import { agentEnforcement, ENFORCEMENT_WORDS, type AgentEnforcement } from '../../watch/enforcement';
import type { CommandContext } from '../context';
import { EXIT, json, paint, type Io } from '../io';

/** "3 min ago", for a time in the past. */
function ago(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}


function agentLines(io: Io, a: AgentEnforcement, now: number): string[] {
  const mark = a.state === 'enforced' ? paint(io, 'green', '✓') : a.state === 'not-running' || a.state === 'off' || a.state === 'unseen' ? paint(io, 'red', '✗') : '·';
  const when = a.state === 'enforced' && a.lastCall ? ` (its hook ran ${ago(Date.parse(a.lastCall.ts), now)})` : a.lastWork !== undefined && a.state !== 'enforced' ? ` (worked here ${ago(a.lastWork, now)})` : '';
  const lines = [`  ${mark} ${a.label.padEnd(26)} ${ENFORCEMENT_WORDS[a.state]}${when}`];
  for (const p of a.problems) lines.push(`      ${p.cause}`, `      → ${p.fix}`);
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
  for (const p of read.problems) ctx.io.err(`warning: ${p}\n`);
  if (!stop.parse.ok) ctx.io.err(`warning: ${PATHS.stopAll}: ${stop.parse.error}; read as CLEAR\n`);
  if (ctx.json) {
    ctx.io.out(json({ workspace: ctx.ws.root, stopAll: stop.state, agents: agents.map(({ id, label, state, lastCall, lastWork, problems, hookFile, transcripts, watched }) => ({ id, label, state, lastCall, lastWork, problems, hookFile, transcripts, watched })), blocked: read.tasks }));
    return EXIT.ok;
  }
  const now = Date.now();
  const s = stop.state;
  const stopLine = s.status === 'CLEAR' ? 'CLEAR (agents run)' : `${paint(ctx.io, 'red', s.status)}${s.timestamp ? ` since ${s.timestamp}` : ''}${s.reason ? ` (${s.reason})` : ''}`;
  const unprotected = agents.filter((a) => a.state === 'not-running' || a.state === 'off');
  const lines = [
    `Loop Guardian in ${ctx.ws.root}`,
    `STOP_ALL: ${stopLine}`,
    '',
    agents.length === 0 ? 'Agents: none has worked here yet, as far as their files tell.' : 'Agents:',
    ...agents.flatMap((a) => agentLines(ctx.io, a, now)),
    ...(unprotected.length > 0 ? ['', paint(ctx.io, 'red', `Not protected: ${unprotected.map((a) => a.label).join(', ')}. A loop there runs on until you stop it.`)] : []),
    '',
  ];
  ctx.io.out(`${lines.join('\n')}\n${renderBlockedStatus(read.tasks, PATHS.summaries)}`);
  return EXIT.ok;
}
