#!/usr/bin/env node
// The extension's page (what `vsce package` ships as its README): the README's user guide, up to
// the marker that ends it, without the developer part. vsce packages it as the extension's
// `readme.md`, at the extension's root, so its relative links stay right.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const MARKER = '<!-- end of the user guide';
const OUT = path.join(ROOT, 'out', 'marketplace', 'README.md');

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const end = readme.indexOf(MARKER);
if (end < 0) throw new Error(`README.md has no "${MARKER} …" marker: the extension's page would carry the developer part`);
// What only a reader of the sources needs (how to build the .vsix), between its two markers, is left out.
const SOURCE_ONLY = /<!-- source only[^>]*-->[\s\S]*?<!-- end of source only -->\n?/g;
const page = readme.slice(0, end).replace(SOURCE_ONLY, '').trimEnd();
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, `${page}\n`);
process.stdout.write(`${path.relative(ROOT, OUT)}: ${page.length} characters\n`);
