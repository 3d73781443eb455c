import * as path from 'node:path';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';
import { FirstRecordFolders } from '../firstRecord';

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/**
 * Codex CLI writes every session, whatever its folder, to
 * `<home>/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl` (home: `$CODEX_HOME`, else `~/.codex`);
 * the rollout's first line, `session_meta`, carries the `cwd` it ran in. A rollout is this
 * workspace's when that cwd is the workspace or inside it; each rollout's first line is read once.
 */
class CodexLocator implements TranscriptLocator {
  private readonly cwdOf = new FirstRecordFolders((first) => {
    const meta = first as { type?: unknown; payload?: { cwd?: unknown } } | null;
    return meta?.type === 'session_meta' && typeof meta.payload?.cwd === 'string' ? meta.payload.cwd : null;
  });

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
            const cwd = await this.cwdOf.of(file, fs);
            const session = UUID.exec(f.name)?.[1];
            if (cwd !== null && scope.contains(path.resolve(cwd))) out.push({ file, ...(session !== undefined ? { session } : {}) });
          }
        }
      }
    }
    return out;
  }
}

export const codexDiscovery: TranscriptDiscovery = { homeEnv: 'CODEX_HOME', defaultHome: '~/.codex', locator: () => new CodexLocator() };
