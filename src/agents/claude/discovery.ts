import * as path from 'node:path';
import type { FoundTranscript, TranscriptDiscovery } from '../agent';

/** Claude Code's folder name for a project: its path with every non-alphanumeric character a '-'. */
export function claudeProjectDir(root: string): string {
  return root.replace(/[^A-Za-z0-9]/g, '-');
}

/**
 * A compaction's copy, `agent-acompact-<hex>.jsonl` beside the subagents: Claude Code runs the
 * summary as a forked agent over the whole conversation, and its file holds that conversation again
 * (every line `isSidechain: true`, `agentId: "acompact-<hex>"`, the parent's `sessionId`), then the
 * request for the summary and the summary (issue 34; readers of these files treat it as no session
 * of its own: Sinity/polylogue `docs` "Session Lineage Model", measured "100 % of parent … whole
 * conversation re-emitted to summarize"; kylesnowschwartz/agent-ouija filters it as a "compaction
 * artifact").
 */
const COMPACTION_COPY = /^agent-acompact-.*\.jsonl$/;

/**
 * Claude Code keeps a project's sessions in `<home>/projects/<project dir>/<session>.jsonl`, and
 * each session's subagents in `<session>/subagents/agent-*.jsonl` (home: `$CLAUDE_CONFIG_DIR`,
 * else `~/.claude`). A compaction's copy is read only where its session's own transcript is gone
 * (then it is the only record of the session's calls); beside it, it would read them twice.
 */
export const claudeDiscovery: TranscriptDiscovery = {
  homeEnv: 'CLAUDE_CONFIG_DIR',
  defaultHome: '~/.claude',
  locator: () => ({
    async find({ root, home, fs }) {
      const dir = path.join(home, 'projects', claudeProjectDir(root));
      const out: FoundTranscript[] = [];
      const entries = await fs.list(dir);
      const sessions = new Set(entries.filter((d) => d.isFile() && d.name.endsWith('.jsonl')).map((d) => d.name.slice(0, -'.jsonl'.length)));
      for (const d of entries) {
        const file = path.join(dir, d.name);
        if (d.isFile() && d.name.endsWith('.jsonl')) {
          if (await fs.isNew(file)) out.push({ file, session: d.name.slice(0, -'.jsonl'.length) });
        } else if (d.isDirectory()) {
          const sub = path.join(file, 'subagents');
          for (const s of await fs.list(sub)) {
            const f = path.join(sub, s.name);
            if (COMPACTION_COPY.test(s.name) && sessions.has(d.name)) continue;
            if (s.isFile() && s.name.endsWith('.jsonl') && (await fs.isNew(f))) out.push({ file: f });
          }
        }
      }
      return out;
    },
  }),
};
