import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import initSqlJs, { type Database } from 'sql.js';
import { openCodeSession } from '../../../src/agents/opencode/session';
import type { GuardianEvent } from '../../../src/core/events';
import { applyWal, readDatabaseImage } from '../../../src/watch/sqliteImage';
import { cli, tmpdir, tmpProject } from '../helpers';

/*
 * opencode's and Kilo 7.x's sessions: their SQLite database (tables and JSON shapes as opencode
 * 1.18.33 and Kilo 7.7.7 wrote them against a scripted model here: src/agents/opencode/), built
 * with SQLite itself (sql.js), its write-ahead log written frame by frame as the format says
 * (https://www.sqlite.org/fileformat2.html), and read by `replay` and `scan`.
 */

const SCHEMA = `
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, sandboxes text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
`;

const T0 = Date.now() - 60_000;
const NPM_ERROR = 'npm error Missing script: "build-missing"\nnpm error\nnpm error To see a list of scripts, run:\nnpm error   npm run\n';

interface Msg {
  readonly role: 'user' | 'assistant';
  readonly parts: readonly Record<string, unknown>[];
  readonly error?: Record<string, unknown>;
}

const bash = (i: number, command: string, output: string, exit: number) => ({ type: 'tool', tool: 'bash', callID: `call_${i}`, state: { status: 'completed', input: { command, description: 'Run it' }, output, metadata: { output, exit, truncated: false }, title: command, time: { start: T0 + i * 1000, end: T0 + i * 1000 + 500 } } });

function addSession(db: Database, id: string, directory: string, messages: readonly Msg[]): void {
  db.run('INSERT OR IGNORE INTO project VALUES (?, ?, ?, ?, ?)', ['p1', directory, T0, T0, '[]']);
  db.run('INSERT INTO session VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)', [id, 'p1', 'witty-eagle', directory, 'A session', '1.18.33', T0, T0 + messages.length * 1000]);
  messages.forEach((m, i) => {
    const mid = `msg_${id}_${String(i).padStart(3, '0')}`;
    const data = { role: m.role, time: { created: T0 + i * 1000 }, ...(m.role === 'assistant' ? { modelID: 'scripted', providerID: 'mock', finish: 'tool-calls' } : { agent: 'build' }), ...(m.error ? { error: m.error } : {}) };
    db.run('INSERT INTO message VALUES (?, ?, ?, ?, ?)', [mid, id, T0 + i * 1000, T0 + i * 1000, JSON.stringify(data)]);
    m.parts.forEach((p, j) => db.run('INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)', [`prt_${mid}_${j}`, mid, id, T0 + i * 1000, T0 + i * 1000, typeof p.raw === 'string' ? p.raw : JSON.stringify(p)]));
  });
}

const LOOP: readonly Msg[] = [
  { role: 'user', parts: [{ type: 'text', text: 'Build the project with npm run build-missing until it works.' }, { type: 'text', text: 'A reminder opencode wrote itself', synthetic: true }] },
  ...[1, 2, 3].map((i) => ({ role: 'assistant' as const, parts: [{ type: 'step-start' }, bash(i, 'npm run build-missing', NPM_ERROR, 1), { type: 'step-finish', reason: 'tool-calls' }] })),
  // A search that found nothing: grep's exit 1 without a word.
  { role: 'assistant', parts: [bash(4, 'ls | grep nothing-here', '', 1)] },
  { role: 'assistant', parts: [{ type: 'text', text: 'Giving up: the build script is missing.' }] },
];

async function sqlite() {
  return initSqlJs();
}

/** A database file (as SQLite wrote it) with the given sessions. */
async function databaseBytes(fill: (db: Database) => void): Promise<Uint8Array> {
  const SQL = await sqlite();
  const db = new SQL.Database();
  db.run(SCHEMA);
  fill(db);
  const bytes = db.export();
  db.close();
  return bytes;
}

