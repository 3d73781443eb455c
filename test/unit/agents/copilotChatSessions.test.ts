import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { copilotChatSessionLog } from '../../../src/agents/copilot/chatSessionLog';
import type { LocatedEvent, SkippedLine } from '../../../src/core/events';
import { AgentLogReader } from '../../../src/watch/agentLog';
import { cli, describeShared, FIXTURES, tmpdir, write } from '../helpers';
import { chat, failing, loopingSession, T } from './copilotChatShapes';
import { decode, halts, jsonlText, replayText } from './util';

const { snapshot, request, terminal, read, edit, mcp, text, set, push, del } = chat;
describe('Copilot in VS Code: the chat session operation log', () => {
  it('replays the log into requests and calls: each prompt a user turn, each call once with its command and exit code', () => {
    const { events, skipped } = decode(copilotChatSessionLog, loopingSession());
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      events.map((e) => [e.line, e.event.type, e.event.type === 'tool' ? `${e.event.id} ${e.event.ok}` : '']),
      [
        [2, 'user', ''],
        [4, 'tool', 'call_1 false'],
        [5, 'tool', 'call_2 false'],
        [5, 'tool', 'call_3 false'],
      ],
    );
    const [user, first] = events.map((e) => e.event);
    assert.equal(user?.type === 'user' && user.text, 'make the tests pass');
    assert.equal(user?.session, 'chat-1');
    assert.equal(user?.agent, 'copilot-vscode');
    assert.equal(user?.ts, '2026-11-20T10:00:00.000Z');
    assert.equal(first?.type === 'tool' && first.tool, 'run_in_terminal');
    assert.deepEqual(first?.type === 'tool' && first.args, { command: 'npm test' });
    assert.match(first?.type === 'tool' ? String(first.error) : '', /^exit code 1\nFAIL src\/a\.test\.ts/);
    assert.equal(first?.ts, '2026-11-20T10:00:05.000Z');
  });

  it('replay: the same failing command three times halts; the file is recognised by its first line, and by --format copilot', async () => {
    const auto = await replayText('2f1c.jsonl', jsonlText(loopingSession()));
    assert.equal(auto.format, 'copilot');
    assert.deepEqual(auto.skippedLines, []);
    assert.ok(halts(auto).length > 0, JSON.stringify(auto.findings.map((f) => `${f.action} ${f.signal}`)));
    const named = await replayText('2f1c.jsonl', jsonlText(loopingSession()), 'copilot');
    assert.deepEqual(
      named.findings.map((f) => `${f.action} ${f.signal}`),
      auto.findings.map((f) => `${f.action} ${f.signal}`),
    );
  });

  it('replay: a healthy session (reads of other lines, edits, a test that fails then passes after a fix) raises nothing', async () => {
    const records = [
      snapshot(),
      push(['requests'], [request('request_1', 'fix the footer')]),
      set(['requests', 0, 'response'], [read('c1', '/p/Footer.tsx'), read('c2', '/p/Footer.tsx', [1, 80]), read('c3', '/p/Footer.tsx', [80, 160])]),
      push(['requests', 0, 'response'], [edit('c4'), edit('c5'), edit('c6'), terminal('c7', 'npm test', { exitCode: 1, output: 'FAIL Footer.test.tsx' })], 3),
      push(['requests', 0, 'response'], [edit('c8'), terminal('c9', 'npm test', { exitCode: 0, output: 'PASS Footer.test.tsx' }), text('Done.')], 7),
      set(['requests', 0, 'modelState'], { value: 1, completedAt: T + 90_000 }),
    ];
    const { events } = decode(copilotChatSessionLog, records);
    assert.equal(events.filter((e) => e.event.type === 'tool').length, 9);
    // An edit records no arguments: each is a call of its own, not three identical ones.
    const edits = events.flatMap((e) => (e.event.type === 'tool' && e.event.tool === 'copilot_replaceString' ? [e.event.args] : []));
    assert.deepEqual(edits[0], { message: 'Using "Replace String in File"', call: 'c4' });
    const result = await replayText('healthy.jsonl', jsonlText(records));
    assert.deepEqual(result.findings.map((f) => `${f.action} ${f.signal}`), []);
  });

  it('an MCP call: its raw input is its arguments, resultDetails.isError its failure; a denied call did not run', () => {
    const records = [
      snapshot([request('r1', 'update the entry', [mcp('m1', { entry_id: 'x', fields: {} }, "Error calling tool 'update_entry_fields': 400", true), mcp('m2', { entry_id: 'y' }, '{"ok":true}', false)])]),
      push(['requests'], [request('r2', 'run it', [{ ...terminal('t1', 'rm -rf build'), isConfirmed: { type: 0 } }], 2)]),
    ];
    const { events } = decode(copilotChatSessionLog, records);
    const tools = events.flatMap((e) => (e.event.type === 'tool' ? [e.event] : []));
    assert.deepEqual(tools.map((t) => [t.id, t.args, t.ok, t.error ?? t.output]), [
      ['m1', { entry_id: 'x', fields: {} }, false, "Error calling tool 'update_entry_fields': 400"],
      ['m2', { entry_id: 'y' }, true, '{"ok":true}'],
      ['t1', { command: 'rm -rf build' }, false, 'denied: the call did not run'],
    ]);
  });

  it('a call still running at a save waits for the next; a call that ended without an outcome on record is a tool and an empty tool_result', () => {
    const records = [
      snapshot([request('r1', 'look around', [read('c1', '/p/a.ts')])]),
      // c1 is the last part and its request runs: it may still be running.
      push(['requests', 0, 'response'], [text('Now the tests.'), terminal('c2', 'npm test')], 1),
      // A later part: c1 ended (its result is not on record); c2 runs on.
      set(['requests', 0, 'modelState'], { value: 2, completedAt: T + 10_000 }),
      // Cancelled: c2 ended too.
    ];
    const { events } = decode(copilotChatSessionLog, records);
    assert.deepEqual(
      events.map((e) => [e.line, e.event.type, 'id' in e.event ? e.event.id : '', e.event.type === 'tool' || e.event.type === 'tool_result' ? e.event.ok : '']),
      [
        [1, 'user', '', ''],
        [2, 'tool', 'c1', undefined],
        [2, 'tool_result', 'c1', undefined],
        [3, 'tool', 'c2', undefined],
        [3, 'tool_result', 'c2', undefined],
      ],
    );
    // Its outcome is not on record: it is compared with no other call.
    assert.deepEqual(events[1]?.event.type === 'tool' && events[1].event.args, { message: 'Reading [](file:///p/a.ts)', call: 'c1' });
    assert.deepEqual(events[3]?.event.type === 'tool' && events[3].event.args, { command: 'npm test', call: 'c2' });
  });

  it('a new snapshot (the file compacted) reports only what is new: requests and calls keep their identity', () => {
    const before = loopingSession().slice(0, 4);
    const compacted = snapshot([request('request_1', 'make the tests pass', [text('Let me run the tests.'), failing('call_1'), text('Still failing; again.'), terminal('call_2', 'npm test', { exitCode: 0, output: 'PASS' })], 1), request('request_2', 'now lint')]);
    const { events } = decode(copilotChatSessionLog, [...before, compacted, set(['requests', 1, 'response'], [terminal('call_9', 'npm run lint', { exitCode: 0, output: 'ok' })])]);
    assert.deepEqual(
      events.map((e) => [e.line, e.event.type, e.event.type === 'tool' ? `${e.event.id} ${e.event.ok}` : e.event.type === 'user' ? e.event.text : '']),
      [
        [2, 'user', 'make the tests pass'],
        [4, 'tool', 'call_1 false'],
        [5, 'tool', 'call_2 true'],
        [5, 'user', 'now lint'],
        [6, 'tool', 'call_9 true'],
      ],
    );
  });

  it('skips what it cannot apply, with the line and the field, and goes on: an unknown kind, an operation before the snapshot, a path that is not there, an unknown key', () => {
    const { events, skipped } = decode(copilotChatSessionLog, [
      set(['requests', 0, 'modelState'], { value: 1 }),
      snapshot([request('r1', 'go')]),
      { kind: 7, k: ['requests'], v: [] },
      { k: ['requests'] },
      set(['requests', 4, 'result'], {}),
      set(['requests', 0, 'brandNewField'], 1),
      set(['customTitle'], 'A title'),
      set(['somethingNew'], 1),
      push(['requests', 0, 'response'], [failing('c1')], -1),
      'not an object',
      del(['requests', 0, 'response', 0, 'toolSpecificData']),
      push(['requests', 0, 'response'], [failing('c1')]),
      set(['requests', 0, 'brandNewField'], 2),
    ]);
    assert.deepEqual(
      skipped.map((s) => [s.line, s.field]),
      [
        [1, 'kind'],
        [3, 'kind'],
        [4, 'kind'],
        [5, 'k'],
        [6, 'k'],
        [8, 'k'],
        [9, 'i'],
        [10, '(line)'],
        [11, 'k'],
      ],
    );
    assert.match(skipped[0]?.reason ?? '', /before the session's snapshot/);
    assert.match(skipped[1]?.reason ?? '', /unknown operation kind 7/);
    assert.match(skipped[3]?.reason ?? '', /no request 4 \(the session has 1\)/);
    assert.match(skipped[4]?.reason ?? '', /unknown key "brandNewField" in a request/);
    assert.deepEqual(
      events.map((e) => e.event.type),
      ['user', 'tool'],
    );
  });

  it('reads a pre-1.104 boolean isConfirmed and a legacy terminal command; a part without a toolCallId is reported once, not as a call', () => {
    const legacy = { kind: 'toolInvocationSerialized', invocationMessage: 'Using "Run in Terminal"', isConfirmed: false, isComplete: true, toolSpecificData: { kind: 'terminal', command: 'make', language: 'sh' }, toolCallId: 'old-uuid', toolId: 'run_in_terminal' };
    const { events, skipped } = decode(copilotChatSessionLog, [snapshot([request('r1', 'build', [legacy, { ...read('', '/p/a'), toolCallId: undefined }], 1)]), set(['customTitle'], 'x')]);
    assert.deepEqual(events.filter((e) => e.event.type === 'tool').map((e) => e.event.type === 'tool' && [e.event.args, e.event.ok]), [[{ command: 'make' }, false]]);
    assert.deepEqual(skipped.map((s) => [s.line, s.field]), [[1, 'requests[0].response[1].toolCallId']]);
  });
});

