import * as path from 'node:path';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';

/*
 * Cursor keeps a workspace's agent transcripts in `~/.cursor/projects/<slug>/agent-transcripts/`,
 * the slug being the workspace's path with every run of characters other than letters and digits
 * made one `-`, without a leading one (as found on disk: ../shared/docs/vscode-agents.md,
 * section 4): `<uuid>/<uuid>.jsonl`, and in older builds `<uuid>.json`. The slug is computed from
 * the workspace folder, so only this workspace's folder is listed.
 */
export function cursorSlug(root: string): string {
  return root.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-+/, '');
}

class CursorLocator implements TranscriptLocator {
  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const dir = path.join(scope.home, 'projects', cursorSlug(scope.root), 'agent-transcripts');
    const out: FoundTranscript[] = [];
    for (const d of await scope.fs.list(dir)) {
      if (d.isDirectory()) {
        const file = path.join(dir, d.name, `${d.name}.jsonl`);
        if (await scope.fs.isNew(file)) out.push({ file, session: d.name });
      }
    }
    return out;
  }
}

export const cursorDiscovery: TranscriptDiscovery = { defaultHome: '~/.cursor', locator: () => new CursorLocator() };
