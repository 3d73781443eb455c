import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { hashText } from '../../src/core/canonical';
import fc from 'fast-check';
import { boundedText, boundedValue, MASK, maskSecrets, scanSecrets, SHORTEST_SECRET } from '../../src/core/redact';
import { MAY_HOLD_SECRET } from '../../src/core/secrets';
import { HOOK_LOG_MAX_BYTES } from '../../src/state/hookLog';
import { runHook, tmpdir, write } from '../unit/helpers';

/*
 * Guarantee 6, "bounded records, no secrets": the hook keeps of a call what detection needs (a
 * fingerprint and a short excerpt), masks credentials, and rotates its logs by size.
 */

const LOG = '.tmp/current/logs/hook-claude-S.jsonl';
const hook = (ws: string, input: unknown) => runHook(ws, 'claude', input, [], { timeoutMs: 15_000 });
const pre = (id: string, input: Record<string, unknown>, tool = 'Read') => ({ session_id: 'S', hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input, tool_use_id: id });
const post = (id: string, input: Record<string, unknown>, response: unknown, tool = 'Read') => ({ ...pre(id, input, tool), hook_event_name: 'PostToolUse', tool_response: response });

const SECRETS = [
  'sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789',
  'AKIAIOSFODNN7EXAMPLE',
  'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
  'xoxb-123456789012-abcdefghijkl',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
];