describe('Copilot in VS Code: the chat session log read as VS Code writes it', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await tmpdir('lg-chatlog-');
    file = path.join(dir, 'chat-1.jsonl');
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  const collect = () => {
    const events: LocatedEvent[] = [];
    const skipped: SkippedLine[] = [];
    return { events, skipped, sink: { event: (e: LocatedEvent) => events.push(e), skipped: (s: SkippedLine) => skipped.push(s) } };
  };
  const calls = (events: LocatedEvent[]) => events.flatMap((e) => (e.event.type === 'tool' ? [e.event.id] : []));

  it('reads what is appended, holding a last line until it is written whole', async () => {
    const rest = loopingSession().map((r) => JSON.stringify(r) + '\n');
    const first = rest.shift() as string;
    const reader = new AgentLogReader(file, 'chat-1.jsonl', copilotChatSessionLog);
    const out = collect();
    const half = rest[2] as string;
    await fs.writeFile(file, first + rest[0] + rest[1] + half.slice(0, 40));
    await reader.read(out.sink);
    assert.deepEqual(calls(out.events), []);
    await fs.appendFile(file, half.slice(40));
    await reader.read(out.sink);
    assert.deepEqual(calls(out.events), ['call_1']);
    await fs.appendFile(file, rest.slice(3).join(''));
    const last = await reader.read(out.sink);
    assert.equal(last.reset, false);
    assert.deepEqual(calls(out.events), ['call_1', 'call_2', 'call_3']);
    assert.deepEqual(out.skipped, []);
  });

  it('a snapshot line too long to hold is reported, and the operations after it are reported once and counted, until the next snapshot', async () => {
    const session = loopingSession();
    await fs.writeFile(file, jsonlText([snapshot([request('r0', 'x'.repeat(5_000))]), ...session.slice(1, 4), session[0], ...session.slice(1, 3)]));
    const reader = new AgentLogReader(file, 'chat-1.jsonl', copilotChatSessionLog, { chunkSize: 1_024, maxLineBytes: 4_000 });
    const out = collect();
    await reader.read(out.sink);
    assert.deepEqual(
      out.skipped.map((s) => [s.line, s.field, s.reason.replace(/\d{4,}/, 'N')]),
      [
        [1, '(line)', 'line of N bytes is too long'],
        [2, 'kind', "an operation (kind 2) before the session's snapshot (kind 0): nothing to apply it to; the ones after it are counted until the next snapshot"],
        [5, 'kind', '2 more operation(s) before a snapshot skipped (lines 3 to 4)'],
      ],
    );
    assert.deepEqual(out.events.map((e) => e.event.type), ['user']);
  });

  it('a file rewritten in place from a fresh snapshot is read again without reporting anything twice, and not as a reset', async () => {
    const records = loopingSession().slice(0, 4);
    await fs.writeFile(file, jsonlText(records));
    const reader = new AgentLogReader(file, 'chat-1.jsonl', copilotChatSessionLog);
    const out = collect();
    await reader.read(out.sink);
    assert.deepEqual(calls(out.events), ['call_1']);
    // VS Code's compaction: the same file, written over (same inode), one snapshot of the state,
    // longer than what was read, and starting with the same bytes.
    const state = snapshot([request('request_1', 'make the tests pass', [text('Let me run the tests.'), failing('call_1'), text('Still failing; again.'), failing('call_2'), text('Once more.'), terminal('call_3', 'npm test')])]);
    const before = await fs.readFile(file, 'utf8');
    const after = jsonlText([state]);
    assert.ok(after.length > before.length && after.slice(0, 256) === before.slice(0, 256), 'the rewrite a tail must notice: longer, and the same first bytes');
    const handle = await fs.open(file, 'r+');
    await handle.truncate(0);
    await handle.write(after, 0);
    await handle.close();
    const rewritten = await reader.read(out.sink);
    assert.equal(rewritten.reset, false, 'what was counted stays counted');
    assert.deepEqual(calls(out.events), ['call_1', 'call_2']);
    await fs.appendFile(file, jsonlText([push(['requests', 0, 'response'], [failing('call_3')], 5)]));
    await reader.read(out.sink);
    assert.deepEqual(calls(out.events), ['call_1', 'call_2', 'call_3']);
    assert.equal(out.events.filter((e) => e.event.type === 'user').length, 1);
    assert.deepEqual(out.skipped, []);
  });
});

