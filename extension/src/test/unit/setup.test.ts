// The backend's private venv: finding a Python, the stamp, and what a user is told when it fails.
// Real programs throughout (the Python on PATH, pip); the full install of the bundled wheel is
// tested in code-server (the install phase of the integration tests).

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bundledWheel, ensureBackendVenv, findPython, recentEnough, SetupError, stampFor, venvPython } from '../../setup';
import { MemoryLog } from './log';

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-setup-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A folder for PATH with a `python3` that says it is `version`. */
function fakePython(version: string): string {
  const bin = fs.mkdtempSync(path.join(dir, 'bin-'));
  fs.writeFileSync(path.join(bin, 'python3'), `#!/bin/sh\necho ${bin}/python3\necho ${version}\n`, { mode: 0o755 });
  return bin;
}

describe('finding a Python', () => {
  it('takes the newest >= 3.11 on PATH', async () => {
    const found = await findPython('');
    assert.ok(recentEnough(found.version), found.version);
    assert.ok(path.isAbsolute(found.path));
  });

  it('says which Pythons it saw and how to fix it when none is recent enough', async () => {
    const bin = fakePython('3.9.2');
    await assert.rejects(findPython('', { PATH: bin }), (error: SetupError) => {
      assert.match(error.message, /Python 3\.11 or later.*python3 is 3\.9\.2/);
      assert.match(error.fix, /symposium\.python/);
      return true;
    });
    await assert.rejects(findPython('', { PATH: fs.mkdtempSync(path.join(dir, 'empty-')) }), /found none on PATH/);
  });

  it('checks the symposium.python setting', async () => {
    await assert.rejects(findPython('/nonexistent/python'), /symposium\.python setting names "\/nonexistent\/python", which does not run/);
    await assert.rejects(findPython(path.join(fakePython('3.10.1'), 'python3')), /names Python 3\.10\.1; Symposium needs 3\.11/);
  });
});

/** The backend wheel (test.sh builds it, as `make vsix` does). */
const BUNDLED = () => {
  const found = bundledWheel(path.resolve(__dirname, '../../..'));
  assert.ok(found, 'no backend wheel in extension/backend/: build it first (make vsix)');
  return found;
};

describe('the private venv', () => {
  const wheel = () => {
    const file = path.join(dir, 'symposium-0.1.0-py3-none-any.whl');
    fs.writeFileSync(file, 'not really a wheel');
    return file;
  };

  it('is used as it is when its stamp matches: no Python needed', async () => {
    const storage = fs.mkdtempSync(path.join(dir, 'storage-'));
    const venv = path.join(storage, 'venv');
    fs.mkdirSync(path.dirname(venvPython(venv)), { recursive: true });
    fs.writeFileSync(venvPython(venv), '');
    fs.writeFileSync(path.join(venv, 'symposium-stamp.json'), JSON.stringify({ ...stampFor(wheel(), '0.1.0'), python: 'x' }));
    let setUp = false;
    const argv = await ensureBackendVenv({ storage, wheel: wheel(), extensionVersion: '0.1.0', pythonSetting: '', env: { PATH: '' }, log: new MemoryLog(), onSetup: () => (setUp = true) });
    assert.deepEqual(argv, [venvPython(venv), '-I', '-m', 'symposium']);
    assert.equal(setUp, false);
  });

  it('is rebuilt for another version; when PyPI cannot be reached it says so, and keeps the old one', async () => {
    const storage = fs.mkdtempSync(path.join(dir, 'storage-'));
    const venv = path.join(storage, 'venv');
    fs.mkdirSync(venv);
    fs.writeFileSync(path.join(venv, 'symposium-stamp.json'), JSON.stringify({ ...stampFor(wheel(), '0.0.9'), python: 'x' }));
    // pip without its configuration, against an index on a port nobody listens on.
    const offline = { ...process.env, PIP_CONFIG_FILE: os.devNull, PIP_INDEX_URL: 'http://127.0.0.1:9/simple', PIP_RETRIES: '1', PIP_TIMEOUT: '5', PIP_FIND_LINKS: '', PIP_NO_INDEX: '' };
    let setUp = false;
    const log = new MemoryLog();
    await assert.rejects(
      ensureBackendVenv({ storage, wheel: BUNDLED(), extensionVersion: '0.1.0', pythonSetting: '', env: offline, log, onSetup: () => (setUp = true) }),
      (error: SetupError) => {
        assert.match(error.message, /Could not install the Symposium backend: its Python packages come from PyPI, which could not be reached \(offline\?\)/);
        assert.match(error.fix, /PIP_INDEX_URL|network/);
        return true;
      },
    );
    assert.equal(setUp, true);
    assert.match(log.lines.join('\n'), /the backend venv is from 0\.0\.9.*rebuilding it/);
    assert.deepEqual(fs.readdirSync(storage), ['venv']); // the half-built one is gone, the old one is still there
  });

  it('removes what an interrupted build left (next start), never another window\'s build in progress', async () => {
    const storage = fs.mkdtempSync(path.join(dir, 'storage-'));
    const venv = path.join(storage, 'venv');
    fs.mkdirSync(path.dirname(venvPython(venv)), { recursive: true });
    fs.writeFileSync(venvPython(venv), '');
    fs.writeFileSync(path.join(venv, 'symposium-stamp.json'), JSON.stringify({ ...stampFor(wheel(), '0.1.0'), python: 'x' }));
    const gone = spawnSync('true').pid!; // a window that was closed (or killed) mid-build
    const interrupted = [`venv.building-${gone}-Ab12Cd`, `venv.old-${gone}-1764000000000`];
    const inProgress = `venv.building-${process.pid}-Ef34Gh`; // another window building right now
    for (const name of [...interrupted, inProgress]) {
      fs.mkdirSync(path.join(storage, name, 'lib'), { recursive: true });
    }
    const log = new MemoryLog();
    await ensureBackendVenv({ storage, wheel: wheel(), extensionVersion: '0.1.0', pythonSetting: '', env: { PATH: '' }, log });
    assert.deepEqual(fs.readdirSync(storage).sort(), ['venv', inProgress]);
    assert.match(log.lines.join('\n'), /left by an interrupted build/);
  });
});
