import * as assert from 'node:assert/strict';
import { Engine, progressOf } from '../../../src/core/engine';
import { IncidentBook } from '../../../src/core/incidentBook';
import { config, located, times } from '../helpers';

const failingEdit = (i: number) => ({ type: 'tool', session: 's', tool: 'apply_code_edit', args: { file_path: 'src/a.ts', search: 'foo()', replace: 'bar()' }, id: `e${i}`, ok: false, error: 'search text not found in src/a.ts' });
const read = (i: number) => ({ type: 'tool', session: 's', tool: 'read_file', args: { path: `f${i}.ts` }, id: `r${i}`, ok: true, output: `content ${i}` });

/** An engine fed one event at a time, as the editor reads a growing log; `progress` as the monitor tells it. */
function feeder() {
  const engine = new Engine(config(), { trackNews: true });
  let n = 0;
  const feed = (events: readonly Record<string, unknown>[]) => {
    for (const e of located(events)) {
      engine.push({ ...e, ref: { ...e.ref, event: n, line: n + 1 } });
      n++;
    }
    return engine.active();
  };
  return Object.assign(feed, { progress: (session: string) => progressOf(engine, session) });
}

describe('incident book: one loop, one incident over time', () => {
  it('an agent retrying one failing edit for 8 seconds is one incident that grows, not one per finding or per retry', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 60_000 });
    let opened = 0;
    let changed = 0;
    for (let second = 0; second < 8; second++) {
      const c = book.update(feed([failingEdit(second)]), second * 1000);
      opened += c.opened.length;
      changed += c.changed.length;
      assert.equal(c.closed.length, 0);
    }
    assert.equal(opened, 1, 'opened once');
    assert.ok(changed >= 5, `grew in place (${changed} changes)`);
    const [only, ...rest] = book.open;
    assert.equal(rest.length, 0);
    assert.equal(only?.action, 'halt');
    assert.equal(only?.count, 8, 'its count is the number of retries');
    assert.match(only?.lead.message ?? '', /8 times/, 'its words say the same number as its count');
    assert.ok((only?.findings.length ?? 0) >= 2, 'several signals, each still there as a reason');
  });

  it('a budget that crosses a higher level is the same loop become more severe, not one over and another begun', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 60_000 });
    const usage = (used: number) => ({ type: 'usage', session: 's', task: 'T', used, budget: 1000 });
    const first = book.update(feed([usage(700)]), 0);
    assert.equal(first.opened.length, 1);
    const id = first.opened[0]?.id;
    for (const [i, used] of [800, 900, 950, 1001].entries()) {
      const c = book.update(feed([usage(used)]), (i + 1) * 1000);
      assert.deepEqual([c.opened.length, c.closed.length], [0, 0], `at ${used} tokens nothing opened or closed`);
    }
    const [only, ...rest] = book.open;
    assert.equal(rest.length, 0);
    assert.deepEqual([only?.id, only?.action, only?.state], [id, 'halt', 'open']);
    assert.match(only?.lead.message ?? '', /1001 of 1000 tokens\): violation$/);
    assert.equal(book.closed.length, 0, 'nothing "over: the agent moved on"');
  });

  it('keeps its id while it grows and across signals that join later', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 0 });
    book.update(feed(times(2, failingEdit)), 0);
    const first = book.open[0]?.id;
    book.update(feed(times(6, (i) => failingEdit(i + 2))), 1);
    assert.equal(book.open.length, 1);
    assert.equal(book.open[0]?.id, first);
  });

  it('ends with progress: the agent reads the file and makes a different edit that succeeds; the incident closes as resolved, kept under closed', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 0 });
    book.update(feed(times(4, failingEdit)), 0);
    assert.equal(book.open.length, 1);
    const c = book.update(feed([read(1), { ...failingEdit(9), args: { file_path: 'src/a.ts', search: 'foo ()', replace: 'bar()' }, ok: true, error: undefined, output: 'edited' }]), 5, feed.progress);
    assert.equal(c.closed.length, 1);
    assert.equal(c.closed[0]?.end, 'progress');
    assert.equal(book.open.length, 0);
    assert.equal(book.closed[0]?.id, c.closed[0]?.id);
    // The circuit breaker's finding on that exact edit stays active (seed 004): read again, it does not reopen.
    assert.equal(book.update(feed([]), 6, feed.progress).opened.length, 0);
  });

  it('a loop with reads between its retries is not progress: reading the same file again is nothing new', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 0 });
    let opened = 0;
    let closed = 0;
    for (let i = 0; i < 6; i++) {
      const c = book.update(feed([{ ...read(0) }, failingEdit(i)]), i, feed.progress);
      opened += c.opened.length;
      closed += c.closed.length;
    }
    assert.equal(opened, 1);
    assert.equal(closed, 0);
  });

  it('ends when idle past the setting, and opens again only if it grows', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 10_000 });
    const active = feed(times(4, failingEdit));
    book.update(active, 0);
    assert.equal(book.tick(9_999).closed.length, 0);
    const idle = book.tick(10_000).closed;
    assert.equal(idle[0]?.end, 'idle');
    // The same findings read again (a rescan) do not bring it back.
    assert.equal(book.update(active, 11_000).opened.length, 0);
    assert.equal(book.open.length, 0);
    // The agent retries again: it is back, under the same id.
    const back = book.update(feed([failingEdit(20)]), 12_000).opened;
    assert.equal(back.length, 1);
    assert.equal(back[0]?.id, idle[0]?.id);
  });

  it('a dismissed incident stays dismissed while it grows, and opens again only when it becomes more severe', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 0 });
    // Two identical failures: a warning so far (the halt comes with the third).
    const warned = book.update(feed(times(2, (i) => ({ ...failingEdit(i), error: 'HTTP 503 Service Unavailable' }))), 0).opened;
    assert.equal(warned.length, 1);
    const before = warned[0]?.action;
    assert.notEqual(before, 'halt');
    assert.equal(book.dismiss(warned[0]?.id as string, 1)?.end, 'dismissed');
    assert.equal(book.open.length, 0);
    const later = book.update(feed(times(6, (i) => ({ ...failingEdit(i + 2), error: 'HTTP 503 Service Unavailable' }))), 2);
    assert.equal(later.opened.length, 1, 'became a halt: it is back');
    assert.equal(later.opened[0]?.action, 'halt');
    book.dismiss(later.opened[0]?.id as string, 3);
    assert.equal(book.update(feed([{ ...failingEdit(30), error: 'HTTP 503 Service Unavailable' }]), 4).opened.length, 0, 'a dismissed halt that grows stays dismissed');
  });

  it('dismissAll closes every open incident; separate loops are separate incidents', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 0 });
    book.update(feed([...times(3, failingEdit), ...times(5, read), ...times(3, (i) => ({ ...failingEdit(i + 10), args: { file_path: 'src/b.ts', search: 'x', replace: 'y' } }))]), 0);
    assert.equal(book.open.length, 2);
    assert.equal(book.dismissAll(1).length, 2);
    assert.equal(book.open.length, 0);
    assert.equal(book.closed.length, 2);
  });

  it('a read from the start shows partial findings without closing, reopening or notifying anything; the whole read then changes nothing', () => {
    // The editor reads every log again (Scan Now, a config change): halfway through, the findings
    // are those of the logs read so far. Before the preview, the book closed the loops of the logs
    // not read yet as "progress", and they stayed closed.
    const book = new IncidentBook({ idleMs: 0 });
    const loopA = times(4, failingEdit);
    const loopB = times(3, (i) => ({ ...failingEdit(i + 10), args: { file_path: 'src/b.ts', search: 'x', replace: 'y' } }));
    const first = feeder();
    book.update(first([...loopA, ...times(5, read), ...loopB]), 0);
    assert.equal(book.open.length, 2);
    const dismissed = book.open.find((i) => i.lead.subject.includes('src/b.ts') || i.lead.message.includes('src/b.ts')) ?? book.open[1];
    book.dismiss(dismissed?.id as string, 1);
    const kept = book.open[0]?.id;

    const again = feeder();
    const partial = again(loopA.slice(0, 2));
    const shown = book.preview(partial, 2);
    assert.deepEqual(shown.map((i) => i.id), [kept], 'the open loop stays open and the same, though only half its evidence is read again');
    assert.equal(book.open.length, 1, 'the preview changed nothing');
    assert.equal(book.closed.length, 1);

    const whole = again([...loopA.slice(2), ...times(5, read), ...loopB]);
    const c = book.update(whole, 3);
    assert.deepEqual([c.opened.length, c.closed.length], [0, 0], 'the same logs read again: nothing opened, nothing ended');
    assert.deepEqual(book.open.map((i) => i.id), [kept]);
    assert.equal(book.closed[0]?.end, 'dismissed', 'the dismissed loop stays dismissed');
  });

  it('the preview of a first read shows a new loop as open, without entering it in the book', () => {
    const book = new IncidentBook({ idleMs: 0 });
    const shown = book.preview(feeder()(times(3, failingEdit)), 5);
    assert.equal(shown.length, 1);
    assert.equal(shown[0]?.state, 'open');
    assert.equal(book.open.length, 0);
    assert.equal(book.update(feeder()(times(3, failingEdit)), 6).opened[0]?.id, shown[0]?.id, 'the whole read opens it under the id it was shown with');
  });

  it('keeps a bounded number of closed incidents', () => {
    const feed = feeder();
    const book = new IncidentBook({ idleMs: 0, keepClosed: 3 });
    for (let k = 0; k < 10; k++) {
      book.update(feed(times(3, (i) => ({ ...failingEdit(k * 10 + i), args: { file_path: `src/${k}.ts`, search: 'x' } }))), k);
      book.update(feed([read(k), { ...failingEdit(k * 10 + 9), args: { file_path: `src/${k}.ts`, search: 'y' }, ok: true, error: undefined, output: `ok ${k}` }]), k, feed.progress);
    }
    assert.equal(book.closed.length, 3);
  });
});
