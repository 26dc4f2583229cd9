// Installs a catalogue agent, pinned, under the extension's global storage (`<root>/<id>@<version>`),
// with the installer of its distribution kind (`INSTALLERS`: npm, PyPI, a binary archive, each in
// `installers/`). What was installed is recorded beside it in `symposium-install.json`
// (docs/usage.md, "Adding an agent"). No `vscode` import, so the unit tests run it in plain node
// (and the conformance suite runs it through `out/agents/installCli.js`).
//
// A catalogue entry is trusted to name a package, not to do anything it likes to this machine: the
// download and what it unpacks to are bounded (`LIMITS`), archives are unpacked only with Python's
// tar safety filter, and the command must lie inside the install folder.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { CatalogueAgent, installMethod, Method, platformKey } from './registry';
import { AgentSetting } from '../config';
import { buildingTag, removeAbandoned, SetupError } from '../setup';
import { Installer, InstallOptions, InstallRecord, RECORD } from './installers/common';
import { npmInstaller } from './installers/npm';
import { pypiInstaller } from './installers/pypi';
import { binaryInstaller } from './installers/binary';

export { RECORD } from './installers/common';
export type { InstallLimits, InstallOptions, InstallRecord } from './installers/common';

/** One installer per distribution kind: a new kind is one entry here and one module in `installers/`. */
export const INSTALLERS: Record<Method, Installer> = { npx: npmInstaller, uvx: pypiInstaller, binary: binaryInstaller };

/** Installs `agent` and returns its record; the `symposium.agents` entry is `settingFor(record)`. */
export async function installAgent(agent: CatalogueAgent, options: InstallOptions): Promise<InstallRecord> {
  const method = installMethod(agent, options.platform ?? platformKey());
  if (!method) {
    const platforms = Object.keys(agent.distribution.binary ?? {}).join(', ');
    throw new SetupError(`${agent.name} has no build for ${options.platform ?? platformKey()} (only ${platforms})`, 'Pick another agent.');
  }
  fs.mkdirSync(options.root, { recursive: true, mode: 0o700 });
  await removeAbandoned(options.root, options.log);
  const folder = path.join(options.root, `${agent.id}@${agent.version}`);
  const building = fs.mkdtempSync(path.join(options.root, `.${agent.id}@${agent.version}.${buildingTag()}`));
  try {
    const installer = INSTALLERS[method];
    const installed = await installer.install(agent, building, folder, options);
    const record: InstallRecord = {
      id: agent.id,
      name: agent.name,
      version: agent.version,
      method,
      folder,
      installedAt: new Date().toISOString(),
      ...installed,
    };
    // npm prefixes and unpacked archives do not mind being moved; a venv is built in place.
    fs.writeFileSync(path.join(installer.inPlace ? folder : building, RECORD), JSON.stringify(record, null, 2), { mode: 0o600 });
    if (!installer.inPlace) {
      fs.rmSync(folder, { recursive: true, force: true });
      fs.renameSync(building, folder);
    }
    options.log.info(`installed ${agent.name} ${agent.version} (${method}) in ${folder}: ${[record.command, ...record.args].join(' ')}`);
    return record;
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

/** The `symposium.agents` entry that runs the installed agent. */
export function settingFor(record: InstallRecord, id = record.id): AgentSetting {
  return { id, name: record.name, command: record.command, args: record.args, env: record.env };
}

/** The records of everything installed under `root`, by folder. */
export function readRecords(root: string): InstallRecord[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const records: InstallRecord[] = [];
  for (const name of names) {
    try {
      records.push(JSON.parse(fs.readFileSync(path.join(root, name, RECORD), 'utf8')) as InstallRecord);
    } catch {
      // not an install of ours, or an unfinished one
    }
  }
  return records;
}

/** The record of the install a `symposium.agents` entry runs, if it runs one of ours. */
export function recordOf(setting: AgentSetting, records: InstallRecord[]): InstallRecord | undefined {
  return records.find((r) => r.command === setting.command && (r.args[0] ?? '') === (setting.args?.[0] ?? ''));
}

export function saveRecord(record: InstallRecord): void {
  const file = path.join(record.folder, RECORD);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}
