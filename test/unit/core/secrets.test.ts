import * as assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { boundedArgs, boundedText, MASK } from '../../../src/core/redact';
import { clip } from '../../../src/core/canonical';
import { CLI } from '../helpers';

/*
 * Issue 32, item 5: credentials never leave the guardian verbatim, wherever it writes or sends
 * what it read. Each shape below is a made-up credential of a real format (none is live), in the
 * context it is usually seen in.
 */
const CREDENTIALS: readonly (readonly [string, string, string, string?])[] = [
  ['AWS access key id', 'aws_access_key_id = ', 'AKIAIOSFODNN7EXAMPLE'],
  ['AWS secret access key', 'AWS_SECRET_ACCESS_KEY=', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
  ['AWS session token', 'export AWS_SESSION_TOKEN=', 'FwoGZXIvYXdzEJr//////////wEaDExampleSessionToken1234'],
  ['Postgres password variable', 'PGPASSWORD=', 'correct-horse-battery-staple'],
  ['password in a URL', 'DATABASE_URL=postgres://app:', 'S3cr3tPassw0rd', '@db:5432/app'],
  ['password in a URL (mysql)', 'mysql://root:', 'hunter2hunter2', '@localhost/test'],
  ['Stripe live secret key', 'stripe.api_key = ', 'sk_live_51HqLyjWDarjtT1zdp7dcExample'],
  ['Stripe restricted key', 'key ', 'rk_live_51HqLyjWDarjtT1zdExample00'],
  ['Anthropic API key', 'ANTHROPIC_API_KEY=', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789'],
  ['OpenAI project key', 'Authorization: Bearer ', 'sk-proj-abcdefghijklmnopqrstuvwxyz012345'],
  ['GitHub personal access token', 'token ', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
  ['GitHub fine-grained token', 'GH_TOKEN=', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'],
  ['GitLab token', 'PRIVATE-TOKEN: ', 'glpat-abcdefghijklmnopqrst'],
  ['Slack bot token', 'SLACK_BOT_TOKEN=', 'xoxb-123456789012-1234567890123-abcdefghijklmnop'],
  ['Slack webhook', 'curl -X POST https://', 'hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX'],
  ['Google API key', 'key=', 'AIzaSyA-abcdefghijklmnopqrstuvwxyz01234'],
  ['Google OAuth access token', 'access_token: ', 'ya29.a0AfH6SMBexampleexampleexample'],
  ['npm token', '//registry.npmjs.org/:_authToken=', 'npm_abcdefghijklmnopqrstuvwxyz0123456789'],
  ['PyPI token', 'password = ', 'pypi-AgEIcHlwaS5vcmcCJGExampleExampleExampleExampleExampleExampleExample'],
  ['Hugging Face token', 'HF_TOKEN=', 'hf_abcdefghijklmnopqrstuvwxyzABCDEF'],
  ['SendGrid key', 'SENDGRID=', 'SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG'],
  ['Twilio API key', 'twilio sid ', 'SK0123456789abcdef0123456789abcdef'],
  ['DigitalOcean token', 'DO=', 'dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'],
  ['Shopify access token', 'X-Shopify-Access-Token: ', 'shpat_0123456789abcdef0123456789abcdef'],
  ['Docker Hub token', 'docker login -p ', 'dckr_pat_abcdefghijklmnopqrstuvwxyz'],
  ['Databricks token', 'DATABRICKS=', 'dapi0123456789abcdef0123456789abcdef'],
  ['Azure storage account key', 'DefaultEndpointsProtocol=https;AccountName=x;AccountKey=', 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ+/=='],
  ['JSON web token', 'Cookie: session=', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ['a password flag', 'psql --password ', 'tr0ub4dor&3x'],
  ['client secret in JSON', '{"client_secret": "', 'abcdef0123456789abcdef'],
  ['JWT secret variable', 'JWT_SECRET=', 'my-very-long-signing-secret'],
  ['private key', '', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----'],
];

describe('credentials are masked wherever the guardian writes what it read (issue 32)', () => {
  it(`each of ${CREDENTIALS.length} credential shapes, in its usual context, is masked in a hook record and in a finding's words`, () => {
    assert.ok(CREDENTIALS.length >= 20);
    for (const [name, before, secret, after = ''] of CREDENTIALS) {
      const text = `Error: request failed; ${before}${secret}${after} was rejected`;
      const kept = boundedText(text);
      assert.ok(!kept.includes(secret), `${name}: kept verbatim in a record: ${kept}`);
      assert.ok(kept.includes(MASK), `${name}: ${kept}`);
      const quoted = clip(text, 400);
      assert.ok(!quoted.includes(secret.replace(/\s+/g, ' ')), `${name}: quoted verbatim in a finding: ${quoted}`);
      const args = boundedArgs({ command: `${before}${secret}${after} npm run deploy` });
      assert.ok(!JSON.stringify(args).includes(JSON.stringify(secret).slice(1, -1)), `${name}: kept in a call's arguments`);
    }
  });

  it('ordinary text is left alone', () => {
    for (const ordinary of [
      'npm ERR! Missing script: "build" at /home/u/project (sk-learn is fine, task-1234 too)',
      'PWD=/home/user/project HOME=/root',
      'max_tokens: 4096, tokens used: 1200',
      'Error: connect ECONNREFUSED 127.0.0.1:5432',
      'see https://example.com/docs/a:b and http://localhost:8080/path',
      'Access token expired; sign in again',
    ]) {
      assert.equal(boundedText(ordinary), ordinary);
      assert.equal(clip(ordinary, 400), ordinary.replace(/\s+/g, ' '));
    }
  });

  it('scan never prints a credential a failing call carried, nor writes one in its JSON', function () {
    this.timeout(30_000);
    const ws = mkdtempSync(path.join(os.tmpdir(), 'lg-secrets-'));
    mkdirSync(path.join(ws, '.tmp', 'current', 'logs'), { recursive: true });
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const lines = Array.from({ length: 4 }, (_, i) => JSON.stringify({ v: 1, type: 'tool', session: 's', agent: 'claude-code', tool: 'Bash', args: { command: `AWS_SECRET_ACCESS_KEY=${secret} aws s3 ls` }, ok: false, error: `Exit code 1\nAn error occurred (InvalidAccessKeyId) with AWS_SECRET_ACCESS_KEY=${secret} postgres://app:S3cr3tPassw0rd@db (try ${i})` }));
    writeFileSync(path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl'), `${lines.join('\n')}\n`);
    for (const args of [['scan', '--workspace', ws], ['scan', '--workspace', ws, '--json']]) {
      const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stdout, /HALT|"halt"/);
      assert.ok(!r.stdout.includes(secret) && !r.stdout.includes('S3cr3tPassw0rd'), r.stdout);
    }
  });
});
