import type { TranscriptDiscovery } from '../agent';
import { extensionStores, TaskFolderLocator } from '../clineFamily';

/*
 * Roo Code keeps its tasks in its global storage folder, `<User>/globalStorage/rooveterinaryinc.roo-cline/`
 * (extension `RooVeterinaryInc.roo-cline`, whose folder VS Code names in lower case; the nightly
 * build `roo-code-nightly`), or in the folder of its `roo-cline.customStoragePath` setting
 * (`src/utils/storage.ts` @cb836567): `tasks/<task id>/api_conversation_history.json`. Since 3.48
 * (February 2026, `TaskHistoryStore.ts`) each task folder holds `history_item.json`, whose
 * `workspace` names the task's folder; before, the task list was in VS Code's state database
 * (not read), and the folder is read from the environment details of the task's first request.
 * With a custom storage path, `agents.roo.home` names that folder.
 */
export const rooDiscovery: TranscriptDiscovery = {
  defaultHome: '~/.config/Code/User/globalStorage',
  inGlobalStorage: true,
  locator: () => new TaskFolderLocator({ stores: extensionStores(['rooveterinaryinc.roo-cline', 'rooveterinaryinc.roo-code-nightly']), taskItem: 'history_item.json' }),
};
