import * as path from 'node:path';
import type { NotRunning, TrustScope } from '../agent';

/*
 * Gemini CLI runs a project's hooks (and reads its `.gemini/settings.json` at all) only in a
 * trusted folder (seen live with 0.61, ../shared/docs/live-agents.md). The rules are in
 * `~/.gemini/trustedFolders.json` (or `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`): `{"<abs path>":
 * "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`, the longest rule whose folder holds the
 * project deciding, a `TRUST_PARENT` rule standing for its path's parent
 * (google-gemini/gemini-cli `packages/cli/src/config/trustedFolders.ts`, `isPathTrusted`).
 * `security.folderTrust.enabled: false` in the user's settings turns the check off.
 */

function parse(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export async function geminiHookTrust(scope: TrustScope): Promise<readonly NotRunning[]> {
  const settings = parse(await scope.readText(path.join(scope.home, '.gemini', 'settings.json'))) as { security?: { folderTrust?: { enabled?: unknown } } } | undefined;
  if (settings?.security?.folderTrust?.enabled === false) return [];
  const file = scope.env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || path.join(scope.home, '.gemini', 'trustedFolders.json');
  const rules = parse(await scope.readText(file));
  const root = await scope.realPath(scope.root);
  let longest = -1;
  let level: unknown;
  if (typeof rules === 'object' && rules !== null) {
    for (const [rule, trust] of Object.entries(rules as Record<string, unknown>)) {
      const dir = trust === 'TRUST_PARENT' ? path.dirname(rule) : rule;
      if ((scope.within(dir, scope.root) || scope.within(dir, root)) && rule.length > longest) {
        longest = rule.length;
        level = trust;
      }
    }
  }
  if (level === 'TRUST_FOLDER' || level === 'TRUST_PARENT') return [];
  return [
    {
      cause: `Gemini CLI runs a project's hooks only in a trusted folder, and ${file} ${level === 'DO_NOT_TRUST' ? 'marks this folder as not trusted' : 'does not trust this folder'}`,
      fix: 'run `gemini` in this folder and trust it when asked (or /permissions, "Trust this folder")',
    },
  ];
}