describe('reliability: bounded records, no secrets (the hook)', function () {
  this.timeout(60_000);

  it('keeps well under 64 KB of a 1 MB result: ten reads of a 1 MB file make a small log', async () => {
    const ws = await tmpdir('lg-rec-');
    const big = 'line of a large file\n'.repeat(50_000);
    for (let i = 0; i < 10; i++) {
      assert.equal((await hook(ws, pre(`r${i}`, { file_path: `/src/big${i}.ts` }))).code, 0);
      assert.equal((await hook(ws, post(`r${i}`, { file_path: `/src/big${i}.ts` }, { type: 'text', file: { content: `${i}${big}` } }))).code, 0);
    }
    const lines = (await fs.readFile(path.join(ws, LOG), 'utf8')).trim().split('\n');
    assert.equal(lines.length, 20);
    for (const l of lines) assert.ok(l.length < 16 * 1024, `a record of ${l.length} bytes`);
    assert.ok((await fs.stat(path.join(ws, LOG))).size < 100 * 1024);
    assert.match(lines[1] ?? '', /characters, fingerprint [0-9a-z]{6,}/);
  });

  it('masks credentials in arguments, results and errors', async () => {
    const ws = await tmpdir('lg-rec-');
    const text = `export OPENAI_API_KEY=${SECRETS[0]}\naws ${SECRETS[1]}\ngit push https://${SECRETS[2]}@github.com\nslack ${SECRETS[3]}\nAuthorization: Bearer ${SECRETS[4]}\npassword: hunter2hunter2\n`;
    await hook(ws, pre('s1', { command: `curl -H "Authorization: Bearer ${SECRETS[4]}" api` }, 'Bash'));
    await hook(ws, post('s1', { command: `curl -H "Authorization: Bearer ${SECRETS[4]}" api` }, { stdout: text, stderr: '', interrupted: false }, 'Bash'));
    await hook(ws, { ...pre('s2', { command: 'env' }, 'Bash'), hook_event_name: 'PostToolUseFailure', error: `Exit code 1\n${text}` });
    const log = await fs.readFile(path.join(ws, LOG), 'utf8');
    for (const secret of [...SECRETS, 'hunter2hunter2']) assert.ok(!log.includes(secret), `${secret.slice(0, 8)}… is in the log`);
    assert.ok(log.includes(MASK));
  });

  it('bounded and masked records still let the hook see the loop: the third identical failing call with a 1 MB error is refused', async () => {
    const ws = await tmpdir('lg-rec-');
    const huge = `Error: token=${SECRETS[0]} ${'x'.repeat(1024 * 1024)}`;
    for (const id of ['f1', 'f2']) {
      await hook(ws, pre(id, { command: 'npm run build', token: SECRETS[0] }, 'Bash'));
      await hook(ws, { ...pre(id, { command: 'npm run build', token: SECRETS[0] }, 'Bash'), hook_event_name: 'PostToolUseFailure', error: huge });
    }
    const third = await hook(ws, pre('f3', { command: 'npm run build', token: SECRETS[0] }, 'Bash'));
    assert.match(third.stdout, /"permissionDecision":"deny"/);
  });

  it('rotates a hook log past its size limit: the old one becomes .1, a new one starts, and nothing is read twice', async () => {
    const ws = await tmpdir('lg-rec-');
    const filler = `${JSON.stringify({ v: 1, type: 'output', session: 'S', text: 'y'.repeat(1000) })}\n`;
    await write(ws, LOG, filler.repeat(Math.ceil(HOOK_LOG_MAX_BYTES / filler.length) + 10));
    assert.equal((await hook(ws, pre('n1', { file_path: '/a' }))).code, 0);
    assert.ok((await fs.stat(path.join(ws, `${LOG}.1`))).size > HOOK_LOG_MAX_BYTES);
    const fresh = (await fs.readFile(path.join(ws, LOG), 'utf8')).trim().split('\n');
    assert.equal(fresh.length, 1);
    assert.match(fresh[0] ?? '', /"tool":"Read"/);
  });

  describe('the record keeper (pure)', () => {
    it('keeps short text whole, long text as head, tail and a fingerprint of the whole', () => {
      assert.equal(boundedText('short'), 'short');
      const long = `${'a'.repeat(5000)}MIDDLE${'b'.repeat(5000)}`;
      const kept = boundedText(long);
      assert.ok(kept.length < 4000);
      assert.ok(!kept.includes('MIDDLE'));
      assert.ok(kept.includes(hashText(long)));
      assert.notEqual(boundedText(long.replace('MIDDLE', 'middle')), kept, 'a change in the middle still tells the texts apart');
      assert.equal(boundedText(long), kept, 'the same text, the same record');
    });

    it('cuts nesting and breadth, and keeps a whole value under its bound', () => {
      let deep: unknown = 'leaf';
      for (let i = 0; i < 50; i++) deep = { d: deep };
      assert.match(JSON.stringify(boundedValue(deep)), /nested too deep/);
      const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, 'v'.repeat(100)]));
      assert.ok(JSON.stringify(boundedValue(wide)).length <= 20 * 1024);
    });

    it('masks each credential shape, and leaves ordinary text alone', () => {
      for (const s of SECRETS) assert.ok(!maskSecrets(`x ${s} y`).includes(s), s);
      assert.equal(maskSecrets('password=correct-horse-battery'), `password=${MASK}`);
      assert.equal(maskSecrets('-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----'), MASK);
      const ordinary = 'npm ERR! Missing script: "build" at /home/u/project (sk-learn is fine, task-1234 too)';
      assert.equal(maskSecrets(ordinary), ordinary);
    });

    it('masks as the full scan does: the quick look that passes most texts over never passes over a credential', () => {
      // Texts made of the shapes' pieces, whole credentials, names of secrets and ordinary words, in any case.
      const pieces = [...SECRETS, 'PGPASSWORD=', 'client_secret', '"api-key": "', 'AccountKey=', '--token ', 'postgres://u:', '@db', 'Bearer ', 'basic ', 'token ', 'ya29.', 'AIza', 'SG.', 'sq0atp-', 'dapi', 'shpat_', 'dckr_pat_', 'do' + 'p_v1_', 'hf_', 'npm_', 'pypi-AgE', 'glpat-', 'github_pat_', 'rk_live_', 'xoxp-', 'hooks.slack.com/services/', 'SK', '-----BEGIN ', 'PRIVATE KEY-----', '-----END ', 'abcdef0123456789', 'ABCDEFGHIJKLMNOP', '_-', ' ', '=', ':', '"', '\n', 'npm ERR! ', 'src/a.ts(1,1)', 'task-1234'];
      const cased = fc.tuple(fc.constantFrom(...pieces), fc.constantFrom('same', 'upper', 'lower')).map(([p, c]) => (c === 'upper' ? p.toUpperCase() : c === 'lower' ? p.toLowerCase() : p));
      fc.assert(
        fc.property(fc.array(cased, { maxLength: 16 }), (parts) => {
          const text = parts.join('');
          assert.equal(maskSecrets(text), scanSecrets(text));
        }),
        { numRuns: 20_000 },
      );
      // And the texts most calls carry are passed over as they are.
      for (const t of ['npm run build 2>&1 | tail -20', "src/a.ts(1,1): error TS1005: ';' expected.", 'cd packages/web && pnpm test']) assert.equal(maskSecrets(t), t);
    });

    it('the quick look, written as a tree by first letter, matches the same texts as its 31 pieces listed one by one', () => {
      const listed = /-----BEGIN|AKIA|ASIA|gh[pousr]_|github_pat_|glpat-|sk-|k_live_|k_test_|xox|hooks\.slack|AIza|ya29\.|npm_|pypi-|hf_|SG\.|SK[0-9a-f]|do[opr]_v1_|shp|dckr_pat_|dapi|sq0|eyJ|bearer|basic|token|:\/\/|key|secret|passw/i;
      // Each piece, pieces cut short by a character, their neighbours, and noise, in any case.
      const pieces = ['-----BEGIN', '-----BEGI', 'AKIA', 'AKI', 'ASIA', 'AIza', 'AIz', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'ghx_', 'gh_', 'github_pat_', 'github_pa', 'glpat-', 'glpat', 'sk-', 'sk', 'SK0', 'SKf', 'SKg', 'SG.', 'SG', 'shp', 'sh', 'sq0', 'sq', 'secret', 'secre', 'k_live_', 'k_live', 'k_test_', 'k_tes', 'key', 'ke', 'xox', 'xo', 'hooks.slack', 'hooks.slac', 'hf_', 'hf', 'ya29.', 'ya29', 'npm_', 'npm', 'pypi-', 'pypi', 'passw', 'pass', 'dop_v1_', 'doo_v1_', 'dor_v1_', 'dox_v1_', 'do_v1', 'dckr_pat_', 'dckr_pa', 'dapi', 'dap', 'eyJ', 'ey', 'bearer', 'beare', 'basic', 'basi', 'token', 'toke', '://', ':/', 'a', 's', 'k', 'x', 'h', 'y', 'n', 'p', 'd', 'e', 'b', 't', ':', '/', '-', '_', '.', ' ', '0', '9', 'z', 'Q'];
      const cased = fc.tuple(fc.constantFrom(...pieces), fc.constantFrom('same', 'upper', 'lower')).map(([p, c]) => (c === 'upper' ? p.toUpperCase() : c === 'lower' ? p.toLowerCase() : p));
      let matched = 0;
      fc.assert(
        fc.property(fc.array(cased, { maxLength: 8 }), (parts) => {
          const text = parts.join('');
          const expected = listed.test(text);
          if (expected) matched++;
          assert.equal(MAY_HOLD_SECRET.test(text), expected, text);
        }),
        { numRuns: 30_000 },
      );
      // Both ways: texts that hold a piece, and texts that do not.
      assert.ok(matched > 3000 && matched < 27_000, `${matched} of 30,000 held a piece`);
    });

    it('a text shorter than the shortest credential shape is left alone unscanned, and no shape matches one', () => {
      // The shortest shapes are SHORTEST_SECRET characters long, and masked.
      for (const s of ['token=abcdef', 'secret:abcdef', 'passwd=abcdef']) {
        assert.ok(s.length <= SHORTEST_SECRET + 1);
        assert.notEqual(maskSecrets(s), s, s);
      }
      // Shorter texts made of the shapes' own pieces: the full scan finds nothing either.
      const pieces = ['passwd', 'password', 'api', 'key', '_', '-', '=', ':', '"', ' ', 'sk-', 'xoxb-', 'AKIA', 'ghp_', 'npm_', 'AIza', 'eyJ', '.', 'Bearer ', 'token ', 'a', 'Z', '0', '9', '-----BEGIN '];
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
          const text = parts.join('').slice(0, SHORTEST_SECRET - 1);
          assert.equal(scanSecrets(text), text);
        }),
        { numRuns: 5000 },
      );
    });
  });
});
