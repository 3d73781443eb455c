import { statSync } from 'node:fs';
import * as path from 'node:path';
import type { GuardianConfig } from '../core/config';
import { formatProblem, loadConfig } from '../state/configFile';
import { GuardianLog } from '../state/guardianLog';
import { Workspace } from '../state/workspace';
import { UsageError, type Io } from './io';

export interface CommandContext {
  readonly io: Io;
  readonly ws: Workspace;
  readonly config: GuardianConfig;
  readonly json: boolean;
  readonly log: GuardianLog;
}

export function openWorkspace(io: Io, dir: string | undefined): Workspace {
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
export async function commandContext(io: Io, options: { workspace?: string; json?: boolean }, configFile?: string): Promise<CommandContext> {
  const ws = openWorkspace(io, options.workspace);
  const rel = configFile === undefined ? undefined : path.relative(ws.root, path.resolve(io.cwd, configFile));
  const loaded = await loadConfig(ws, rel);
  for (const p of loaded.problems) io.err(`${p.level === 'error' ? 'error' : 'warning'}: ${formatProblem(loaded.file, p)}\n`);
  return { io, ws, config: loaded.config, json: options.json === true, log: new GuardianLog(ws) };
}
