import { parseJson } from '../core/json';
import type { DiscoveryFs } from './agent';

/**
 * The folder a transcript's first record says its session ran in, for agents that write every
 * session to one place whatever its folder (Codex rollouts, Copilot CLI session logs). Each file's
 * first line is read once; a file still being started (no whole first line yet) is asked again.
 */
export class FirstRecordFolders {
  private readonly folderOf = new Map<string, string | null>();

  /** `pick` finds the folder in the parsed first record; null when it names none. */
  constructor(private readonly pick: (first: unknown) => string | null) {}

  async of(file: string, fs: DiscoveryFs): Promise<string | null> {
    const known = this.folderOf.get(file);
    if (known !== undefined) return known;
    const first = await fs.firstLine(file);
    if (first === undefined) return null;
    // Not JSON, or nested too deep: not a transcript we can read, so not this workspace's.
    const parsed = parseJson(first);
    const folder = parsed.ok ? this.pick(parsed.value) : null;
    this.folderOf.set(file, folder);
    if (this.folderOf.size > 20_000) this.folderOf.clear();
    return folder;
  }
}
