import type { SessionDatabase, SessionRow } from '../agent';
import { parseJson } from '../../core/json';
import { isObject, type DocumentAdapter } from '../transcript';

/*
 * Where opencode keeps its sessions, and Kilo CLI 7.x (its fork) too: an SQLite database in the
 * data folder, `$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share/opencode/opencode.db`; Kilo:
 * `…/kilo/kilo.db`), in WAL mode (opencode `packages/opencode/src/storage/db.ts`: `journal_mode = WAL`).
 * Before 1.2 opencode kept JSON files under `storage/` (not read). Its tables (opencode `packages/opencode/src/session/session.sql.ts`;
 * the same columns in the databases opencode 1.18.33 and Kilo 7.7.7 wrote here):
 * - `session (id, project_id, parent_id, directory, title, time_created, time_updated, …)`: the
 *   folder the session works in is `directory`; a subagent's session has its `parent_id`;
 * - `message (id, session_id, time_created, time_updated, data)`: `data` the message's JSON
 *   without its `id` and `sessionID`;
 * - `part (id, message_id, session_id, time_created, time_updated, data)`: `data` the part's JSON
 *   without its `id`, `sessionID` and `messageID`; a message's parts in the order of their ids.
 * A session's document is what `opencode export` prints for it: `{ info, messages: [{ info, parts }] }`,
 * the ids put back in; a row whose data is not JSON is a string that says so, in its place.
 */

/** A column's value as text. */
const asText = (v: unknown): string => (typeof v === 'string' ? v : String(v));

function data(row: SessionRow, what: string, ids: Record<string, unknown>): unknown {
  const parsed = parseJson(asText(row.data));
  if (!parsed.ok) return `${what} ${asText(row.id)}: its data is not JSON (${parsed.error})`;
  return isObject(parsed.value) ? { ...parsed.value, ...ids } : `${what} ${asText(row.id)}: its data is not a JSON object`;
}

/**
 * The database of one agent of opencode's family: its folder and file, and the variable that
 * names another (`OPENCODE_DB`; Kilo 7.7.9's `KILO_DB`: an absolute path, or a name in the data
 * folder; `:memory:` keeps nothing to read), read with `adapter`.
 */
export function openCodeDatabase(folder: string, file: string, fileEnv: string, adapter: DocumentAdapter): SessionDatabase {
  return {
    homeEnv: 'XDG_DATA_HOME',
    defaultHome: '~/.local/share',
    folder,
    file,
    fileEnv,
    adapter,
    sessionsSql: 'SELECT id, directory, title, parent_id, time_updated FROM session WHERE time_updated >= ? ORDER BY time_created, id',
    messagesSql: 'SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id',
    partsSql: 'SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id',
    document(session, messages, parts) {
      const id = asText(session.id);
      const byMessage = new Map<string, unknown[]>();
      for (const p of parts) {
        const m = asText(p.message_id);
        const list = byMessage.get(m) ?? [];
        list.push(data(p, 'part', { id: asText(p.id), sessionID: id, messageID: m }));
        byMessage.set(m, list);
      }
      return {
        agent: adapter.agent,
        info: { id, directory: asText(session.directory), title: asText(session.title ?? ''), ...(session.parent_id != null ? { parentID: asText(session.parent_id) } : {}) },
        messages: messages.map((m) => {
          const info = data(m, 'message', { id: asText(m.id), sessionID: id });
          return typeof info === 'string' ? info : { info, parts: byMessage.get(asText(m.id)) ?? [] };
        }),
      };
    },
  };
}
