// The install phase's tests, run inside VS Code by a small driver extension (extensionTestsPath):
// Symposium itself is the installed vsix, not a development copy. The report goes to the file
// named by SYMPOSIUM_INSTALL_REPORT, which the runner reads.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import Mocha = require('mocha');

export async function run(): Promise<void> {
  const report = process.env.SYMPOSIUM_INSTALL_REPORT ?? path.resolve(__dirname, 'install-report.txt');
  fs.writeFileSync(report, '');
  const base = Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void };
  base.consoleLog = (...args: unknown[]) => fs.appendFileSync(report, util.format(...args) + '\n');
  const mocha = new Mocha({ ui: 'bdd', timeout: 180_000, color: false, reporter: 'spec', bail: true });
  mocha.addFile(path.join(__dirname, 'installed.test.js'));
  const failures = await new Promise<number>((resolve) => {
    const runner = mocha.run((failed) => {
      const stats = runner.stats!;
      fs.appendFileSync(report, `${stats.passes} passed, ${stats.failures} failed, ${stats.pending} skipped\n`);
      resolve(failed);
    });
  });
  if (failures > 0) {
    throw new Error(`${failures} install test(s) failed`);
  }
}
