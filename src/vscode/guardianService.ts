import * as path from 'node:path';
import * as vscode from 'vscode';
import type { IncidentChanges } from '../core/incidentBook';
import { DisposableStore } from './disposables';
import { FolderGuardian } from './folderGuardian';
import type { UiSettingsValue } from './uiSettings';

/**
 * Every workspace folder's guardian, kept in step with the folders of the window (folders added
 * and removed at run time), with one change event and one raise event for the whole window.
 */
export class GuardianService implements vscode.Disposable {
  private readonly guardians = new Map<string, { guardian: FolderGuardian; subscriptions: DisposableStore }>();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly incidents = new vscode.EventEmitter<{ guardian: FolderGuardian; changes: IncidentChanges }>();
  readonly onDidChange = this.changed.event;
  /** Incidents opened, grown or closed in some folder. */
  readonly onDidChangeIncidents = this.incidents.event;
  private readonly folderListener: vscode.Disposable;

  /**
   * `storageUri`: this extension's storage for the window (`…/workspaceStorage/<id>/<extension>`):
   * its parent is the window's storage folder, where the other extensions of this window keep
   * their transcripts. Remote hosts (code-server, SSH) write no `workspace.json` there,
   * so the folder is known this way, not by searching.
   */
  readonly editorStorage: string | undefined;
  /**
   * `globalStorageUri`: this extension's global storage (`…/User/globalStorage/<extension>`): its
   * parent holds every extension's, where extensions keep the tasks of every window, each task naming
   * its folder.
   */
  readonly editorGlobalStorage: string | undefined;

  constructor(private readonly settings: UiSettingsValue, private readonly log: vscode.LogOutputChannel, storageUri?: vscode.Uri, globalStorageUri?: vscode.Uri) {
    this.editorStorage = storageUri?.scheme === 'file' ? path.dirname(storageUri.fsPath) : undefined;
    this.editorGlobalStorage = globalStorageUri?.scheme === 'file' ? path.dirname(globalStorageUri.fsPath) : undefined;
    this.folderListener = vscode.workspace.onDidChangeWorkspaceFolders((e) => {
      for (const f of e.removed) this.remove(f);
      for (const f of e.added) this.add(f);
      this.changed.fire();
    });
    for (const f of vscode.workspace.workspaceFolders ?? []) this.add(f);
  }

  /** Guardians in the order of the window's folders. */
  get all(): FolderGuardian[] {
    return [...this.guardians.values()].map((g) => g.guardian).sort((a, b) => a.folder.index - b.folder.index);
  }

  get(uri: vscode.Uri): FolderGuardian | undefined {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    return folder ? this.guardians.get(folder.uri.toString())?.guardian : undefined;
  }

  async rescan(): Promise<void> {
    await Promise.all(this.all.map((g) => g.rescan()));
  }

  /** Resolves when every folder has read what it was asked to read. */
  async idle(): Promise<void> {
    await Promise.all(this.all.map((g) => g.idle()));
  }

  dispose(): void {
    this.folderListener.dispose();
    for (const { guardian, subscriptions } of this.guardians.values()) {
      subscriptions.dispose();
      guardian.dispose();
    }
    this.guardians.clear();
    this.changed.dispose();
    this.incidents.dispose();
  }

  private add(folder: vscode.WorkspaceFolder): void {
    if (folder.uri.scheme !== 'file' || this.guardians.has(folder.uri.toString())) return;
    // The window's transcripts belong to the window, not to one folder: the first folder shows them, once.
    // Those in global storage name their folder: every folder looks there for its own.
    const guardian = new FolderGuardian(folder, () => this.settings.value, this.log, folder.index === 0 ? this.editorStorage : undefined, this.editorGlobalStorage);
    const subscriptions = new DisposableStore();
    subscriptions.add(guardian.onDidChange(() => this.changed.fire()));
    subscriptions.add(guardian.onDidChangeIncidents((changes) => this.incidents.fire({ guardian, changes })));
    this.guardians.set(folder.uri.toString(), { guardian, subscriptions });
    void guardian.start();
  }

  private remove(folder: vscode.WorkspaceFolder): void {
    const entry = this.guardians.get(folder.uri.toString());
    if (!entry) return;
    entry.subscriptions.dispose();
    entry.guardian.dispose();
    this.guardians.delete(folder.uri.toString());
  }
}