describe('Copilot in VS Code: chat session logs through the CLI (dist/cli.js)', () => {
  it('replay reads one and exits 1 on its loop; scan finds this workspace\'s in VS Code\'s storage once copilot is opted in', async () => {
    const ws = await tmpdir('lg-ws-');
    const storage = await tmpdir('lg-wsstorage-');
    await write(storage, 'ab12/workspace.json', JSON.stringify({ folder: `file://${ws}` }));
    const log = await write(storage, 'ab12/chatSessions/chat-1.jsonl', jsonlText(loopingSession()));

    const replay = await cli(['replay', log, '--json']);
    assert.equal(replay.code, 1, replay.stderr);
    const out = JSON.parse(replay.stdout) as { format: string; events: number; skipped: number; findings: { signal: string; action: string; line: number }[] };
    assert.deepEqual([out.format, out.events, out.skipped], ['copilot', 4, 0]);
    assert.ok(out.findings.some((f) => f.action === 'halt' && f.line === 5));
    const human = await cli(['replay', log, '--format', 'copilot']);
    assert.match(human.stdout, /4 event\(s\) \(copilot\), 0 line\(s\) skipped/);

    const quiet = await cli(['scan', '--workspace', ws, '--json']);
    assert.equal(quiet.code, 0, 'not opted in: not read');
    await write(ws, '.github/guardian/config.json', JSON.stringify({ agents: { copilot: { enabled: true, home: storage } } }));
    const scan = await cli(['scan', '--workspace', ws, '--json']);
    assert.equal(scan.code, 1, scan.stderr);
    const found = JSON.parse(scan.stdout) as { files: string[]; events: number; findings: { action: string; file: string; active: boolean }[] };
    assert.ok(found.files.includes(log));
    assert.equal(found.events, 4);
    assert.ok(found.findings.some((f) => f.action === 'halt' && f.active && f.file === log));
  });
});

