import type { TranscriptDiscovery } from '../agent';
import { extensionStores, TaskFolderLocator } from '../clineFamily';

/*
 * Kilo Code (before 7.x) keeps its tasks in its global storage folder,
 * `<User>/globalStorage/kilocode.kilo-code/` (publisher `kilocode`, name `kilo-code`), or in the
 * folder of its `kilo-code.customStoragePath` setting (Kilo-Org/kilocode-legacy `src/package.json`,
 * `src/utils/storage.ts` @56b73d3b): `tasks/<task id>/api_conversation_history.json`. Its task list
 * is in VS Code's state database (not read): a task's folder is read from the environment details
 * of its first request. Kilo Code 7.x keeps sessions in an SQLite database, read as opencode's
 * (`../opencode/database.ts`).
 */
export const kiloDiscovery: TranscriptDiscovery = {
  defaultHome: '~/.config/Code/User/globalStorage',
  inGlobalStorage: true,
  locator: () => new TaskFolderLocator({ stores: extensionStores(['kilocode.kilo-code']) }),
};
