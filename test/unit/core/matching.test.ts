import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { Canonicalizer, hashText } from '../../../src/core/canonical';
import { adviceForCall } from '../../../src/core/advice';
import { ErrorOutcome } from '../../../src/core/calls';
import { classifyError, FAMILY_OF } from '../../../src/core/errorClass';
import { errorType, sameError, wordOverlap } from '../../../src/core/errorMatch';
import { comparedText } from '../../../src/core/runNoise';

describe('canonical arguments', () => {
  const canon = new Canonicalizer();

  it('sorts keys at every depth and keeps array order', () => {
    assert.equal(canon.text({ b: 1, a: { d: [3, 1], c: null } }), '{"a":{"c":null,"d":[3,1]},"b":1}');
    assert.notEqual(canon.text({ a: [1, 2] }), canon.text({ a: [2, 1] }));
  });

  it('drops volatile keys wherever they are, whatever their case', () => {
    assert.equal(canon.text({ id: 1, q: { Timestamp: 2, keep: 3, items: [{ pid: 4, v: 5 }] } }), '{"q":{"items":[{"v":5}],"keep":3}}');
  });

  it('uses the configured list of volatile keys', () => {
    assert.equal(new Canonicalizer(['nonce']).text({ id: 1, nonce: 2 }), '{"id":1}');
  });

  it('hashes equal texts equally and different texts differently', () => {
    assert.equal(hashText('abc'), hashText('abc'));
    assert.notEqual(hashText('abc'), hashText('abd'));
  });
});

describe('error matching (seed 003)', () => {
  it('matches identical texts, ignoring white space', () => {
    assert.equal(sameError('Error: x  failed', 'Error: x failed'), 'exact');
  });

  it('matches texts that share their first 50 characters', () => {
    const head = 'AssertionError in test_parser.py::test_roundtrip at';
    assert.equal(sameError(`${head} line 10: 1 != 2`, `${head} line 99: 3 != 4`), 'prefix');
  });

  it('matches when one text contains the other', () => {
    assert.equal(sameError('search string not found', 'Error: search string not found in file a.py'), 'contains');
  });

  it('matches on the error type prefix, but not on a bare Error:', () => {
    assert.equal(sameError("TypeError: Cannot read property 'map' of undefined", 'TypeError: x is not a function'), 'error-type');
    assert.equal(errorType('Error: something'), undefined);
    assert.equal(sameError('Error: disk full', 'Error: permission denied on /etc'), undefined);
    assert.equal(errorType('json.decoder.JSONDecodeError: Expecting value'), 'json.decoder.JSONDecodeError');
  });

  it('matches texts whose words overlap by 80% or more', () => {
    assert.ok(wordOverlap('lint error on line 45 in a.ts', 'lint error on line 48 in a.ts') >= 0.8);
    assert.equal(sameError('lint: error on line 45 in a.ts', 'lint: error on line 48 in a.ts'), 'overlap');
    assert.equal(sameError('cannot connect to database', 'unexpected token in JSON'), undefined);
  });

  it('property: word overlap is the Dice coefficient of the word multisets (counted with maps, as seed 003 defines it)', () => {
    const dice = (a: string, b: string): number => {
      const count = (t: string) => {
        const m = new Map<string, number>();
        for (const w of t.toLowerCase().split(/[^a-z0-9_]+/)) if (w) m.set(w, (m.get(w) ?? 0) + 1);
        return m;
      };
      const ca = count(a);
      const cb = count(b);
      const total = [...ca.values(), ...cb.values()].reduce((x, y) => x + y, 0);
      let common = 0;
      for (const [w, n] of cb) common += Math.min(n, ca.get(w) ?? 0);
      return total === 0 ? 0 : (2 * common) / total;
    };
    // Texts of few distinct words, so that they share some, repeat some, and differ in case and separators.
    const text = fc.array(fc.tuple(fc.constantFrom('Error', 'error', 'ENOENT', 'file', 'a_b', 'x1', 'Ünïcode', 'İstanbul', 'line', '45'), fc.constantFrom(' ', ': ', '/', '\n', '--', 'é')), { maxLength: 20 }).map((parts) => parts.map(([w, sep]) => w + sep).join(''));
    fc.assert(fc.property(text, text, (a, b) => assert.equal(wordOverlap(a, b), dice(a, b))), { numRuns: 2000 });
  });

  it('never matches empty texts', () => {
    assert.equal(sameError('', ''), undefined);
  });
});