describeShared('Copilot in VS Code: real chat sessions replayed as session logs', 'the real transcripts', () => {
  // The real exports are the session state VS Code serializes (ISerializableChatData): here each
  // is a log that starts empty and gets its requests pushed one by one, as VS Code's writer would.
  const dir = path.join(FIXTURES, 'real', 'copilot-vscode');
  for (const name of ['dealenx-chat_error_mcp.json', 'dealenx-chat_succes_mcp.json', 'digitarald-fix-deploy.json', 'digitarald-plan.json', 'digitarald-small.json', 'digitarald-tdd-review.json', 'digitarald-thinking.json']) {
    it(`${name}: every tool call once, nothing skipped, no halt (the corpus judges it free of loops)`, async () => {
      const doc = JSON.parse(await fs.readFile(path.join(dir, name), 'utf8')) as { requests: { response?: { kind?: string; toolCallId?: string }[] }[] };
      const records = [snapshot([], name), ...doc.requests.map((r) => push(['requests'], [r]))];
      const { events, skipped } = decode(copilotChatSessionLog, records);
      assert.deepEqual(skipped, []);
      const ids = doc.requests.flatMap((r) => (r.response ?? []).flatMap((p) => (p.kind === 'toolInvocationSerialized' && p.toolCallId ? [p.toolCallId] : [])));
      assert.deepEqual(events.flatMap((e) => (e.event.type === 'tool' ? [e.event.id] : [])), ids);
      const result = await replayText(name.replace(/\.json$/, '.jsonl'), jsonlText(records));
      assert.equal(result.format, 'copilot');
      assert.deepEqual(halts(result), []);
    });
  }
});
