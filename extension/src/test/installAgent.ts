// Installs one agent with the extension's own installer (agents/install.ts), as Add Agent does, for the
// Python tests (tests/support/catalogue_agents.py): they prove what users get, not a copy of it.
//
//   node out/test/installAgent.js --root DIR --catalogue FILE --overrides FILE ID
//
// Prints the install record (`symposium-install.json`) as JSON and exits 0; or `{"error", "fix", "detail"}`
// and exits 1. The log goes to stderr. Python comes from PATH; npm and node from PATH.

import * as path from 'node:path';
import { loadCatalogue } from '../agents/catalogue';
import { CatalogueAgent } from '../agents/registry';
import { installAgent } from '../agents/install';
import { pypiRequiresPython } from '../agents/installers/pypi';
import { Log } from '../backend';
import { findPython, SetupError } from '../setup';

const stderr: Log = {
  trace: () => undefined,
  debug: () => undefined,
  info: (m) => process.stderr.write(`installAgent: ${m}\n`),
  warn: (m) => process.stderr.write(`installAgent: warning: ${m}\n`),
  error: (m) => process.stderr.write(`installAgent: error: ${m}\n`),
};

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

async function agentToInstall(): Promise<CatalogueAgent> {
  const id = process.argv[process.argv.length - 1];
  const catalogue = await loadCatalogue({
    url: '', // the file given, as shipped: nothing fetched
    shipped: path.resolve(option('--catalogue') ?? ''),
    overrides: option('--overrides') ? path.resolve(option('--overrides')!) : undefined,
    saved: path.join(path.resolve(option('--root') ?? '.'), '.no-saved-catalogue.json'),
    log: stderr,
  });
  const agent = catalogue.agents.find((a) => a.id === id);
  if (!agent) {
    throw new SetupError(`the catalogue has no agent ${id}`, 'Pass an id of extension/catalogue/registry.json.');
  }
  return agent;
}

async function main(): Promise<number> {
  const root = option('--root');
  if (!root) {
    throw new Error('usage: installAgent.js --root DIR --catalogue FILE [--overrides FILE] ID');
  }
  try {
    const agent = await agentToInstall();
    const record = await installAgent(agent, { root: path.resolve(root), python: () => findPython(''), requiresPython: pypiRequiresPython, log: stderr });
    process.stdout.write(`${JSON.stringify(record)}\n`);
    return 0;
  } catch (error) {
    const failure = error instanceof SetupError ? { error: error.message, fix: error.fix, detail: error.detail } : { error: String(error) };
    process.stdout.write(`${JSON.stringify(failure)}\n`);
    return 1;
  }
}

main().then((code) => process.exit(code), (error) => {
  console.error(error);
  process.exit(2);
});