/** SQLite's WAL checksum (big-endian words), carried on. */
function walChecksum(data: Uint8Array, s: [number, number]): [number, number] {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let [a, b] = s;
  for (let i = 0; i < data.byteLength; i += 8) {
    a = (a + v.getUint32(i) + b) >>> 0;
    b = (b + v.getUint32(i + 4) + a) >>> 0;
  }
  return [a, b];
}

/**
 * A write-ahead log taking `before` to `after`: one frame per page that differs, the last a commit
 * frame (the database's size in pages), then `extra` frames of an uncommitted transaction.
 */
function walBetween(before: Uint8Array, after: Uint8Array, opts: { salts?: [number, number]; extra?: number; corruptFrame?: number } = {}): Uint8Array {
  const pageSize = 4096;
  const pages: number[] = [];
  for (let p = 0; p * pageSize < after.byteLength; p++) {
    const a = before.subarray(p * pageSize, (p + 1) * pageSize);
    const b = after.subarray(p * pageSize, (p + 1) * pageSize);
    if (a.byteLength !== b.byteLength || a.some((x, i) => x !== b[i])) pages.push(p + 1);
  }
  const [salt1, salt2] = opts.salts ?? [0x11223344, 0x55667788];
  const frames = pages.length + (opts.extra ?? 0);
  const out = new Uint8Array(32 + frames * (24 + pageSize));
  const v = new DataView(out.buffer);
  v.setUint32(0, 0x377f0683);
  v.setUint32(4, 3007000);
  v.setUint32(8, pageSize);
  v.setUint32(16, salt1);
  v.setUint32(20, salt2);
  let s = walChecksum(out.subarray(0, 24), [0, 0]);
  v.setUint32(24, s[0]);
  v.setUint32(28, s[1]);
  const all = [...pages, ...Array.from({ length: opts.extra ?? 0 }, () => 1)];
  all.forEach((page, i) => {
    const at = 32 + i * (24 + pageSize);
    v.setUint32(at, page);
    v.setUint32(at + 4, i === pages.length - 1 ? after.byteLength / pageSize : 0);
    v.setUint32(at + 8, salt1);
    v.setUint32(at + 12, salt2);
    // An uncommitted frame writes page 1 as garbage: it must never be seen.
    if (i >= pages.length) out.fill(0xee, at + 24, at + 24 + pageSize);
    else out.set(after.subarray((page - 1) * pageSize, page * pageSize), at + 24);
    s = walChecksum(out.subarray(at, at + 8), s);
    s = walChecksum(out.subarray(at + 24, at + 24 + pageSize), s);
    v.setUint32(at + 16, s[0]);
    v.setUint32(at + 20, s[1]);
    if (i === opts.corruptFrame) out[at + 24 + 100] = (out[at + 24 + 100] ?? 0) ^ 0xff;
  });
  return out;
}

/** The main file as a WAL-mode database's: its header's versions say WAL (2). */
function walMode(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  copy[18] = 2;
  copy[19] = 2;
  return copy;
}

async function count(bytes: Uint8Array, table: string): Promise<number> {
  const SQL = await sqlite();
  const db = new SQL.Database(bytes);
  try {
    return Number(db.exec(`SELECT count(*) FROM ${table}`)[0]?.values[0]?.[0]);
  } finally {
    db.close();
  }
}

function decode(doc: unknown): { events: GuardianEvent[]; skipped: string[] } {
  const adapter = openCodeSession('opencode');
  assert.ok(adapter.sniff(doc), 'the shape is opencode\'s');
  const events: GuardianEvent[] = [];
  const skipped: string[] = [];
  const d = adapter.decoder('fallback', doc);
  adapter.records(doc).items.forEach((item, i) => d.record(item, i + 1, { event: (e) => events.push(e), skipped: (_l, field, reason) => skipped.push(`${field}: ${reason}`) }));
  return { events, skipped };
}

