import { strict as assert } from 'node:assert';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { defaultConfig } from '../../../src/core/config';
import { detectFormat, replayFile } from '../../../src/watch/replay';
import { describeShared, FIXTURES } from '../helpers';

/**
 * Every real transcript under ../shared/fixtures/real/<agent>/ for the agents whose folder names
 * their format: each is recognised by `--format auto`, read to events, and nothing of it skipped.
 * (Findings are not asserted here: the detectors change on their own.)
 */
const FOLDERS = ['claude', 'codex', 'openhands', 'swe-agent', 'roo'] as const;
const EXPECTED_FILES = { claude: 7, codex: 1, openhands: 9, 'swe-agent': 16, roo: 7 } as const;

describeShared('every real transcript is read by replay --format auto', 'the real transcripts', () => {
  for (const folder of FOLDERS) {
    const dir = path.join(FIXTURES, 'real', folder);
    const files = readdirSync(dir).sort();
    it(`${folder}: the ${EXPECTED_FILES[folder]} files are all here`, () => assert.equal(files.length, EXPECTED_FILES[folder]));
    for (const f of files) {
      it(`real/${folder}/${f}: recognised as ${folder}, events read, nothing skipped`, async () => {
        const abs = path.join(dir, f);
        assert.equal(await detectFormat(abs), folder);
        const result = await replayFile(abs, f, 'auto', defaultConfig());
        assert.equal(result.format, folder);
        assert.ok(result.events > 0, 'events > 0');
        assert.equal(result.skipped, 0, JSON.stringify(result.skippedLines.slice(0, 5)));
      });
    }
  }
});
