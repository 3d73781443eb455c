import { strict as assert } from 'node:assert';
import type { Finding } from '../../../src/core/finding';
import type { ReplayResult } from '../../../src/watch/replay';
import { BATCH, FILE, NOT_READ, nonConverging, SOURCE, thrash, Transcript } from './issue34Sessions';
import { replayText } from './util';

/*
 * Issue 34's loops a person sees at once, each a session of our own written in Claude Code's
 * transcript format (the records' shapes as in the real transcripts of ../shared/fixtures/real/claude:
 * a subagent's sidechain records, tool_use / tool_result blocks, `<tool_use_error>` refusals, the
 * `compact_boundary` system record and the `isCompactSummary` user record of slopometry-0f112eb4.jsonl,
 * lines 398-399), beside the healthy look-alikes they must not halt. Each verdict below was written
 * from reading the session, before the guardian was run on it.
 */

const of = (r: ReplayResult, signal: Finding['signal']) => r.findings.filter((f) => f.signal === signal).map((f) => `${f.action} ${f.count}`);
const haltsOf = (r: ReplayResult) => r.findings.filter((f) => f.action === 'halt').map((f) => f.signal);

describe('issue 34: a Read→Edit cycle on one file that never converges', () => {
  it('the same two errors alternating on one file, across an Edit, a Write, a smaller old_string and another spelling of the path: halted at the third cycle', async () => {
    const r = await replayText('a3f91c2.jsonl', nonConverging(6).text());
    assert.equal(r.format, 'claude');
    assert.deepEqual(of(r, 'stuck-target'), ['halt 3']);
    const halt = r.findings.find((f) => f.signal === 'stuck-target') as Finding;
    // The third failed change: each cycle is a Read and its result, then the change and its result (records 2..), the prompt first.
    assert.equal(halt.at.line, 1 + 4 * 2 + 4);
    assert.match(halt.message, /total\.ts failed 3 times.*Edit, Write.*the same two errors in turn/);
  });

  it('two cycles only: no halt yet', async () => {
    const r = await replayText('a3f91c2.jsonl', nonConverging(2).text());
    assert.deepEqual(haltsOf(r), []);
  });

  it('healthy: an edit → test cycle that ends green, each failure a different error, is no loop', async () => {
    const t = new Transcript().prompt('Make the cart tests pass.').call('Read', { file_path: FILE }, SOURCE);
    const failures = ['FAIL src/cart/total.test.ts\n  ✕ applies the discount\n    Expected: 90\n    Received: 100', 'FAIL src/cart/total.test.ts\n  ✕ rounds to cents\n    Expected: 89.99\n    Received: 89.991', "src/cart/total.ts(2,40): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'."];
    failures.forEach((failure, i) => {
      t.call('Edit', { file_path: FILE, old_string: `step ${i}`, new_string: `step ${i + 1}` }, `The file ${FILE} has been updated.`).call('Bash', { command: 'npm test -- src/cart', description: 'Run the cart tests' }, `Exit code 1\n${failure}`, true);
    });
    t.call('Edit', { file_path: FILE, old_string: 'step 3', new_string: 'step 4' }, `The file ${FILE} has been updated.`).call('Bash', { command: 'npm test -- src/cart', description: 'Run the cart tests' }, 'PASS src/cart/total.test.ts (3 tests)');
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.deepEqual(haltsOf(r), []);
    assert.deepEqual(of(r, 'stuck-target'), []);
  });

  it('healthy: an edit refused once, the file read, the edit applied, on file after file, is no loop', async () => {
    const t = new Transcript().prompt('Rename price to unitPrice everywhere.');
    for (const f of ['src/cart/total.ts', 'src/cart/line.ts', 'src/cart/tax.ts', 'src/cart/view.ts']) {
      t.call('Edit', { file_path: f, old_string: 'price', new_string: 'unitPrice', replace_all: true }, NOT_READ, true)
        .call('Read', { file_path: f }, '     1→const price = 1;\n')
        .call('Edit', { file_path: f, old_string: 'price', new_string: 'unitPrice', replace_all: true }, `The file ${f} has been updated.`);
    }
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.deepEqual(haltsOf(r), []);
  });

  it('healthy: a poll of files that really are appearing (a report written file by file) is no loop', async () => {
    const t = new Transcript().prompt('Wait for the benchmark to write its reports, then summarise them.');
    t.call('Bash', { command: 'nohup npm run bench > bench.log 2>&1 &', description: 'Start the benchmark' }, '');
    const listed: string[] = [];
    for (let i = 1; i <= 5; i++) {
      t.call('Read', { file_path: `/home/dev/shop/out/report-${i}.json` }, 'File does not exist.', true);
      listed.push(`report-${i}.json`);
      t.call('Bash', { command: 'sleep 30 && ls out/', description: 'Wait, then list the reports' }, listed.join('\n'));
      t.call('Read', { file_path: `/home/dev/shop/out/report-${i}.json` }, `{"suite": ${i}, "ms": ${100 + i}}`);
    }
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.deepEqual(haltsOf(r), []);
    assert.deepEqual(of(r, 'stuck-target'), []);
  });
});

