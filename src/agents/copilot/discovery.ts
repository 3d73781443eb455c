import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../core/json';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';

/*
 * VS Code keeps a folder per workspace under its user data's `workspaceStorage/<workspaceId>/`,
 * whose `workspace.json` names the workspace (`{"folder": "file:///…"}`); Copilot Chat writes its
 * hook transcripts to `GitHub.copilot-chat/transcripts/<sessionId>.jsonl` there (vscode-copilot-chat
 * `sessionTranscriptService.ts`; the folder keeps the extension id's case). The user data differs
 * by platform, edition and fork (Insiders, code-server, Cursor…): `agents.copilot.home` names
 * another `workspaceStorage` folder.
 */
function defaultStorage(): string {
  if (process.platform === 'darwin') return '~/Library/Application Support/Code/User/workspaceStorage';
  if (process.platform === 'win32') return path.join(process.env.APPDATA ?? '~', 'Code', 'User', 'workspaceStorage');
  return '~/.config/Code/User/workspaceStorage';
}

/** Copilot Chat's folder in a window's storage: the extension id, in its own case. */
const CHAT_FOLDER = 'GitHub.copilot-chat';

class CopilotChatLocator implements TranscriptLocator {
  /** Each storage folder's workspace, read once (null: not a folder workspace). */
  private readonly folderOf = new Map<string, string | null>();

  /**
   * `home` is either one window's storage folder (inside the editor, which knows it: it holds
   * `GitHub.copilot-chat` beside our own folder) or a whole `workspaceStorage` folder, searched for
   * the folders whose `workspace.json` names this workspace.
   */
  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const { home, fs } = scope;
    const entries = await fs.list(home);
    const windowFolder = entries.some((d) => d.isDirectory() && d.name === CHAT_FOLDER);
    const storages: string[] = windowFolder ? [home] : [];
    if (!windowFolder) {
      for (const d of entries) {
        const storage = path.join(home, d.name);
        if (d.isDirectory() && (await this.workspaceOf(storage, scope)) === scope.root) storages.push(storage);
      }
    }
    const out: FoundTranscript[] = [];
    for (const storage of storages) {
      const transcripts = path.join(storage, CHAT_FOLDER, 'transcripts');
      for (const f of await fs.list(transcripts)) {
        const file = path.join(transcripts, f.name);
        if (f.isFile() && f.name.endsWith('.jsonl') && (await fs.isNew(file))) out.push({ file, session: f.name.slice(0, -'.jsonl'.length) });
      }
    }
    return out;
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
