import type { Agent } from '../agent';
import { openCodeDatabase } from './database';
import { openCodePluginTranscript } from './pluginTranscript';
import { OPENCODE, openCodeSession } from './session';

const transcript = openCodeSession(OPENCODE);

/**
 * opencode (sst/opencode): its sessions are in its SQLite database, read by the watcher and by
 * `replay opencode.db`; an `opencode export` file, and the transcript oh-my-opencode's plugin writes
 * for Claude Code's hooks, are read by `replay`. It takes in-process plugins,
 * not hook commands: watched, not enforced.
 */
export const openCode: Agent = {
  id: 'opencode',
  label: 'opencode',
  eventAgent: OPENCODE,
  transcript,
  // A plugin's transcript for Claude Code's hooks (oh-my-opencode's): read by `replay`.
  otherTranscripts: [openCodePluginTranscript],
  database: openCodeDatabase('opencode', 'opencode.db', 'OPENCODE_DB', transcript),
};
