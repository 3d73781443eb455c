import { promises as fs } from 'node:fs';
import type { AgentWithHook } from '../agents';
import { mergeHookScript, mergeHookSettings, SettingsShapeError } from '../agents/hookSettings';
import { parseJson } from '../core/json';
import { readTextIfExists, withFileLock } from './atomicFile';
import type { Workspace } from './workspace';

export interface InstallResult {
  /** The settings file written, or the folder of the hook files. */
  readonly file: string;
  /** The hook files, for an agent whose hooks are files (one per event). */
  readonly files?: readonly string[];
  readonly added: readonly string[];
  readonly updated: readonly string[];
  readonly created: boolean;
}

/**
 * Registers the guardian's hook in the project's settings file of an agent, merged with what is
 * there (see `mergeHookSettings`), written atomically; a file that is not valid JSON is left alone.
 */
export async function installHook(ws: Workspace, agent: AgentWithHook, command: string): Promise<InstallResult> {
  const reg = agent.hook.registration;
  if (reg.layout === 'script') return installHookScripts(ws, agent, command);
  const rel = reg.settingsFile;
  const file = await ws.resolveForWrite(rel);
  return withFileLock(file, async () => {
    const text = await readTextIfExists(file);
    let existing: unknown;
    if (text !== undefined && text.trim() !== '') {
      // A settings file nested too deep is refused like one that is not JSON: it could not be written back.
      const parsed = parseJson(text);
      if (!parsed.ok) {
        const where = parsed.at ? `line ${parsed.at.line}, column ${parsed.at.column}` : '(file)';
        throw new SettingsShapeError(rel, where, parsed.tooDeep ? `is ${parsed.error}` : `is not valid JSON (${parsed.error})`);
      }
      existing = parsed.value;
    }
    const merged = mergeHookSettings(existing, agent.id, reg, command, rel);
    if (merged.added.length > 0 || merged.updated.length > 0) await ws.writeAtomic(rel, `${JSON.stringify(merged.settings, null, 2)}\n`);
    return { file: rel, added: merged.added, updated: merged.updated, created: text === undefined };
  });
}

/** Executable by all who can read it. */
const SCRIPT_MODE = 0o755;

/**
 * Registers the guardian's hook for an agent whose hooks are files: one executable file per event
 * in the project's hook folder (see `mergeHookScript`), each written atomically. When another hook
 * file holds one of the names, nothing is written (SettingsShapeError, naming it).
 */
async function installHookScripts(ws: Workspace, agent: AgentWithHook, command: string): Promise<InstallResult> {
  const reg = agent.hook.registration;
  if (process.platform === 'win32') throw new SettingsShapeError(reg.settingsFile, '(folder)', `takes PowerShell hook files on Windows (<event>.ps1), which init does not write yet: make one that pipes its stdin to \`${command}\``);
  const rels = reg.events.map((event) => ({ event, rel: `${reg.settingsFile}/${event}` }));
  // Every name checked before any file is written: the hook is registered whole or not at all.
  const before = await Promise.all(rels.map(async ({ event, rel }) => ({ event, rel, existing: await readTextIfExists(await ws.resolveForWrite(rel)) })));
  for (const { event, rel, existing } of before) mergeHookScript(existing, agent.id, reg, event, command, rel);
  const added: string[] = [];
  const updated: string[] = [];
  for (const { event, rel } of rels) {
    const file = await ws.resolveForWrite(rel);
    await withFileLock(file, async () => {
      const merged = mergeHookScript(await readTextIfExists(file), agent.id, reg, event, command, rel);
      if (merged.change !== 'none') await ws.writeAtomic(rel, merged.text, { mode: SCRIPT_MODE });
      // The agent runs only a file its owner may execute: one that lost the bit gets it back.
      const mode = (await fs.stat(file)).mode & 0o7777;
      const fixed = (mode & 0o100) === 0;
      if (fixed) await fs.chmod(file, mode | 0o100);
      if (merged.change === 'added') added.push(event);
      else if (merged.change === 'updated' || fixed) updated.push(event);
    });
  }
  return { file: reg.settingsFile, files: rels.map((r) => r.rel), added, updated, created: before.every((b) => b.existing === undefined) };
}

/** The command an agent runs: `node "<this CLI>" hook <agent>`. */
export function hookCommand(cliPath: string, agent: AgentWithHook): string {
  return `node ${JSON.stringify(cliPath)} hook ${agent.id}`;
}