describe('issue 34: compaction thrash', () => {
  it('compactions with the same batch and the same error text between them: warned at the second cycle, halted at the third', async () => {
    const r = await replayText('a3f91c2.jsonl', thrash(5).text());
    assert.equal(r.byType.compaction, 5, 'each compaction read once (its boundary and its summary are one)');
    assert.deepEqual(of(r, 'compaction-thrash'), ['warn 2', 'halt 3']);
    const halt = r.findings.find((f) => f.signal === 'compaction-thrash' && f.action === 'halt') as Finding;
    assert.match(halt.message, /compacted 3 times in a row.*same 4 calls/);
  });

  it('healthy: a long session that compacts four times while doing different work is no loop', async () => {
    const t = new Transcript().prompt('Migrate the cart module to the new pricing API.');
    const files = ['service.ts', 'line.ts', 'tax.ts', 'view.ts', 'store.ts'];
    files.forEach((f, i) => {
      if (i > 0) t.compact(`Migrated ${files.slice(0, i).join(', ')}; next ${f}.`);
      // After each compaction the plan is read again (the same call, the same answer), then new work.
      t.call('Read', { file_path: '/home/dev/shop/PLAN.md' }, '1. service 2. line 3. tax 4. view 5. store')
        .call('Read', { file_path: `/home/dev/shop/src/cart/${f}` }, `     1→// ${f}\n`)
        .call('Edit', { file_path: `/home/dev/shop/src/cart/${f}`, old_string: 'oldPricing', new_string: 'pricing' }, `The file /home/dev/shop/src/cart/${f} has been updated.`)
        .call('Bash', { command: `npx vitest run src/cart/${f.replace('.ts', '.test.ts')}` }, `PASS src/cart/${f.replace('.ts', '.test.ts')}`);
    });
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.equal(r.byType.compaction, 4);
    assert.deepEqual(of(r, 'compaction-thrash'), []);
    assert.deepEqual(haltsOf(r), []);
  });

  /*
   * Read by a person, before the guardian ran: after each compaction the agent re-reads its plan,
   * edits the same file and runs the same tests; each run fails with another error (a wrong total,
   * then the rounding, then a type error) and the last is green. Work that moves on, not a loop:
   * no halt, no compaction-thrash.
   */
  it('healthy: an edit → test cycle across compactions that ends green, each failure a different error, is no loop', async () => {
    const t = new Transcript().prompt('Make the cart tests pass.');
    const runs = ['FAIL src/cart/total.test.ts\n  ✕ applies the discount\n    Expected: 90\n    Received: 100', 'FAIL src/cart/total.test.ts\n  ✕ rounds to cents\n    Expected: 89.99\n    Received: 89.991', "src/cart/total.ts(2,40): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.", 'PASS src/cart/total.test.ts (3 tests)'];
    runs.forEach((run, i) => {
      if (i > 0) t.compact(`Fixing total.ts; the last test run said: ${runs[i - 1]?.split('\n')[0]}`);
      t.call('Read', { file_path: '/home/dev/shop/PLAN.md' }, '1. discount 2. rounding 3. types')
        .call('Edit', { file_path: FILE, old_string: `step ${i}`, new_string: `step ${i + 1}` }, `The file ${FILE} has been updated.`)
        .call('Bash', { command: 'npm test -- src/cart', description: 'Run the cart tests' }, i < runs.length - 1 ? `Exit code 1\n${run}` : run, i < runs.length - 1);
    });
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.equal(r.byType.compaction, 3);
    assert.deepEqual(of(r, 'compaction-thrash'), []);
    assert.deepEqual(haltsOf(r), []);
  });

  /*
   * Read by a person, before the guardian ran: the agent waits for a benchmark writing its reports
   * one by one; after each compaction it lists the folder and reads what is there, and each time
   * one report more has appeared. The same calls, but the answers grow: waiting on real progress,
   * not a loop.
   */
  it('healthy: a poll across compactions of files that really are appearing is no loop', async () => {
    const t = new Transcript().prompt('Wait for the benchmark to write its five reports, then summarise them.');
    t.call('Bash', { command: 'nohup npm run bench > bench.log 2>&1 &', description: 'Start the benchmark' }, '');
    const listed: string[] = [];
    for (let i = 1; i <= 5; i++) {
      t.compact(`Waiting for the benchmark's reports; ${listed.length} of 5 so far.`);
      listed.push(`report-${i}.json`);
      t.calls({ name: 'Bash', input: { command: 'ls out/', description: 'List the reports' }, result: listed.join('\n') }, { name: 'Read', input: { file_path: '/home/dev/shop/out/summary.txt' }, result: `${listed.length} of 5 suites done` });
    }
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.equal(r.byType.compaction, 5);
    assert.deepEqual(of(r, 'compaction-thrash'), []);
    assert.deepEqual(haltsOf(r), []);
  });

  it('healthy: the same batch after compactions whose answers change (a project that is being indexed) is no loop', async () => {
    const t = new Transcript().prompt('Find where CartService applies discounts.');
    for (let i = 0; i < 4; i++) {
      t.compact(`Waiting for the index (${i}).`).calls(...BATCH.map((b) => ({ ...b, result: `Indexed ${(i + 1) * 25}% of the project; ${b.name.split('__')[2]} will answer when done.` })));
    }
    const r = await replayText('a3f91c2.jsonl', t.text());
    assert.deepEqual(of(r, 'compaction-thrash'), []);
  });
});