describe('run noise: what changes from run to run of one failing command (issue 36)', () => {
  const a = 'Exit code 1\n[19:25:30.123] pid 12345: Error: connect ECONNREFUSED 127.0.0.1:5432 (request 3f2a9c1e-1b2c-4d5e-8f90-a1b2c3d4e5f6) at /tmp/tmp.AbC123/x.js';
  const b = 'Exit code 1\n[20:01:02.987654321] pid 881: Error: connect ECONNREFUSED 127.0.0.1:5432 (request 0aa1bc2d-3e4f-4a5b-9c6d-7e8f9a0b1c2d) at /tmp/tmp.zz9Q/x.js';
  const mask = (t: string) => comparedText(t, 'error').replace(/\u0000/g, '#');

  it('two errors that differ only by their clock time, pid, request id and temporary folder are the same error, and end alike', () => {
    assert.equal(sameError(a, b), 'exact');
    assert.equal(new ErrorOutcome(a).key, new ErrorOutcome(b).key);
  });

  it('sets aside clock times with or without a date, epoch times, ids, durations, pids, temporary folders, random numbers and addresses', () => {
    const cases: [string, string][] = [
      ['2026-11-27T19:25:30.123Z boom', '# boom'],
      ['[19:25:30] boom at 19:25:30,5', '[#] boom at #'],
      ['Nov 27 19:25:30 box node[12345]: boom', '# box node# boom'],
      ['at 1764271530123 seed 0.8234123412 req 4711042', 'at # seed # req #'],
      ['id 3f2a9c1e-1b2c-4d5e-8f90-a1b2c3d4e5f6 trace a1b2c3d4e5f60718', 'id # trace #'],
      ['took 412ms (pid=2) PID: 77 pid 881', 'took # (#) # #'],
      ['object at 0x7ffd5fbff8c8', 'object at #'],
      ['open /tmp/tmp.AbC123/x.js', 'open #/x.js'],
      ['open /var/folders/x1/y_2z/T/lg-AbC9dE/x.js', 'open #/x.js'],
      ['open C:\\Users\\dev\\AppData\\Local\\Temp\\tmp-4411-Zq8\\x.js', 'open C:\\Users\\dev\\#\\x.js'],
      ['wrote tmp.q8R7s6x1', 'wrote #'],
    ];
    for (const [text, masked] of cases) assert.equal(mask(text), masked, text);
  });

  it('keeps counts, small numbers, ports and addresses: "expected 4, got 2" is not "got 3"', () => {
    for (const text of ['expected 4, got 3', '2/6 steps', 'line 45 col 12', 'connect ECONNREFUSED 127.0.0.1:5432', 'exit 0x1f', 'at a.ts:10:15']) assert.equal(mask(text), text);
    assert.notEqual(new ErrorOutcome('Exit code 1\nexpected 4, got 2').key, new ErrorOutcome('Exit code 1\nexpected 4, got 3').key);
  });

  it("an output keeps what only an error loses: a count that grows, a clock time, a folder it made", () => {
    assert.equal(comparedText('imported 250000 rows at 19:25:30 into /tmp/tmp.AbC123', 'output'), 'imported 250000 rows at 19:25:30 into /tmp/tmp.AbC123');
    assert.equal(comparedText('done in 12ms', 'output'), 'done in \u0000');
    // A result that is nothing but noise is its own result.
    assert.equal(comparedText('2026-11-27T19:25:30Z', 'output'), '2026-11-27T19:25:30Z');
    assert.equal(comparedText('1764271530123', 'error'), '1764271530123');
  });
});

