import type { AgentWithHook } from '../agents';
import { mergeHookSettings, SettingsShapeError } from '../agents/hookSettings';
import { parseJson } from '../core/json';
import { readTextIfExists, withFileLock } from './atomicFile';
import type { Workspace } from './workspace';

export interface InstallResult {
  readonly file: string;
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

/** The command an agent runs: `node "<this CLI>" hook <agent>`. */
export function hookCommand(cliPath: string, agent: AgentWithHook): string {
  return `node ${JSON.stringify(cliPath)} hook ${agent.id}`;
}
