import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { HOOK_AGENTS, hookAgent, type AgentWithHook } from '../../agents';
import { hookCommand } from '../../agents/hookSettings';
import { excludeFromGit, installHook } from '../../state/agentSettings';
import { installLauncher, windowsCommandFor, type LauncherResult } from '../../state/launcher';
import { GUARDIAN_DIR, markProject } from '../../state/workspace';
import type { CommandContext } from '../context';
import { EXIT, json, nearest, UsageError } from '../io';

/** The CLI as the launcher should start it: this very file, wherever it is installed. */
function thisCli(): string {
  const entry = process.argv[1] ?? path.join(__dirname, 'cli.js');
  try {
    return realpathSync(entry);
  } catch {
    return path.resolve(entry);
  }
}

/**
 * The agent registered in its team's settings file instead of the person's own: for an agent whose
 * hook `init` puts in a git-ignored file of one person (`registration.gitIgnored`), the shared file
 * it would otherwise move a registration out of (its `migrateFrom`), to be committed, so that every clone of the branch runs the hook (a cloud agent's too: STOP reaches it
 * even where the guardian is not installed). Other agents' files are shared already.
 */
function sharedRegistration(agent: AgentWithHook): AgentWithHook {
  const reg = agent.hook.registration;
  const shared = reg.gitIgnored === true ? reg.migrateFrom?.[0] : undefined;
  if (shared === undefined) return agent;
  return { ...agent, hook: { ...agent.hook, registration: { ...reg, settingsFile: shared, migrateFrom: [], gitIgnored: false } } };
}

/**
 * Registers the hook: the per-user launcher is pointed at this install, and the agent's settings
 * run the launcher (a command that works on every machine and after updates). `--command` registers
 * a command of the person's choosing instead, and leaves the launcher alone.
 */
export async function initCommand(ctx: CommandContext, agent: string | undefined, opts: { command?: string; shared?: boolean }): Promise<number> {
  const found = agent === undefined ? undefined : hookAgent(agent);
  const target = found !== undefined && opts.shared === true ? sharedRegistration(found) : found;
  if (target === undefined) {
    const ids = HOOK_AGENTS.map((a) => a.id);
    const near = agent === undefined ? undefined : nearest(agent, ids);
    throw new UsageError(agent === undefined ? `init needs the agent: ${ids.join(', ')}` : `unknown agent "${agent}"${near !== undefined ? `; did you mean '${near}'?` : ''} The agents with a hook are ${ids.join(', ')}`);
  }
  let launcher: LauncherResult | undefined;
  if (opts.command === undefined) launcher = await installLauncher({ cli: thisCli(), node: process.execPath });
  const command = opts.command ?? hookCommand(target.id, target.hook);
  const result = await installHook(ctx.ws, target, command, opts.command === undefined ? windowsCommandFor(target) : undefined);
  // The hook's records go under .tmp/: the clone's own ignore list keeps them out of `git status`.
  const tmpExcluded = await excludeFromGit(ctx.ws, '.tmp/');
  // The hook of an agent started in a subfolder or a nested repository finds the project by it.
  const marked = await markProject(ctx.ws);
  const subfolder = target.hook.registration.fromSubfolder;
  const startHere = subfolder?.runs === false ? `${target.label} runs this hook only when started in ${ctx.ws.root} itself: it reads ${result.file} in the folder it starts in, not above it. For a subfolder you start it in, run \`loop-guardian init ${target.id} --workspace <subfolder>\` too (that hook still records here and reads this STOP_ALL).` : undefined;
  const moved = result.moved.map((m) => `moved from ${m.file} (${m.events.join(', ')})`);
  await ctx.log.write(
    'INFO',
    `init ${target.id}: ${result.file}: added ${result.added.join(', ') || 'nothing'}; updated ${result.updated.join(', ') || 'nothing'}${moved.length > 0 ? `; ${moved.join('; ')}` : ''}${launcher?.changed ? `; launcher ${launcher.path} written` : ''}`,
  );
  if (ctx.json) {
    ctx.io.out(json({ workspace: ctx.ws.root, agent: target.id, file: result.file, ...(result.files !== undefined ? { files: result.files } : {}), command, created: result.created, added: result.added, updated: result.updated, moved: result.moved, excluded: result.excluded, launcher: launcher?.path ?? null, launcherChanged: launcher?.changed ?? false, projectMarked: marked, runsFromSubfolder: subfolder?.runs ?? null }));
    return EXIT.ok;
  }
  const changed = result.added.length + result.updated.length > 0;
  const lines = [
    `In the project ${ctx.ws.root}:`,
    changed ? `${result.created ? 'Created' : 'Updated'} ${result.file}: the hook runs on ${[...result.added, ...result.updated].join(', ')}.` : `${result.file} already runs the hook: nothing to change.`,
    ...(changed ? [`  ${command}`] : []),
    ...result.moved.map((m) => `Moved the earlier registration out of ${m.file} (${m.events.join(', ')}); the rest of that file is unchanged.`),
    ...(result.excluded ? [`Added ${result.file} to .git/info/exclude: it is yours, not the team's.`] : []),
    ...(tmpExcluded ? ['Added .tmp/ (the guardian\'s records) to .git/info/exclude.'] : []),
    ...(marked ? [`Created ${GUARDIAN_DIR}/: it marks the project, so that the hook of an agent started in a subfolder or a nested repository, and stop, status and scan run there, all find ${ctx.ws.root}.`] : []),
    ...(startHere !== undefined ? [startHere] : []),
    ...(launcher !== undefined ? [`${launcher.changed ? (launcher.created ? 'Created' : 'Updated') : 'Checked'} the launcher ${launcher.path}: it starts ${thisCli()}.`] : []),
  ];
  ctx.io.out(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
