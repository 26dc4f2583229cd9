// The integration tests' entry point: VS Code loads this module (extensionTestsPath) in the extension
// host and calls `run()`; when it settles, the workbench reports the exit code (codeAutomationExit).

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import Mocha = require('mocha');

/** The runner reads the test output here: the extension host's console is not the runner's. */
export const REPORT = path.resolve(__dirname, '../../test-report.txt');

export async function run(): Promise<void> {
  fs.writeFileSync(REPORT, '');
  const base = Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void };
  base.consoleLog = (...args: unknown[]) => fs.appendFileSync(REPORT, util.format(...args) + '\n');
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  const suites = path.join(__dirname, 'suite');
  for (const file of fs.readdirSync(suites).filter((f) => f.endsWith('.test.js')).sort()) {
    mocha.addFile(path.join(suites, file));
  }
  const failures = await new Promise<number>((resolve) => {
    const runner = mocha.run((failed) => {
      const stats = runner.stats!;
      fs.appendFileSync(REPORT, `${stats.passes} passed, ${stats.failures} failed, ${stats.pending} skipped\n`);
      resolve(failed);
    });
  });
  if (failures > 0) {
    throw new Error(`${failures} integration test(s) failed`);
  }
}
