import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HOOK_REGISTRATION_FILES } from '../../../src/agents/hooks';
import { readStopAllInForceSync } from '../../../src/state/stopAllFile';
import { findProject, markProject, nestedRepository, projectsOnPath, Workspace } from '../../../src/state/workspace';
import { tmpdir, write } from '../helpers';

const clues = { registrations: HOOK_REGISTRATION_FILES };
const claudeRegistration = JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'sh "$HOME/.loop-guardian/bin/loop-guardian" hook claude' }] }] } });

/** A project with a subfolder and a nested repository (its own .git), as issue 36 met them. */
async function project(): Promise<{ root: string; src: string; nested: string }> {
  const root = await tmpdir();
  await fs.mkdir(path.join(root, '.git'));
  const src = path.join(root, 'src', 'deep');
  const nested = path.join(root, 'vendor', 'lib');
  await fs.mkdir(src, { recursive: true });
  await fs.mkdir(path.join(nested, '.git'), { recursive: true });
  return { root, src, nested };
}

describe('the project a folder belongs to (findProject), for the hook and every command', () => {
  it('a nested repository belongs to the enclosing project that holds .github/guardian; without it, to itself (the nearest .git)', async () => {
    const { root, src, nested } = await project();
    assert.equal(findProject(src, clues), root);
    assert.equal(findProject(nested, clues), nested, 'no guardian anywhere: the nearest repository');
    await fs.mkdir(path.join(root, '.github', 'guardian'), { recursive: true });
    assert.equal(findProject(nested, clues), root);
    assert.equal(findProject(src, clues), root);
  });

  it("an older init's project (a registration of the hook, no .github/guardian) is found from a nested repository by its registration; another agent's settings without the hook are not one", async () => {
    const { root, nested } = await project();
    await write(root, '.gemini/settings.json', '{"general":{}}');
    assert.equal(findProject(nested, clues), nested);
    await write(root, '.claude/settings.local.json', claudeRegistration);
    assert.equal(findProject(nested, clues), root);
    assert.equal(findProject(nested), nested, 'without clues, the markers alone');
    // The user's home is no project by its settings (an agent's own file there is the person's).
    assert.equal(findProject(nested, { ...clues, home: root }), nested);
    // Cline's hooks are files: its first event's file names the guardian.
    const other = await project();
    await write(other.root, '.clinerules/hooks/PreToolUse', '#!/bin/sh\nexec loop-guardian hook cline\n');
    assert.equal(findProject(other.nested, clues), other.root);
  });

  it('projectsOnPath: every guardian project from a folder up, nearest first; nestedRepository: the repository between a folder and its project', async () => {
    const { root, src, nested } = await project();
    await fs.mkdir(path.join(root, '.github', 'guardian'), { recursive: true });
    assert.deepEqual(projectsOnPath(nested, clues), [root]);
    await write(nested, '.claude/settings.local.json', claudeRegistration);
    assert.deepEqual(projectsOnPath(nested, clues), [nested, root]);
    assert.equal(nestedRepository(nested, root), nested);
    assert.equal(nestedRepository(path.join(nested, 'x'), root), nested);
    assert.equal(nestedRepository(src, root), undefined);
    assert.equal(nestedRepository(root, root), undefined);
  });

  it('markProject creates .github/guardian where no folder at or above has one', async () => {
    const { root, nested } = await project();
    assert.equal(await markProject(new Workspace(nested)), true);
    assert.equal(await markProject(new Workspace(nested)), false);
    await fs.rm(path.join(nested, '.github'), { recursive: true });
    assert.equal(await markProject(new Workspace(root)), true);
    assert.equal(await markProject(new Workspace(nested)), false, 'its enclosing project has one');
    assert.ok((await fs.stat(path.join(root, '.github', 'guardian'))).isDirectory());
  });
});

describe('STOP_ALL in force for a project (readStopAllInForceSync)', () => {
  it("the project's own, unless a folder above says more: STOP over PAUSE over CLEAR", async () => {
    const { root, nested } = await project();
    assert.equal(readStopAllInForceSync(nested).state.status, 'CLEAR');
    await write(nested, '.github/guardian/STOP_ALL', 'PAUSE 2026-11-27T10:00:00Z\n');
    assert.deepEqual([readStopAllInForceSync(nested).state.status, readStopAllInForceSync(nested).at], ['PAUSE', nested]);
    await write(root, '.github/guardian/STOP_ALL', 'STOP 2026-11-27T10:00:00Z\nreason: everyone\n');
    const read = readStopAllInForceSync(nested);
    assert.deepEqual([read.state.status, read.at, read.state.reason], ['STOP', root, 'everyone']);
    // A CLEAR above never lifts a STOP below.
    await write(root, '.github/guardian/STOP_ALL', 'CLEAR 2026-11-27T10:00:00Z\n');
    await write(nested, '.github/guardian/STOP_ALL', 'STOP 2026-11-27T10:00:00Z\n');
    assert.equal(readStopAllInForceSync(nested).state.status, 'STOP');
    assert.equal(readStopAllInForceSync(root).state.status, 'CLEAR', 'a STOP below does not reach above');
  });
});
