import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import type { GuardianConfig } from '../core/config';
import { formatProblem, loadConfig } from '../state/configFile';
import { GuardianLog } from '../state/guardianLog';
import { HOOK_REGISTRATION_FILES } from '../agents/hooks';
import { findProject, PROJECT_MARKERS, type ProjectClues, Workspace } from '../state/workspace';
import { UsageError, type Io } from './io';

export interface CommandContext {
  readonly io: Io;
  readonly ws: Workspace;
  readonly config: GuardianConfig;
  readonly json: boolean;
  readonly log: GuardianLog;
}

/** What finds the project above a folder, as the hook finds it: the guardian's folder, a registration of the hook (not in the user's home), the repository. */
export function projectClues(): ProjectClues {
  return { registrations: HOOK_REGISTRATION_FILES, home: homedir() };
}

/**
 * The workspace a command acts on: `--workspace DIR` as given; else the project the current folder
 * belongs to, found as the hook finds it (`findProject`: upward to `.github/guardian`, else to a
 * registration of the hook, else to `.git`), so that `stop` run in a subfolder or in a nested
 * repository writes the STOP_ALL the hook reads. Where there is no project,
 * a command that writes into one refuses (it would create `.github/` or `.tmp/` in a folder that is
 * no project); one that only reads takes the current folder.
 */
export function openWorkspace(io: Io, dir: string | undefined, writes = false): Workspace {
  if (dir === undefined) {
    const project = findProject(io.cwd, projectClues());
    if (project !== undefined) return new Workspace(project);
    if (writes) throw new UsageError(`no project here: no ${PROJECT_MARKERS.join(' or ')} in ${io.cwd} or above. Run it in your project (a git repository), or name it with --workspace DIR`);
  }
  const root = path.resolve(io.cwd, dir ?? '.');
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new UsageError(`--workspace ${dir ?? '.'}: ${root} is not a directory`);
  return new Workspace(root);
}

/** The workspace, its configuration (problems reported on stderr) and its log. */
export async function commandContext(io: Io, options: { workspace?: string; json?: boolean; writes?: boolean }, configFile?: string): Promise<CommandContext> {
  const ws = openWorkspace(io, options.workspace, options.writes === true);
  const rel = configFile === undefined ? undefined : path.relative(ws.root, path.resolve(io.cwd, configFile));
  const loaded = await loadConfig(ws, rel);
  for (const p of loaded.problems) io.err(`${p.level === 'error' ? 'error' : 'warning'}: ${formatProblem(loaded.file, p)}\n`);
  return { io, ws, config: loaded.config, json: options.json === true, log: new GuardianLog(ws) };
}
