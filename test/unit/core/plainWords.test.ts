import * as assert from 'node:assert/strict';
import { sayCall, times } from '../../../src/core/plainWords';

describe('plain words: a call as a person would say it', () => {
  it('says commands, edits, searches and paths without argument JSON', () => {
    assert.equal(sayCall('bash', '{"command":"npm test"}'), 'bash: npm test');
    assert.equal(sayCall('apply_code_edit', { file_path: 'src/a.ts', search: 'foo()', replace: 'bar()' }), 'apply_code_edit src/a.ts: search "foo()"');
    assert.equal(sayCall('Edit', { file_path: '/w/src/a.ts', old_string: 'const x = 1;\n', new_string: 'y' }), 'Edit /w/src/a.ts: search "const x = 1;"');
    assert.equal(sayCall('grep_search', { query: 'TODO', path: 'src' }), 'grep_search "TODO" in src');
    assert.equal(sayCall('read_file', '{"path":"a.ts"}'), 'read_file a.ts');
    assert.equal(sayCall('web_fetch', { url: 'https://example.com/x' }), 'web_fetch "https://example.com/x"');
    assert.equal(sayCall('submit', { command: 'submit flag{x}' }), 'submit flag{x}');
    assert.equal(sayCall('set_mode', { mode: 'plan', force: true, nested: { a: 1 } }), 'set_mode mode=plan force=true');
    assert.equal(sayCall('noop', '{}'), 'noop');
    assert.equal(sayCall('noop', { nested: { a: 1 } }), 'noop');
  });

  it('never cuts mid-token into JSON, and stays short', () => {
    const long = sayCall('bash', { command: `echo ${'x'.repeat(500)}` });
    assert.ok(long.length <= 100, long);
    assert.ok(long.endsWith('…'));
    assert.ok(!/[{}]/.test(sayCall('apply_code_edit', '{"file_path":"src/a.ts","replace":"bar()","search":"foo()"}')));
    // Not JSON: said as it is, clipped.
    assert.equal(sayCall('tool', 'not json'), 'tool not json');
  });

  it('counts in words', () => {
    assert.deepEqual([1, 2, 3].map(times), ['once', 'twice', '3 times']);
  });
});