describe('opencode and Kilo 7.x: sessions in an SQLite database', () => {
  it('a message\'s parts become calls and results: a shell command\'s exit code decides its outcome, a tool error fails, a pending call has no result yet', () => {
    const doc = {
      info: { id: 'ses_1', directory: '/w' },
      messages: [
        { info: { id: 'm1', sessionID: 'ses_1', role: 'user', time: { created: T0 } }, parts: [{ type: 'text', text: 'Fix it' }, { type: 'text', text: 'system note', synthetic: true }] },
        {
          info: { id: 'm2', sessionID: 'ses_1', role: 'assistant', time: { created: T0 } },
          parts: [
            bash(1, 'npm test', 'ok\n', 0),
            bash(2, 'npm run build-missing', NPM_ERROR, 1),
            { type: 'tool', tool: 'edit', callID: 'call_3', state: { status: 'error', input: { filePath: 'a.js', oldString: 'x', newString: 'y' }, error: 'Found multiple matches for oldString.' } },
            { type: 'tool', tool: 'read', callID: 'call_4', state: { status: 'running', input: { filePath: 'b.js' } } },
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: 'Working on it.' },
          ],
        },
      ],
    };
    const { events, skipped } = decode(doc);
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      events.map((e) => [e.type, 'tool' in e ? e.tool : 'ok' in e ? e.ok : 'text' in e ? e.text : undefined]),
      [
        ['user', 'Fix it'],
        ['prompt', 'Fix it'],
        ['tool', 'bash'],
        ['tool_result', true],
        ['tool', 'bash'],
        ['tool_result', false],
        ['tool', 'edit'],
        ['tool_result', false],
        ['tool', 'read'],
        ['reply', 'Working on it.'],
      ],
    );
    const failed = events.filter((e) => e.type === 'tool_result' && e.ok === false).map((e) => ('error' in e ? e.error : ''));
    assert.match(failed[0] ?? '', /Missing script[\s\S]*Exit code 1$/);
    assert.equal(failed[1], 'Found multiple matches for oldString.');
    assert.ok(events.every((e) => e.session === 'ses_1'));
  });

  it('a failed model request is an api_error with its status; a retry part too, with its attempt; a request the person interrupted is none', () => {
    const doc = {
      messages: [
        { info: { id: 'm1', sessionID: 's', role: 'assistant', error: { name: 'APIError', data: { message: 'Rate limited', statusCode: 429, isRetryable: true } } }, parts: [{ type: 'retry', attempt: 2, error: { name: 'APIError', data: { message: 'Overloaded', statusCode: 529 } } }] },
        { info: { id: 'm2', sessionID: 's', role: 'assistant', error: { name: 'MessageAbortedError', data: { message: 'Aborted' } } }, parts: [] },
      ],
    };
    const { events } = decode(doc);
    assert.deepEqual(
      events.map((e) => (e.type === 'api_error' ? [e.error, e.status, e.class, e.retry] : e.type)),
      [
        ['Overloaded', 529, 'APIError', 2],
        ['Rate limited', 429, 'APIError', undefined],
      ],
    );
  });

  it('a row whose data is not JSON is skipped with its id; a part of an unknown type is named; nothing else is lost', async () => {
    const home = await tmpdir('lg-oc-');
    const file = path.join(home, 'opencode.db');
    await fs.writeFile(
      file,
      await databaseBytes((db) =>
        addSession(db, 'ses_bad', '/w', [
          { role: 'user', parts: [{ type: 'text', text: 'Go' }] },
          { role: 'assistant', parts: [{ raw: '{"type":"tool", broken' }, { type: 'hologram' }, bash(1, 'make', 'done\n', 0)] },
        ]),
      ),
    );
    const r = await cli(['replay', '--json', file]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { format: string; events: number; skipped: number };
    assert.equal(out.format, 'opencode');
    assert.equal(out.events, 4);
    assert.equal(out.skipped, 2);
    // The line of a record in a database is the message's number in its session (the second here).
    assert.match(r.stderr, /opencode\.db:2: parts\[0\]: part prt_msg_ses_bad_001_0: its data is not JSON/);
    assert.match(r.stderr, /opencode\.db:2: parts\[1\]\.type: unknown record parts\[1\]\.type "hologram"/);
  });

  it('the write-ahead log: committed frames are applied, an uncommitted transaction is not, and a frame with a bad checksum or another log\'s salts ends it', async () => {
    const before = await databaseBytes((db) => addSession(db, 'ses_a', '/w', LOOP.slice(0, 1)));
    const after = await databaseBytes((db) => {
      addSession(db, 'ses_a', '/w', LOOP.slice(0, 1));
      addSession(db, 'ses_b', '/w', LOOP);
    });
    assert.equal(await count(before, 'part'), 2);
    // Committed, then an uncommitted frame that would wreck page 1.
    const image = applyWal(walMode(before), walBetween(before, after, { extra: 1 }));
    assert.ok(image.frames > 0);
    assert.equal(await count(image.bytes, 'part'), 2 + (await count(after, 'part')) - 2);
    assert.equal(await count(image.bytes, 'session'), 2);
    // A torn write (a frame's page changed after its checksum): the transaction is not there.
    assert.equal(await count(applyWal(walMode(before), walBetween(before, after, { corruptFrame: 0 })).bytes, 'session'), 1);
    // A database only just created: all of it in its log, the main file empty.
    assert.equal(await count(applyWal(new Uint8Array(0), walBetween(new Uint8Array(0), after)).bytes, 'session'), 2);
    assert.throws(() => applyWal(new TextEncoder().encode('not a database at all, not at all..........................................................................'), undefined, 'x.db'), /x\.db: not an SQLite database/);
  });

  it('replay reads a database in WAL mode with its log (as opencode leaves it): the loop halts with its real error; the search that found nothing is no loop', async () => {
    const home = await tmpdir('lg-oc-');
    const file = path.join(home, 'opencode.db');
    const before = await databaseBytes(() => undefined);
    const after = await databaseBytes((db) => addSession(db, 'ses_loop', '/w', LOOP));
    await fs.writeFile(file, walMode(before));
    await fs.writeFile(`${file}-wal`, walBetween(before, after));
    assert.equal((await readDatabaseImage(file)).frames > 0, true);
    const r = await cli(['replay', file]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /\(opencode\), 0 line\(s\) skipped, 1 loop\(s\)/);
    assert.match(r.stdout, /HALT +failing-call \(3\/3\) session ses_loop, agent opencode\n.*Retry loop on bash: npm run build-missing: failed 3 times with the same error: npm error Missing script/);
    assert.doesNotMatch(r.stdout, /nothing-here/);
    // Named as Kilo's, the same file is read as Kilo's.
    const kilo = await cli(['replay', '--json', '--format', 'kilo', file]);
    assert.equal((JSON.parse(kilo.stdout) as { format: string }).format, 'kilo');
  });

  it('scan, watching opencode, reads the sessions of this workspace only, from the database in $XDG_DATA_HOME/opencode', async () => {
    const ws = await tmpProject('lg-oc-ws-');
    const data = await tmpdir('lg-oc-data-');
    await fs.mkdir(path.join(data, 'opencode'));
    await fs.writeFile(
      path.join(data, 'opencode', 'opencode.db'),
      await databaseBytes((db) => {
        addSession(db, 'ses_here', path.join(ws, 'packages', 'app'), LOOP);
        addSession(db, 'ses_elsewhere', '/somewhere/else', LOOP);
      }),
    );
    await fs.mkdir(path.join(ws, '.github', 'guardian'), { recursive: true });
    await fs.writeFile(path.join(ws, '.github', 'guardian', 'config.json'), JSON.stringify({ agents: { opencode: { enabled: true } } }));
    const r = await cli(['scan', '--json'], { cwd: ws, env: { XDG_DATA_HOME: data } });
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout) as { findings: { action: string; session: string; file: string }[] };
    assert.deepEqual([...new Set(out.findings.map((f) => f.session))], ['ses_here']);
    assert.equal(out.findings[0]?.file, path.join(data, 'opencode', 'opencode.db'));
  });
});
