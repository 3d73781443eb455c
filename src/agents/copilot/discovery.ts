import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../core/json';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';
import type { JsonlAdapter } from '../transcript';
import { copilotChatSessionLog } from './chatSessionLog';

/*
 * VS Code keeps a folder per workspace under its user data's `workspaceStorage/<workspaceId>/`,
 * whose `workspace.json` names the workspace (`{"folder": "file:///…"}`). Two logs of Copilot's
 * sessions live by it:
 * - Copilot Chat's hook transcripts, `GitHub.copilot-chat/transcripts/<sessionId>.jsonl` there
 *   (vscode-copilot-chat `sessionTranscriptService.ts`; the folder keeps the extension id's case),
 *   written while hooks are on, before each hook runs: live.
 * - VS Code's own session logs (chatSessionLog.ts), `chatSessions/<sessionId>.jsonl` there (VS Code
 *   1.109 to at least September 2026: `ChatSessionStore`, `joinPath(workspaceStorageHome,
 *   workspaceId, 'chatSessions')`, microsoft/vscode `chatSessionStore.ts` @047238f9); in the newest
 *   source, per profile: `<profile globalStorage>/chatSessions/<workspaceId>/` (`getProfileStorageRoot`,
 *   old files copied over by `migrateLegacyWorkspaceSessions`), that is `<User>/globalStorage/…` for
 *   the default profile and `<User>/profiles/<profile>/globalStorage/…` for the others. Written when
 *   VS Code saves its state (about a minute behind).
 * One session is read from one file: its hook transcript when it has one (live, and with the
 * calls' arguments), else its session log, newest layout first; a file found later for a session
 * already being read is left alone, so that no call counts twice. That the two name a session by
 * the same id is what the code of both says (not verified end to end); if they do not, each is
 * read as a session of its own.
 * The user data differs by platform, edition and fork (Insiders, code-server, Cursor…):
 * `agents.copilot.home` names another `workspaceStorage` folder.
 */
function defaultStorage(): string {
  if (process.platform === 'darwin') return '~/Library/Application Support/Code/User/workspaceStorage';
  if (process.platform === 'win32') return path.join(process.env.APPDATA ?? '~', 'Code', 'User', 'workspaceStorage');
  return '~/.config/Code/User/workspaceStorage';
}

/** Copilot Chat's folder in a window's storage: the extension id, in its own case. */
const CHAT_FOLDER = 'GitHub.copilot-chat';
/** VS Code's folder of session logs. */
const SESSIONS_FOLDER = 'chatSessions';

class CopilotChatLocator implements TranscriptLocator {
  /** Each storage folder's workspace, read once (null: not a folder workspace). */
  private readonly folderOf = new Map<string, string | null>();
  /** The file each session is read from. */
  private readonly sessionFile = new Map<string, string>();

  /**
   * `home` is either one window's storage folder (inside the editor, which knows it: it holds
   * `workspace.json`, and `GitHub.copilot-chat` or `chatSessions` beside our own folder) or a whole
   * `workspaceStorage` folder, searched for the folders whose `workspace.json` names this workspace.
   */
  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const { home, fs } = scope;
    const entries = await fs.list(home);
    const windowFolder = entries.some((d) => (d.isDirectory() && (d.name === CHAT_FOLDER || d.name === SESSIONS_FOLDER)) || (d.isFile() && d.name === 'workspace.json'));
    const storages: string[] = windowFolder ? [home] : [];
    if (!windowFolder) {
      for (const d of entries) {
        const storage = path.join(home, d.name);
        if (d.isDirectory() && (await this.workspaceOf(storage, scope)) === scope.root) storages.push(storage);
      }
    }
    const out: FoundTranscript[] = [];
    for (const storage of storages) {
      for (const { dir, adapter } of await this.folders(storage, scope)) {
        for (const f of await fs.list(dir)) {
          if (!f.isFile() || !f.name.endsWith('.jsonl')) continue;
          const file = path.join(dir, f.name);
          const session = f.name.slice(0, -'.jsonl'.length);
          const reading = this.sessionFile.get(session);
          if ((reading !== undefined && reading !== file) || !(await fs.isNew(file))) continue;
          this.sessionFile.set(session, file);
          out.push({ file, session, ...(adapter !== undefined ? { adapter } : {}) });
        }
      }
    }
    return out;
  }

  /** Where a window storage folder's sessions are, in the order a session's file is chosen. */
  private async folders(storage: string, { fs }: DiscoveryScope): Promise<{ dir: string; adapter?: JsonlAdapter }[]> {
    const user = path.dirname(path.dirname(storage));
    const id = path.basename(storage);
    const profiles = path.join(user, 'profiles');
    const profileRoots = (await fs.list(profiles)).filter((d) => d.isDirectory()).map((d) => path.join(profiles, d.name, 'globalStorage'));
    return [
      { dir: path.join(storage, CHAT_FOLDER, 'transcripts') },
      ...[path.join(user, 'globalStorage'), ...profileRoots].map((root) => ({ dir: path.join(root, SESSIONS_FOLDER, id), adapter: copilotChatSessionLog })),
      { dir: path.join(storage, SESSIONS_FOLDER), adapter: copilotChatSessionLog },
    ];
  }

  private async workspaceOf(storage: string, { fs }: DiscoveryScope): Promise<string | null> {
    const known = this.folderOf.get(storage);
    if (known !== undefined) return known;
    let folder: string | null = null;
    const text = await fs.readText(path.join(storage, 'workspace.json'));
    const parsed = text !== undefined ? parseJson(text) : undefined;
    const uri = parsed?.ok && typeof (parsed.value as { folder?: unknown } | null)?.folder === 'string' ? (parsed.value as { folder: string }).folder : undefined;
    if (uri?.startsWith('file:')) {
      try {
        folder = path.resolve(fileURLToPath(uri));
      } catch {
        folder = null;
      }
    }
    this.folderOf.set(storage, folder);
    return folder;
  }
}

export const copilotDiscovery: TranscriptDiscovery = { defaultHome: defaultStorage(), inEditorStorage: true, locator: () => new CopilotChatLocator() };
