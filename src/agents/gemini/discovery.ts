import * as path from 'node:path';
import type { FoundTranscript, TranscriptDiscovery } from '../agent';

/** Gemini CLI's id of a project: the SHA-256 of its root path. */
export function geminiProjectHash(root: string): string {
  // Loaded here only: the hook, which imports the registry, starts faster without node:crypto.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(root).digest('hex');
}

/**
 * Gemini CLI keeps a project's chats in `<home>/tmp/<project>/chats/session-*.jsonl` (home:
 * `~/.gemini`). The project folder is named by the SHA-256 of the project's root; newer versions
 * name it after the project and note the root in its `.project_root` file.
 */
export const geminiDiscovery: TranscriptDiscovery = {
  defaultHome: '~/.gemini',
  locator: () => ({
    async find({ root, home, fs }) {
      const tmp = path.join(home, 'tmp');
      const hash = geminiProjectHash(root);
      const dirs: string[] = [];
      for (const d of await fs.list(tmp)) {
        if (!d.isDirectory()) continue;
        const dir = path.join(tmp, d.name);
        if (d.name === hash) dirs.push(dir);
        else {
          const marker = await fs.readText(path.join(dir, '.project_root'));
          if (marker !== undefined && path.resolve(marker.trim()) === root) dirs.push(dir);
        }
      }
      const out: FoundTranscript[] = [];
      for (const dir of dirs) {
        const chats = path.join(dir, 'chats');
        for (const f of await fs.list(chats)) {
          const file = path.join(chats, f.name);
          if (f.isFile() && f.name.startsWith('session-') && f.name.endsWith('.jsonl') && (await fs.isNew(file))) out.push({ file });
        }
      }
      return out;
    },
  }),
};