describe('error classes (seed 004)', () => {
  const cases: [string, string][] = [
    ['HTTP 429 Too Many Requests', 'rate_limit'],
    ['rate limit exceeded', 'rate_limit'],
    ['Request timed out after 30s', 'timeout'],
    ['connect ECONNREFUSED 127.0.0.1:5432', 'network'],
    ["Missing required parameter 'path'", 'missing_parameter'],
    ["TypeError: Cannot read property 'map' of undefined", 'validation'],
    ['<tool_use_error>InputValidationError: command is not a string</tool_use_error>', 'validation'],
    ['ENOENT: no such file or directory', 'file_not_found'],
    ['Error: search string not found in file a.py', 'file_not_found'],
    ['bash: /etc/shadow: Permission denied', 'permission_denied'],
    ['the flux capacitor broke', 'unknown'],
  ];
  for (const [text, kind] of cases) {
    it(`classifies "${text}" as ${kind}`, () => assert.equal(classifyError(text), kind));
  }

  it('a refused or reset connection is the network, transient, whatever else the text says (issue 36)', () => {
    for (const text of [
      'Error: connect ECONNREFUSED 127.0.0.1:5432',
      'curl: (7) Failed to connect to localhost port 3000 after 0 ms: Connection refused',
      '[Errno 111] connection refused',
      'read ECONNRESET',
      'psql: could not connect to server: No such file or directory',
      // A time-out setting echoed beside it, a clock time's milliseconds that read like HTTP 504 or 429.
      'Error: connect ECONNREFUSED 127.0.0.1:5432 (connectionTimeoutMillis: 5000)',
      '[19:25:30.504] Error: connect ECONNREFUSED 127.0.0.1:5432',
      '[19:25:30.429] pid 408: Error: connect ECONNREFUSED 127.0.0.1:5432',
    ]) {
      assert.equal(classifyError(text), 'network', text);
    }
    assert.equal(FAMILY_OF.network, 'transient');
    assert.equal(classifyError('Request timed out after 30s'), 'timeout');
  });

  it('says a refused connection as what it is, naming where it went (issue 36)', () => {
    const say = (error: string) => adviceForCall('Bash', new ErrorOutcome(error));
    assert.equal(say('Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:5432'), "Bash cannot connect: the connection is refused. Is the service on 127.0.0.1:5432 (PostgreSQL's port) running? Start it, or point the call at the right host and port; retrying will not start it.");
    assert.match(say('psql: error: connection to server at "localhost" (::1), port 5432 failed: Connection refused'), /Is the service on localhost:5432 \(PostgreSQL's port\) running\?/);
    assert.match(say('curl: (7) Failed to connect to localhost port 3000 after 0 ms: Connection refused'), /Is the service on localhost:3000 running\?/);
    assert.match(say("HTTPConnectionPool(host='localhost', port=8000): Max retries exceeded (Caused by NewConnectionError: [Errno 111] Connection refused)"), /localhost:8000/);
    assert.match(say('could not connect to server: Connection refused'), /connection is refused\. Is the service it connects to running\?/);
    assert.match(say('Error: read ECONNRESET'), /connection was reset/);
    assert.doesNotMatch(say('Error: connect ECONNREFUSED 127.0.0.1:5432'), /tim(ing|ed) out/);
    assert.match(say('socket hang up'), /keeps failing on the network/);
    assert.match(say('Request timed out after 30s'), /keeps timing out/);
  });

  it('puts each class in its family', () => {
    assert.equal(FAMILY_OF.rate_limit, 'transient');
    assert.equal(FAMILY_OF.permission_denied, 'deterministic');
    assert.equal(FAMILY_OF.unknown, 'unknown');
  });
});

describe('the line that says what failed (issue 36: a retry made louder)', () => {
  const plain = 'Exit code 1\n\n> app@1.0.0 db:migrate\n> node migrate.js\n\nError: connect ECONNREFUSED 127.0.0.1:5432\nnpm error Lifecycle script `db:migrate` failed with error:\nnpm error code 1\nnpm error path /work/app\nnpm error command failed\nnpm error command sh -c node migrate.js';
  const verbose = [
    'Exit code 1',
    'npm verbose cli /usr/bin/node /usr/bin/npm',
    'npm info using npm@11.19.1',
    'npm info using node@v20.20.2',
    'npm verbose title npm run db:migrate',
    'npm verbose argv "run" "db:migrate" "--loglevel" "verbose"',
    'npm verbose logfile /root/.npm/_logs/2026-11-27T20_06_15_441Z-debug-0.log',
    '',
    '> app@1.0.0 db:migrate',
    '> node migrate.js',
    '',
    'Error: connect ECONNREFUSED 127.0.0.1:5432',
    'npm verbose stack Error: command failed',
    'npm verbose stack     at ChildProcess.<anonymous> (/usr/lib/node_modules/npm/node_modules/@npmcli/promise-spawn/lib/index.js:53:27)',
    'npm verbose pkgid app@1.0.0',
    'npm error Lifecycle script `db:migrate` failed with error:',
    'npm verbose cwd /work/app',
    'npm verbose os Linux 6.18.44',
    'npm verbose exit 1',
  ].join('\n');

  it('the same failure printed loudly (--verbose) is the same error: its line that says what failed is', () => {
    assert.equal(sameError(plain, verbose), 'failure-line');
  });

  it('another failure is another error, however alike the rest', () => {
    assert.equal(sameError(plain, verbose.replace('ECONNREFUSED 127.0.0.1:5432', 'ENOTFOUND db.internal')), undefined);
  });
});
