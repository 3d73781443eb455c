// Debian's Chromium driven by playwright-core: never a browser download.
'use strict';
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Without the networking flags Chromium keeps dialing out, and these machines refuse it.
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

module.exports = { launch };
