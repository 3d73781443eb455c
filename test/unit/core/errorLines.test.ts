import * as assert from 'node:assert/strict';
import { isResultFrame, telltaleLine } from '../../../src/core/errorLines';

describe('the telltale line of an error (issue 36)', () => {
  it("npm's failed db:migrate: the refused connection, not npm's echo of the script nor its trailer", () => {
    const npm = [
      'Exit code 1',
      '',
      '> app@1.0.0 db:migrate',
      '> node migrate.js',
      '',
      'Error: connect ECONNREFUSED 127.0.0.1:5432',
      '    at TCPConnectWrap.afterConnectionComplete [as oncomplete] (node:net:1555:16)',
      'npm error Lifecycle script `db:migrate` failed with error:',
      'npm error code 1',
      'npm error path /w/app',
      'npm error command failed',
      'npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T19_31_00_000Z-debug-0.log',
    ].join('\n');
    assert.equal(telltaleLine(npm), 'Error: connect ECONNREFUSED 127.0.0.1:5432');
    // Old npm, yarn and pnpm say the same around it.
    assert.equal(telltaleLine('> @acme/app@1.0.0 db:migrate /w/app\n> node migrate.js\n\nError: connect ECONNREFUSED 127.0.0.1:5432\n ELIFECYCLE  Command failed with exit code 1.'), 'Error: connect ECONNREFUSED 127.0.0.1:5432');
    assert.equal(telltaleLine('yarn run v1.22.19\n$ node migrate.js\nError: connect ECONNREFUSED 127.0.0.1:5432\nerror Command failed with exit code 1.\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.'), 'Error: connect ECONNREFUSED 127.0.0.1:5432');
    assert.equal(telltaleLine('npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! Missing script: "build"\nnpm ERR!     /root/.npm/_logs/x-debug-0.log'), 'npm ERR! Missing script: "build"');
  });

  it('prefers a line naming the error by its type or code over one that only says something failed', () => {
    assert.equal(telltaleLine('npm warn Unknown env config "store-dir".\n\n> Build error occurred\n[TypeError: generate is not a function]\n\n> todo-app@0.1.0 build\n> next build'), '[TypeError: generate is not a function]');
    assert.equal(telltaleLine('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    foo()\nValueError: bad value'), 'ValueError: bad value');
    assert.equal(telltaleLine("/bin/sh: 1: cd: can't cd to build\nmake: *** [Makefile:192: build] Error 2"), "/bin/sh: 1: cd: can't cd to build");
  });

  it("skips the agents' frames: exit statuses, headers, the command echoed back", () => {
    assert.equal(telltaleLine("Command failed with exit code 1.\nOutput:\nError: Cannot find module './config'"), "Error: Cannot find module './config'");
    assert.equal(telltaleLine('Exit code: 2\nWall time: 0.5 seconds\nOutput:\nsomething odd happened'), 'something odd happened');
    // Nothing but frames: the first line, as written.
    assert.equal(telltaleLine('Exit code 1\nOutput: (empty)'), 'Exit code 1');
    assert.equal(telltaleLine('  plain words  '), 'plain words');
  });

  it('tells exit statuses apart, for the search that found nothing (exit status 1 only)', () => {
    assert.ok(isResultFrame('Exit code 1', 1));
    assert.ok(isResultFrame('[Command exited with code 1]', 1));
    assert.ok(isResultFrame('Command failed with exit code 1.', 1));
    assert.ok(!isResultFrame('Exit code 2', 1));
    assert.ok(isResultFrame('Exit code 2'));
    assert.ok(isResultFrame('Error: (none)'));
    assert.ok(!isResultFrame('Error: connect ECONNREFUSED 127.0.0.1:5432'));
  });
});
