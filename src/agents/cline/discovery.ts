import * as path from 'node:path';
import { parseJson } from '../../core/json';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';
import { extensionStores, TaskFolderLocator } from '../clineFamily';
import { isObject, str } from '../transcript';

/*
 * Where Cline keeps its tasks:
 * - the VS Code extension (3.x, and 4.x's legacy bundle): its global storage folder,
 *   `<User>/globalStorage/saoudrizwan.claude-dev/` (the nightly build: `saoudrizwan.cline-nightly`),
 *   `tasks/<task id>/api_conversation_history.json`, with the task list `state/taskHistory.json`
 *   whose items name each task's folder, `cwdOnTaskInitialization` (`apps/vscode/src/core/storage/disk.ts`,
 *   `apps/vscode/src/shared/HistoryItem.ts` @v3.89.2; `hosts/vscode/vscode-to-file-migration.ts`
 *   @21cb8d25 says VS Code's tasks stay there in 4.x);
 * - Cline's own data folder, `~/.cline/data` (`$CLINE_DATA_DIR`; `$CLINE_DIR/data` is not followed
 *   here): the same `tasks/` and `state/taskHistory.json` (the CLI's, read by 4.x's
 *   `apps/vscode/src/sdk/legacy-state-reader.ts`), and the SDK bundle's sessions,
 *   `sessions/<id>/<id>.messages.json` beside the manifest `<id>.json` whose `cwd` (or
 *   `workspace_root`) names the folder (`sdk/packages/shared/src/storage/paths.ts`,
 *   `sdk/packages/core/src/session/models/session-manifest.ts` @21cb8d25). Which bundle a 4.x user
 *   runs is Cline's rollout decision: both places are searched.
 */

const EXTENSION_IDS = ['saoudrizwan.claude-dev', 'saoudrizwan.cline-nightly'];
const TASK_INDEX = path.join('state', 'taskHistory.json');
/** A manifest holds the session's first prompt: more than the default head. */
const MAX_MANIFEST_BYTES = 1 << 20;
const MESSAGES = '.messages.json';

/** The SDK bundle's sessions whose manifest names a folder in this workspace; a session's subagents' message files beside its own are read too. */
class SessionLocator implements TranscriptLocator {
  private readonly folderOf = new Map<string, string | null>();

  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const { fs } = scope;
    const sessions = path.join(scope.home, 'sessions');
    const out: FoundTranscript[] = [];
    for (const d of await fs.list(sessions)) {
      if (!d.isDirectory()) continue;
      const dir = path.join(sessions, d.name);
      for (const f of await fs.list(dir)) {
        const file = path.join(dir, f.name);
        if (!f.isFile() || !f.name.endsWith(MESSAGES) || !(await fs.isNew(file))) continue;
        const folder = await this.folder(dir, d.name, scope);
        if (folder !== null && scope.contains(folder)) out.push({ file, ...(f.name === `${d.name}${MESSAGES}` ? { session: d.name } : {}) });
      }
    }
    return out;
  }

  private async folder(dir: string, id: string, { fs }: DiscoveryScope): Promise<string | null> {
    const known = this.folderOf.get(dir);
    if (known !== undefined) return known;
    const text = await fs.readText(path.join(dir, `${id}.json`), MAX_MANIFEST_BYTES);
    // No manifest yet (the session is starting): asked again on the next poll.
    if (text === undefined) return null;
    const parsed = parseJson(text);
    // Caught mid-write: asked again too.
    if (!parsed.ok) return null;
    const manifest = isObject(parsed.value) ? parsed.value : undefined;
    const cwd = manifest !== undefined ? (str(manifest.cwd) ?? str(manifest.workspace_root)) : undefined;
    const folder = cwd !== undefined ? path.resolve(cwd) : null;
    this.folderOf.set(dir, folder);
    return folder;
  }
}

export const clineDiscovery: TranscriptDiscovery = {
  defaultHome: '~/.config/Code/User/globalStorage',
  inGlobalStorage: true,
  locator: () => new TaskFolderLocator({ stores: extensionStores(EXTENSION_IDS), taskIndex: TASK_INDEX }),
};

export const clineDataDiscovery: TranscriptDiscovery = {
  homeEnv: 'CLINE_DATA_DIR',
  defaultHome: '~/.cline/data',
  locator: () => {
    const tasks = new TaskFolderLocator({ stores: (home) => [home], taskIndex: TASK_INDEX });
    const sessions = new SessionLocator();
    return { find: async (scope) => [...(await tasks.find(scope)), ...(await sessions.find(scope))] };
  },
};
