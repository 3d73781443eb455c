import { appendFileSync } from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';

/** The extension host's test entry (extensionTestsPath): runs the suite the runner chose. */
export function run(): Promise<void> {
  // The tests' own output goes to the runner's report file: the editor's console carries it mixed
  // with the browser's noise, which the runner keeps in a log file instead.
  const report = process.env.LOOP_GUARDIAN_REPORT;
  // Mocha 12's CommonJS export is an object holding the class.
  const mochaModule = require('mocha') as { Mocha?: typeof import('mocha') } & typeof import('mocha');
  const Mocha = mochaModule.Mocha ?? mochaModule;
  // The reporter writes through Base.consoleLog.
  const base = (Mocha as unknown as { reporters: { Base: { consoleLog: (...args: unknown[]) => void } } }).reporters.Base;
  if (report) {
    const original = base.consoleLog;
    base.consoleLog = (...args: unknown[]) => {
      appendFileSync(report, `${util.format(...args)}\n`);
      original(...args);
    };
  }
  // LOOP_GUARDIAN_GREP (runIntegration's --grep) runs only the tests whose titles match.
  const grep = process.env.LOOP_GUARDIAN_GREP;
  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: 'spec', ...(grep ? { grep: new RegExp(grep) } : {}) });
  const suite = process.env.LOOP_GUARDIAN_SUITE ?? 'single';
  mocha.addFile(path.join(__dirname, `${suite}.test.js`));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}
