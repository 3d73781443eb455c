import * as path from 'node:path';

/** The extension host's test entry (extensionTestsPath): runs the suite the runner chose. */
export function run(): Promise<void> {
  // Mocha 12's CommonJS export is an object holding the class.
  const mochaModule = require('mocha') as { Mocha?: typeof import('mocha') } & typeof import('mocha');
  const Mocha = mochaModule.Mocha ?? mochaModule;
  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: 'spec' });
  const suite = process.env.LOOP_GUARDIAN_SUITE ?? 'single';
  mocha.addFile(path.join(__dirname, `${suite}.test.js`));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}
