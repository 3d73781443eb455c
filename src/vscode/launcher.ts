import * as path from 'node:path';
import type * as vscode from 'vscode';
import { refreshLauncher, type LauncherTarget } from '../state/launcher';

/**
 * The launcher's target when the extension writes it: the CLI bundled with this version of the
 * extension, run by `node` where the agent finds one, else by the editor's own runtime as Node.
 */
export function extensionLauncherTarget(extensionPath: string): LauncherTarget {
  const cli = path.join(extensionPath, 'dist', 'cli.js');
  return process.versions.electron !== undefined ? { cli, electron: process.execPath } : { cli, node: process.execPath };
}

/**
 * On activation: a launcher that exists (someone installed a hook) is pointed at this version of
 * the extension, so an update never leaves the hooks starting a removed install. Creates none.
 * Off the activation path: nothing waits for it.
 */
export function keepLauncherCurrent(extensionPath: string, log: vscode.LogOutputChannel): void {
  void refreshLauncher(extensionLauncherTarget(extensionPath)).then(
    (r) => {
      if (r?.changed) log.info(`launcher ${r.path} now starts ${path.join(extensionPath, 'dist', 'cli.js')}`);
    },
    (err: unknown) => log.warn(`launcher not refreshed: ${(err as Error).message}`),
  );
}
