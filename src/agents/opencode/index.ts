import type { Agent } from '../agent';
import { openCodeDatabase } from './database';
import { OPENCODE, openCodeSession } from './session';

const transcript = openCodeSession(OPENCODE);

/**
 * opencode (sst/opencode): its sessions are in its SQLite database, read by the watcher and by
 * `replay opencode.db`; an `opencode export` file is read by `replay`. It takes in-process plugins,
 * not hook commands: watched, not enforced.
 */
export const openCode: Agent = {
  id: 'opencode',
  label: 'opencode',
  eventAgent: OPENCODE,
  transcript,
  database: openCodeDatabase('opencode', 'opencode.db', 'OPENCODE_DB', transcript),
};
