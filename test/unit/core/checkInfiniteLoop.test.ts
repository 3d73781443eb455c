import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkInfiniteLoop, countConsecutive, type InvocationRecord } from '../../../src/core/checkInfiniteLoop';
import { describeShared, SEEDS } from '../helpers';

interface SeedExample {
  title: string;
  input: { agent_name: string; config: Record<string, unknown>; max_repeats?: number };
  history: InvocationRecord[];
  output: unknown;
}

/**
 * The five worked examples, read from seed 000 itself: its Input, Invocation History and Output
 * blocks. The seed's text shows the siren emoji mis-decoded (UTF-8 read as cp1252); it means 🚨.
 */
function seedExamples(): SeedExample[] {
  const seed = readFileSync(path.join(SEEDS, '000_ad9ba1a556bfd41e.txt'), 'utf8').replace(/ðŸš¨/g, '🚨');
  const sections = seed.split(/^### (Example \d+: .*)$/m).slice(1);
  const examples: SeedExample[] = [];
  for (let i = 0; i < sections.length; i += 2) {
    const title = sections[i] as string;
    const body = (sections[i + 1] as string).split(/^## /m)[0] as string;
    const blocks = [...body.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] as string) as unknown);
    const input = blocks[0] as SeedExample['input'];
    const output = blocks[blocks.length - 1];
    const history = blocks.length === 3 ? (blocks[1] as { invocations: InvocationRecord[] }).invocations : [];
    examples.push({ title, input, history, output });
  }
  return examples;
}

describeShared('check-infinite-loop (seed 000)', 'the seed documents', () => {
  const examples = seedExamples();

  it('finds the five worked examples in the seed', () => {
    assert.equal(examples.length, 5);
  });

  for (const ex of seedExamples()) {
    it(`reproduces ${ex.title} exactly`, () => {
      assert.deepEqual(checkInfiniteLoop(ex.history, ex.input), ex.output);
    });
  }

  const fixer = (config: Record<string, unknown>, extra: Partial<InvocationRecord> = {}): InvocationRecord => ({ agent_name: 'bug-fixer', config, ...extra });

  it('compares configs deeply, whatever the key order', () => {
    const history = [fixer({ a: 1, b: { c: [1, 2] } }), fixer({ b: { c: [1, 2] }, a: 1 }), fixer({ a: 1, b: { c: [1, 2] } })];
    assert.equal(countConsecutive(history, 'bug-fixer', { b: { c: [1, 2] }, a: 1 }), 3);
    assert.equal(checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: { a: 1, b: { c: [1, 2] } } }).action, 'halt');
  });

  it('keeps array order significant in configs', () => {
    const history = [fixer({ files: ['a', 'b'] }), fixer({ files: ['a', 'b'] })];
    assert.equal(countConsecutive(history, 'bug-fixer', { files: ['b', 'a'] }), 0);
  });

  it('matches empty configs with empty configs', () => {
    const history = [fixer({}), fixer({}), fixer({})];
    assert.equal(checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: {} }).invocation_count, 3);
  });

  it('counts only from the most recent backwards', () => {
    const history = [fixer({ p: 1 }), fixer({ p: 1 }), fixer({ p: 1 }), fixer({ p: 2 })];
    const r = checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: { p: 1 } });
    assert.equal(r.invocation_count, 0);
    assert.equal(r.action, 'continue');
  });

  it('halts at a custom threshold and not before', () => {
    const history = [fixer({ p: 1 }), fixer({ p: 1 }), fixer({ p: 1 }), fixer({ p: 1 })];
    assert.equal(checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: { p: 1 }, max_repeats: 5 }).action, 'continue');
    assert.equal(checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: { p: 1 }, max_repeats: 4 }).action, 'halt');
    assert.equal(checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: { p: 1 }, max_repeats: 5 }).message, 'No loop detected - same agent+config invoked 4 times, below the limit of 5');
  });

  it('shows at most the five most recent invocations', () => {
    const history = Array.from({ length: 9 }, (_, i) => fixer({ p: 1 }, { timestamp: `t${i}` }));
    const r = checkInfiniteLoop(history, { agent_name: 'bug-fixer', config: { p: 1 } });
    assert.deepEqual(
      r.diagnostic_info.recent_invocations.map((x) => x.timestamp),
      ['t4', 't5', 't6', 't7', 't8'],
    );
    assert.equal(r.invocation_count, 9);
  });

  it('analyses the suspected cause from results and reasons', () => {
    const halt = (records: InvocationRecord[], agent = 'bug-fixer') =>
      checkInfiniteLoop(records, { agent_name: agent, config: records[0]?.config ?? {} }).diagnostic_info.suspected_cause;
    assert.equal(halt(Array.from({ length: 3 }, () => fixer({}, { result: 'failed', reason: 'Tests failed: 3 failing' }))), 'Worker fails tests repeatedly - tests fail after modifications');
    assert.equal(halt(Array.from({ length: 3 }, () => fixer({}, { result: 'timeout' }))), 'Worker times out repeatedly - the task exceeds its time limit');
    assert.equal(halt([fixer({}, { result: 'failed' }), fixer({}, { result: 'success' }), fixer({}, { result: 'failed' })]), 'Worker produces inconsistent results - review worker logs for details');
    assert.equal(halt(Array.from({ length: 3 }, () => fixer({}))), 'Unknown pattern - review worker logs for details');
    assert.equal(halt(Array.from({ length: 3 }, () => fixer({}, { result: 'failed', reason: 'Build failed' }))), 'Worker fails build repeatedly - build process broken by changes');
  });
});
