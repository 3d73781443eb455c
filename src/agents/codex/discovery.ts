import * as path from 'node:path';
import { parseJson } from '../../core/json';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/**
 * Codex CLI writes every session, whatever its folder, to
 * `<home>/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl` (home: `$CODEX_HOME`, else `~/.codex`);
 * the rollout's first line, `session_meta`, carries the `cwd` it ran in. A rollout is this
 * workspace's when that cwd is the workspace or inside it; each rollout's first line is read once.
 */
class CodexLocator implements TranscriptLocator {
  private readonly cwdOf = new Map<string, string | null>();

  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const { home, fs } = scope;
    const sessions = path.join(home, 'sessions');
    const out: FoundTranscript[] = [];
    const sinceDay = new Date(scope.since).toISOString().slice(0, 10);
    for (const y of await fs.list(sessions)) {
      if (!y.isDirectory() || y.name < sinceDay.slice(0, 4)) continue;
      for (const m of await fs.list(path.join(sessions, y.name))) {
        if (!m.isDirectory() || `${y.name}-${m.name}` < sinceDay.slice(0, 7)) continue;
        for (const d of await fs.list(path.join(sessions, y.name, m.name))) {
          if (!d.isDirectory() || `${y.name}-${m.name}-${d.name}` < sinceDay) continue;
          const dir = path.join(sessions, y.name, m.name, d.name);
          for (const f of await fs.list(dir)) {
            if (!f.isFile() || !f.name.startsWith('rollout-') || !f.name.endsWith('.jsonl')) continue;
            const file = path.join(dir, f.name);
            if (!(await fs.isNew(file))) continue;
            const cwd = await this.rolloutCwd(file, scope);
            const session = UUID.exec(f.name)?.[1];
            if (cwd !== null && scope.contains(path.resolve(cwd))) out.push({ file, ...(session !== undefined ? { session } : {}) });
          }
        }
      }
    }
    return out;
  }

  /** The cwd in a rollout's session_meta (its first line); null when it has none. */
  private async rolloutCwd(file: string, { fs }: DiscoveryScope): Promise<string | null> {
    const known = this.cwdOf.get(file);
    if (known !== undefined) return known;
    const first = await fs.firstLine(file);
    // No whole first line yet (a rollout being started): asked again next time.
    if (first === undefined) return null;
    let cwd: string | null = null;
    // Not JSON, or nested too deep: not a rollout we can read, so not ours.
    const parsed = parseJson(first);
    const meta = parsed.ok ? (parsed.value as { type?: unknown; payload?: { cwd?: unknown } } | null) : null;
    if (meta?.type === 'session_meta' && typeof meta.payload?.cwd === 'string') cwd = meta.payload.cwd;
    this.cwdOf.set(file, cwd);
    if (this.cwdOf.size > 20_000) this.cwdOf.clear();
    return cwd;
  }
}

export const codexDiscovery: TranscriptDiscovery = { homeEnv: 'CODEX_HOME', defaultHome: '~/.codex', locator: () => new CodexLocator() };
