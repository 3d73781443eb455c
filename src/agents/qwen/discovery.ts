import * as path from 'node:path';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';

/*
 * Qwen Code writes a project's chats to `<home>/projects/<slug>/chats/<session uuid>.jsonl`, home
 * `$QWEN_HOME` else `~/.qwen`, the slug the project's path with every character but letters and
 * digits made `-` (QwenLM/qwen-code `packages/core/src/utils/paths.ts` `sanitizeCwd`; a live run of
 * Qwen Code 0.24.4 here wrote `projects/-tmp-…-project/chats/`).
 */
export function qwenSlug(root: string): string {
  return root.replace(/[^A-Za-z0-9]/g, '-');
}

class QwenLocator implements TranscriptLocator {
  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const dir = path.join(scope.home, 'projects', qwenSlug(scope.root), 'chats');
    const out: FoundTranscript[] = [];
    for (const d of await scope.fs.list(dir)) {
      if (!d.isFile() || !/^[0-9a-fA-F-]{32,36}\.jsonl$/.test(d.name)) continue;
      const file = path.join(dir, d.name);
      if (await scope.fs.isNew(file)) out.push({ file, session: d.name.slice(0, -'.jsonl'.length) });
    }
    return out;
  }
}

export const qwenDiscovery: TranscriptDiscovery = { homeEnv: 'QWEN_HOME', defaultHome: '~/.qwen', locator: () => new QwenLocator() };
