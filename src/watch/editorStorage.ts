import * as path from 'node:path';

/** Names a folder (or several, separated like PATH) to use as the editor's global storage instead of the standard ones. */
export const GLOBAL_STORAGE_ENV = 'LOOP_GUARDIAN_GLOBAL_STORAGE';

/**
 * The user-data folders of VS Code and its editions, by the name the platform gives them. A fork's
 * (whose name is an agent's) is named by `LOOP_GUARDIAN_GLOBAL_STORAGE` or `agents.<id>.home`.
 */
const EDITIONS = ['Code', 'Code - Insiders', 'VSCodium', 'Code - OSS'];

/**
 * The editor's global storage folders (`<user data>/User/globalStorage`, where every extension has
 * its `globalStorageUri`), for a guardian that does not run inside the editor (the CLI): each
 * edition's standard user-data folder on this platform (VS Code's `--user-data-dir` default:
 * `%APPDATA%\Code` on Windows, `~/Library/Application Support/Code` on macOS,
 * `$XDG_CONFIG_HOME/Code` or `~/.config/Code` elsewhere), a portable install's
 * (`$VSCODE_PORTABLE/user-data`), the remote server's of a Remote-SSH or WSL window
 * (`~/.vscode-server/data`), and code-server's (`$XDG_DATA_HOME/code-server`, else
 * `~/.local/share/code-server`). `LOOP_GUARDIAN_GLOBAL_STORAGE` replaces them all.
 */
export function globalStorageFolders(env: NodeJS.ProcessEnv, home: string, platform: NodeJS.Platform = process.platform): string[] {
  const override = env[GLOBAL_STORAGE_ENV];
  if (override !== undefined && override.trim() !== '') return override.split(path.delimiter).filter((p) => p.trim() !== '').map((p) => path.resolve(p));
  const userData: string[] = [];
  if (platform === 'win32') {
    const appData = env.APPDATA ?? path.join(home, 'AppData', 'Roaming');
    for (const e of EDITIONS) userData.push(path.join(appData, e));
  } else if (platform === 'darwin') {
    for (const e of EDITIONS) userData.push(path.join(home, 'Library', 'Application Support', e));
  } else {
    const config = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : path.join(home, '.config');
    for (const e of EDITIONS) userData.push(path.join(config, e));
  }
  if (env.VSCODE_PORTABLE !== undefined && env.VSCODE_PORTABLE !== '') userData.push(path.join(env.VSCODE_PORTABLE, 'user-data'));
  userData.push(path.join(home, '.vscode-server', 'data'), path.join(home, '.vscode-server-insiders', 'data'));
  if (platform !== 'win32') {
    const data = env.XDG_DATA_HOME !== undefined && env.XDG_DATA_HOME !== '' ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
    userData.push(path.join(data, 'code-server'));
  }
  return userData.map((u) => path.join(u, 'User', 'globalStorage'));
}
