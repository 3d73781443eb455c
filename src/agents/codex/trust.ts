import * as path from 'node:path';
import type { NotRunning, TrustScope } from '../agent';

/*
 * Codex runs a project's hooks only when two trusts are given, and skips an untrusted hook without
 * a word (seen live with 0.169, ../shared/docs/live-agents.md):
 * - the project: `$CODEX_HOME/config.toml` (default `~/.codex`) `[projects."<abs path>"]
 *   trust_level = "trusted"` (what `codex exec --trust` or the first-run prompt saves), else its
 *   `.codex/` folder is not loaded at all;
 * - each hook: `[hooks.state."<abs .codex/hooks.json>:<event>:<group>:<handler>"] trusted_hash =
 *   "sha256:…"` (openai/codex `codex-rs/hooks/src/engine/discovery.rs`: `hook_key`,
 *   `hook_trust_status`), saved when the person approves it in `/hooks`; a changed entry is
 *   untrusted again. `--dangerously-bypass-hook-trust` runs it for one invocation.
 * Only the presence of these is read here (the hash is Codex's to check); whether the hook then
 * runs is told by its heartbeat.
 */

/** The tables of a TOML text, each with its dotted key (quoted parts unquoted) and its `key = "string"` values. */
function tomlTables(text: string): { key: string[]; values: Map<string, string> }[] {
  const tables: { key: string[]; values: Map<string, string> }[] = [{ key: [], values: new Map() }];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[') && line.endsWith(']')) {
      // A table's header (an array of tables, `[[…]]`, holds nothing read here).
      if (!line.startsWith('[[')) tables.push({ key: dottedKey(line.slice(1, -1).trim()), values: new Map() });
      else tables.push({ key: [], values: new Map() });
      continue;
    }
    const kv = /^([A-Za-z0-9_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"/.exec(line);
    if (kv) (tables[tables.length - 1] as (typeof tables)[number]).values.set(kv[1] as string, JSON.parse(`"${kv[2] as string}"`) as string);
  }
  return tables;
}

function dottedKey(text: string): string[] {
  const parts: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)/gy;
  let m: RegExpExecArray | null;
  while (re.lastIndex < text.length && (m = re.exec(text)) !== null) {
    parts.push(m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : (m[2] ?? m[3] ?? ''));
    if (m[0] === '') break;
  }
  return parts;
}

export async function codexHookTrust(scope: TrustScope): Promise<readonly NotRunning[]> {
  const home = scope.env.CODEX_HOME !== undefined && scope.env.CODEX_HOME !== '' ? scope.env.CODEX_HOME : path.join(scope.home, '.codex');
  const configFile = path.join(home, 'config.toml');
  const tables = tomlTables((await scope.readText(configFile)) ?? '');
  const root = await scope.realPath(scope.root);
  const problems: NotRunning[] = [];
  const projectTrusted = tables.some((t) => t.key.length === 2 && t.key[0] === 'projects' && t.values.get('trust_level') === 'trusted' && (scope.within(t.key[1] as string, scope.root) || scope.within(t.key[1] as string, root)));
  if (!projectTrusted) {
    problems.push({
      cause: `Codex loads this project's .codex/hooks.json only in a trusted project, and ${configFile} does not trust ${scope.root}`,
      fix: 'run `codex` in this folder once and trust it when asked (or `codex exec --trust`)',
    });
  }
  const hooksFiles = new Set([path.join(scope.root, '.codex', 'hooks.json'), path.join(root, '.codex', 'hooks.json')]);
  const hookTrusted = tables.some((t) => {
    if (t.key.length !== 3 || t.key[0] !== 'hooks' || t.key[1] !== 'state') return false;
    const key = t.key[2] as string;
    return [...hooksFiles].some((f) => key.startsWith(`${f}:pre_tool_use:`)) && (t.values.get('trusted_hash') ?? '') !== '';
  });
  if (!hookTrusted) {
    problems.push({
      cause: 'Codex runs a project hook only after you trust it, and skips an untrusted one without a word: the Loop Guardian hook in .codex/hooks.json is not trusted',
      fix: 'run `codex` in this folder, open /hooks and trust the Loop Guardian hooks (automation that vets its hooks can pass `--dangerously-bypass-hook-trust`)',
    });
  }
  return problems;
}
