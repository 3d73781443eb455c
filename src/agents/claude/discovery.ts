import * as path from 'node:path';
import type { FoundTranscript, TranscriptDiscovery } from '../agent';

/** Claude Code's folder name for a project: its path with every non-alphanumeric character a '-'. */
export function claudeProjectDir(root: string): string {
  return root.replace(/[^A-Za-z0-9]/g, '-');
}

/**
 * Claude Code keeps a project's sessions in `<home>/projects/<project dir>/<session>.jsonl`, and
 * each session's subagents in `<session>/subagents/agent-*.jsonl` (home: `$CLAUDE_CONFIG_DIR`,
 * else `~/.claude`).
 */
export const claudeDiscovery: TranscriptDiscovery = {
  homeEnv: 'CLAUDE_CONFIG_DIR',
  defaultHome: '~/.claude',
  locator: () => ({
    async find({ root, home, fs }) {
      const dir = path.join(home, 'projects', claudeProjectDir(root));
      const out: FoundTranscript[] = [];
      for (const d of await fs.list(dir)) {
        const file = path.join(dir, d.name);
        if (d.isFile() && d.name.endsWith('.jsonl')) {
          if (await fs.isNew(file)) out.push({ file, session: d.name.slice(0, -'.jsonl'.length) });
        } else if (d.isDirectory()) {
          const sub = path.join(file, 'subagents');
          for (const s of await fs.list(sub)) {
            const f = path.join(sub, s.name);
            if (s.isFile() && s.name.endsWith('.jsonl') && (await fs.isNew(f))) out.push({ file: f });
          }
        }
      }
      return out;
    },
  }),
};
