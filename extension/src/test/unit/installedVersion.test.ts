// What Add Agent and Update Agent record is what was installed: the version read back from a real npm
// install (the echo agent's tarball) and a real pip install (its wheel), even under a catalogue entry
// that names another.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installAgent } from '../../agents/install';
import { installedVersion } from '../../agents/installedVersion';
import { CatalogueAgent } from '../../agents/registry';
import { findPython } from '../../setup';
import { buildEchoWheel, packEchoAgent } from '../fixtures';
import { MemoryLog } from './log';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-installed-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const options = () => ({ root: path.join(dir, 'agents'), python: () => findPython(''), log: new MemoryLog(), env: { ...process.env, PIP_NO_INDEX: '1' } });
// A tarball or wheel has no version the catalogue can compare before installing: the entry says 9.9.9.
const lying = (id: string, distribution: CatalogueAgent['distribution']): CatalogueAgent => ({ id, name: id, version: '9.9.9', description: id, distribution });

describe('the version installed', () => {
  it('is read back from what npm installed', async () => {
    const record = await installAgent(lying('echo', { npx: { package: await packEchoAgent(dir) } }), options());
    assert.equal(record.version, '9.9.9'); // what the catalogue said
    assert.equal(installedVersion(record), '1.0.0'); // what Add Agent records
  });

  it('is read back from what pip installed', async () => {
    const python = await findPython('');
    const record = await installAgent(lying('echo-py', { uvx: { package: await buildEchoWheel(dir, python.path) } }), options());
    assert.equal(installedVersion(record), '1.0.0');
  });

  it('is not known for a download, or a record whose files are gone', () => {
    assert.equal(installedVersion({ method: 'binary', folder: dir, command: path.join(dir, 'tool'), args: [] }), undefined);
    assert.equal(installedVersion({ method: 'npx', folder: path.join(dir, 'gone'), command: 'node', args: [path.join(dir, 'gone', 'node_modules', 'x', 'bin.js')] }), undefined);
    assert.equal(installedVersion({ method: 'uvx', folder: path.join(dir, 'gone'), command: path.join(dir, 'gone', 'venv', 'bin', 'x'), args: [] }), undefined);
  });
});
