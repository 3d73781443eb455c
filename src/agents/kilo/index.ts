import type { Agent } from '../agent';
import { openCodeDatabase } from '../opencode/database';
import { openCodeSession } from '../opencode/session';
import { kiloDiscovery } from './discovery';
import { kiloTranscript } from './transcript';

/** Kilo CLI 7.x and the extension built on it: opencode's sessions, in Kilo's own database. */
const kiloSessions = openCodeSession(kiloTranscript.agent);

/**
 * Kilo Code has no hooks: none in its extension before 7.x (Kilo-Org/kilocode-legacy @56b73d3b);
 * 7.x, an OpenCode fork, takes in-process plugins, not hook commands. It is watched, not enforced:
 * the tasks of the extension before 7.x in the editor's storage, the sessions of 7.x in its
 * database (`$XDG_DATA_HOME/kilo/kilo.db`, Kilo-Org/kilocode `packages/opencode/src/storage/db.ts`).
 */
export const kilo: Agent = {
  id: 'kilo',
  label: 'Kilo Code',
  eventAgent: kiloTranscript.agent,
  transcript: kiloTranscript,
  otherTranscripts: [kiloSessions],
  discovery: kiloDiscovery,
  database: openCodeDatabase('kilo', 'kilo.db', 'KILO_DB', kiloSessions),
};
