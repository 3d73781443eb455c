import * as path from 'node:path';
import { HOOK_AGENTS } from '../../agents';
import type { StopStatus } from '../../core/stopAll';
import { loadConfig } from '../../state/configFile';
import { StopAllFile } from '../../state/stopAllFile';
import { nestedRepository, projectsOnPath, registersGuardianIn, Workspace } from '../../state/workspace';
import { stopReach, type StopReach } from '../../watch/enforcement';
import { projectClues, type CommandContext } from '../context';
import { EXIT, json } from '../io';

/**
 * The projects a `stop`, `pause` or `clear` writes: the command's workspace, and every other
 * guardian project on the path from where it was run up (a folder holding `.github/guardian` or a
 * registration of the hook): run in a nested repository or a subfolder, it reaches the agents of
 * the enclosing project as well as those of the nearest, and `clear` there lifts what it set.
 */
function projectsToWrite(ctx: CommandContext, named: boolean): Workspace[] {
  const roots = [ctx.ws.root, ...(named ? [] : projectsOnPath(ctx.io.cwd, projectClues()))];
  return [...new Set(roots)].map((root) => (root === ctx.ws.root ? ctx.ws : new Workspace(root)));
}

/** Which agents of a project a STOP reaches; nothing (rather than a failed stop) when they cannot be told. */
async function reachOf(ws: Workspace): Promise<StopReach[]> {
  try {
    return await stopReach(ws, (await loadConfig(ws)).config);
  } catch {
    return [];
  }
}

/**
 * Where the command runs in a nested repository (or submodule) of the project: agents started in
 * it run its own hooks, not the project's (seen live with each hooked agent: docs/agents.md), so
 * a STOP reaches them only through hooks registered there. Said, with the fix; none elsewhere.
 */
export function nestedRepositoryLines(cwd: string, ws: Workspace): string[] {
  const nested = nestedRepository(cwd, ws.root);
  if (nested === undefined) return [];
  const hooked = HOOK_AGENTS.filter((a) => {
    const reg = a.hook.registration;
    return registersGuardianIn(nested, { registrations: reg.layout === 'script' ? [`${reg.settingsFile}/${reg.events[0] ?? ''}`] : [reg.settingsFile] });
  });
  const rel = path.relative(ws.root, nested);
  return [
    `In the nested repository ${nested}: an agent started in it runs its hooks, not ${ws.root}'s.`,
    hooked.length > 0
      ? `  Hooked there: ${hooked.map((a) => a.label).join(', ')} (their hooks read this project's STOP_ALL too).`
      : `  None is hooked there: a STOP does not reach an agent started in it. To change that: loop-guardian init <agent> --workspace ${rel} (run at ${ws.root}; that hook reads this project's STOP_ALL).`,
  ];
}

function reachLines(reach: readonly StopReach[]): string[] {
  const reached = reach.filter((r) => r.reached);
  const missed = reach.filter((r) => !r.reached);
  return [
    reached.length > 0 ? `    reaches (their hooks read it before every call): ${reached.map((r) => r.label).join(', ')}` : '    reaches no hooked agent: none has its hook registered here',
    ...reached.filter((r) => r.note !== undefined).map((r) => `      ${r.label}: ${r.note}`),
    ...missed.map((r) => `    cannot reach ${r.label}: ${r.note}`),
  ];
}

/**
 * `stop`, `pause`, `clear`: writes the circuit-breaker file of the project, and of every project
 * enclosing it on the path, then says which it wrote and which agents there it reaches.
 */
export async function stopAllCommand(ctx: CommandContext, status: StopStatus, opts: { reason?: string; workspace?: string }): Promise<number> {
  const projects = projectsToWrite(ctx, opts.workspace !== undefined);
  const written: { ws: Workspace; file: string; state: Awaited<ReturnType<StopAllFile['write']>> }[] = [];
  // Every STOP_ALL first: what is said about the agents comes after, and can fail without undoing any.
  for (const ws of projects) {
    const file = new StopAllFile(ws);
    written.push({ ws, file: ws.path(file.relativePath), state: await file.write(status, opts.reason, 'loop-guardian cli') });
  }
  // STOP_ALL is on disk: a log that cannot be written is a warning, not a failed stop.
  const problem = await ctx.log.tryWrite(status === 'CLEAR' ? 'INFO' : 'WARN', `STOP_ALL set to ${status}${opts.reason ? `: ${opts.reason}` : ''}${written.length > 1 ? ` (also in ${written.slice(1).map((w) => w.ws.root).join(', ')})` : ''}`);
  if (problem !== undefined) ctx.io.err(`warning: ${problem}\n`);
  const reach = status === 'CLEAR' ? [] : await Promise.all(written.map((w) => reachOf(w.ws)));
  if (ctx.json) {
    const [first] = written;
    ctx.io.out(
      json({
        workspace: ctx.ws.root,
        file: new StopAllFile(ctx.ws).relativePath,
        ...first?.state,
        projects: written.map((w, i) => ({ workspace: w.ws.root, file: w.file, ...(reach[i] !== undefined ? { agents: reach[i] } : {}) })),
      }),
    );
    return EXIT.ok;
  }
  const lines = [
    ...written.flatMap((w, i) => [
    `STOP_ALL: ${w.state.status} ${w.state.timestamp}${opts.reason ? ` (${opts.reason})` : ''}, in ${w.file}`,
    ...(i === 0 && written.length > 1 ? [`  (and in the ${written.length - 1} other project(s) on the path from ${ctx.io.cwd}: an agent there reads its own project's file)`] : []),
    ...(reach[i] !== undefined ? reachLines(reach[i] as StopReach[]) : []),
    ]),
    ...(status === 'CLEAR' ? [] : nestedRepositoryLines(ctx.io.cwd, ctx.ws)),
  ];
  ctx.io.out(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
