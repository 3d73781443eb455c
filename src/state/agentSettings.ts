import { promises as fs } from 'node:fs';
import type { AgentWithHook } from '../agents';
import { mergeHookScript, mergeHookSettings, registeredCommand, removeHookSettings, sameCommands, SettingsShapeError } from '../agents/hookSettings';
import { jsonWhere, parseJson } from '../core/json';
import { readTextIfExists, withFileLock } from './atomicFile';
import type { Workspace } from './workspace';

export interface InstallResult {
  /** The settings file that runs the hook now (or the folder of the hook files), relative to the workspace. */
  readonly file: string;
  /** The hook files, for an agent whose hooks are files (one per event). */
  readonly files?: readonly string[];
  readonly added: readonly string[];
  readonly updated: readonly string[];
  readonly created: boolean;
  /** Files an earlier registration was moved out of, with the events it was on (others' entries stay). */
  readonly moved: readonly { readonly file: string; readonly events: readonly string[] }[];
  /** The file was added to the clone's `.git/info/exclude`. */
  readonly excluded: boolean;
}

/** A settings file's JSON, undefined when it is missing or empty; refused (named, with its line) when it is not JSON. */
async function readSettings(file: string, rel: string): Promise<{ text: string | undefined; value: unknown }> {
  const text = await readTextIfExists(file);
  if (text === undefined || text.trim() === '') return { text, value: undefined };
  // A settings file nested too deep is refused like one that is not JSON: it could not be written back.
  const parsed = parseJson(text);
  if (!parsed.ok) {
    const where = parsed.at ? jsonWhere(parsed.at) : '(file)';
    throw new SettingsShapeError(rel, where, parsed.tooDeep ? `is ${parsed.error}` : `is not valid JSON (${parsed.error})`);
  }
  return { text, value: parsed.value };
}

const serialise = (settings: unknown) => `${JSON.stringify(settings, null, 2)}\n`;

/**
 * Takes the guardian's entries for an agent out of a file an earlier `init` wrote them to. Returns
 * the events they were on, or `'current'` when the file already runs `command` itself (then it
 * stays the registration: nothing is moved or added).
 */
async function migrate(ws: Workspace, agent: AgentWithHook, rel: string, command: string): Promise<readonly string[] | 'current'> {
  const reg = agent.hook.registration;
  const file = await ws.resolveForWrite(rel);
  return withFileLock(file, async () => {
    const { value } = await readSettings(file, rel);
    const found = registeredCommand(value, agent.id, reg);
    if (found === undefined) return [];
    if (sameCommands(command, agent.id, reg).includes(found)) return 'current';
    const { settings, removed } = removeHookSettings(value, agent.id, reg, rel);
    if (removed.length > 0) await ws.writeAtomic(rel, serialise(settings));
    return removed;
  });
}

/** Adds a file to the clone's own ignore list (`.git/info/exclude`), which is never committed; only in a plain clone (`.git` a folder). */
export async function excludeFromGit(ws: Workspace, rel: string): Promise<boolean> {
  const st = await fs.stat(ws.path('.git')).catch(() => undefined);
  if (!st?.isDirectory()) return false;
  const line = `/${rel}`;
  const exclude = '.git/info/exclude';
  const text = (await readTextIfExists(ws.path(exclude))) ?? '';
  if (text.split(/\r?\n/).includes(line)) return false;
  await ws.append(exclude, `${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`);
  return true;
}

/**
 * Registers the guardian's hook in the settings file of an agent, merged with what is there (see
 * `mergeHookSettings`), written atomically; a file that is not valid JSON is left alone. An
 * earlier registration in another of the agent's files (`migrateFrom`) is moved, unless it
 * already runs this very command.
 */
export async function installHook(ws: Workspace, agent: AgentWithHook, command: string, windows?: string): Promise<InstallResult> {
  const reg = agent.hook.registration;
  if (reg.layout === 'script') return installHookScripts(ws, agent, command);
  const moved: { file: string; events: readonly string[] }[] = [];
  for (const legacy of reg.migrateFrom ?? []) {
    const events = await migrate(ws, agent, legacy, command);
    if (events === 'current') return { file: legacy, added: [], updated: [], created: false, moved, excluded: false };
    if (events.length > 0) moved.push({ file: legacy, events });
  }
  const rel = reg.settingsFile;
  const file = await ws.resolveForWrite(rel);
  const result = await withFileLock(file, async () => {
    const { text, value } = await readSettings(file, rel);
    const merged = mergeHookSettings(value, agent.id, reg, command, rel, windows);
    if (merged.added.length > 0 || merged.updated.length > 0) await ws.writeAtomic(rel, serialise(merged.settings));
    return { file: rel, added: merged.added, updated: merged.updated, created: text === undefined };
  });
  const excluded = reg.gitIgnored === true && result.created ? await excludeFromGit(ws, rel) : false;
  return { ...result, moved, excluded };
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
  return { file: reg.settingsFile, files: rels.map((r) => r.rel), added, updated, created: before.every((b) => b.existing === undefined), moved: [], excluded: false };
}
