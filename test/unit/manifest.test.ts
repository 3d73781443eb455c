import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './helpers';

/** Where the README's user guide ends: the extension's page is what comes before. */
const USER_GUIDE_END = '<!-- end of the user guide';

interface Contributed {
  readonly command: string;
  readonly title: string;
  readonly category?: string;
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: Contributed[]; menus: Record<string, { command: string }[]>; views: Record<string, { id: string }[]>; configuration: { properties: Record<string, unknown> }; walkthroughs?: { id: string; steps: { media: { markdown?: string } }[] }[] };
  activationEvents?: string[];
  categories: string[];
  keywords?: string[];
  repository?: unknown;
};
const commands = new Map(manifest.contributes.commands.map((c) => [c.command, c]));
const views = new Set(Object.values(manifest.contributes.views).flatMap((v) => v.map((x) => x.id)));
const settings = new Set([...Object.keys(manifest.contributes.configuration.properties), ...(manifest.contributes.walkthroughs ?? []).map((w) => w.id)]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : full.endsWith('.ts') ? [full] : [];
  });
}

const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => path.join('docs', f))];
const texts = [...sources(path.join(ROOT, 'src')).map((f) => ({ file: path.relative(ROOT, f), text: readFileSync(f, 'utf8') })), ...docs.map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }))];

describe('manifest: every command a message names exists', () => {
  it('every loopGuardian.* id in the code and README is a contributed command, view, setting or state key', () => {
    const unknown: string[] = [];
    for (const { file, text } of texts) {
      for (const [id] of text.matchAll(/loopGuardian\.[A-Za-z][\w.]*/g)) {
        const bare = id.replace(/\.$/, '');
        if (commands.has(bare) || views.has(bare) || settings.has(bare) || bare === 'loopGuardian.status' || bare === 'loopGuardian.mutedIncidents' || bare === 'loopGuardian.protectionWarnings' || bare === 'loopGuardian.notifiedIncidents' || bare === 'loopGuardian.stopStatus' || bare === 'loopGuardian.hookInstalled') continue;
        unknown.push(`${file}: ${bare}`);
      }
    }
    assert.deepEqual(unknown, []);
  });

  it('every "Loop Guardian: <title>" a message tells a person to run is the title of a contributed command', () => {
    const titles = new Set(manifest.contributes.commands.map((c) => `${c.category ?? 'Loop Guardian'}: ${c.title}`));
    const unknown: string[] = [];
    for (const { file, text } of texts) {
      // Quoted or emphasised, as messages and the README name a palette command.
      for (const m of text.matchAll(/["*]Loop Guardian: ([^"*\n]+)["*]/g)) {
        const named = `Loop Guardian: ${m[1]}`;
        if (!titles.has(named)) unknown.push(`${file}: ${named}`);
      }
    }
    assert.deepEqual(unknown, []);
  });

  it('the user part of the README names no seed document, and the manifest ships no placeholder', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const user = readme.slice(0, readme.indexOf(USER_GUIDE_END));
    assert.ok(readme.includes(USER_GUIDE_END));
    assert.ok(!/seed/i.test(user), 'no "seed" in the user guide');
    assert.ok(!JSON.stringify(manifest).includes('example.invalid'));
    assert.ok(manifest.categories.includes('AI'));
    assert.ok((manifest.keywords ?? []).length >= 5);
    for (const c of manifest.contributes.commands) assert.ok(!/seed/i.test(c.title), c.title);
  });

  it('every walkthrough step has its page', () => {
    for (const w of manifest.contributes.walkthroughs ?? []) for (const step of w.steps) if (step.media.markdown) assert.ok(statSync(path.join(ROOT, step.media.markdown)).isFile(), step.media.markdown);
  });

  it('every command a menu shows is contributed', () => {
    const missing = Object.values(manifest.contributes.menus)
      .flat()
      .map((m) => m.command)
      .filter((c) => !commands.has(c));
    assert.deepEqual(missing, []);
  });

  it('config.json has a JSON schema, up to date with the configuration, named in the manifest for VS Code to validate with', () => {
    const validation = (manifest.contributes as { jsonValidation?: { fileMatch: string[]; url: string }[] }).jsonValidation ?? [];
    const entry = validation.find((v) => v.fileMatch.some((m) => m.endsWith('.github/guardian/config.json')));
    assert.ok(entry, 'a jsonValidation entry for .github/guardian/config.json');
    const schema = JSON.parse(readFileSync(path.join(ROOT, entry.url), 'utf8')) as { properties: Record<string, { properties?: Record<string, { markdownDescription?: string; properties?: Record<string, { type?: string; minimum?: number }> }> }> };
    assert.equal(schema.properties.signals?.properties?.['repeated-error']?.properties?.threshold?.type, 'integer');
    for (const [id, sub] of Object.entries(schema.properties.signals?.properties ?? {})) assert.ok(sub.markdownDescription && !/seed/i.test(sub.markdownDescription), `${id}: described, in the user's words`);
    const check = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'configSchema.js'), '--check'], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr);
  });
});

