// The backend's private venv: finding a Python, the stamp, and what a user is told when it fails.
// Real programs throughout (the Python on PATH, pip); the full install of the bundled wheel is
// tested in code-server (the install phase of the integration tests).

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bundledRuntimes, provisionPython } from '../../runtimes';
import { buildEchoWheel } from '../fixtures';
import { bundledWheel, createVenv, ensureBackendVenv, findPython, LOCK, pipInstall, recentEnough, run, SetupError, stampFor, uvEnv, venvPython } from '../../setup';
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

  it('installs the lock with its hashes checked, then the wheel alone; a file whose hash differs is refused', async () => {
    // A package of our own making stands for a dependency, served from a folder (as a mirror would):
    // the lock names it with its sha256, then with one digit changed, as a tampered release would be.
    const served = fs.mkdtempSync(path.join(dir, 'served-'));
    const probe = await makeWheel(served, 'symposium_lock_probe', '1.0');
    const sha = crypto.createHash('sha256').update(fs.readFileSync(probe)).digest('hex');
    const tampered = sha.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const local = { ...process.env, PIP_CONFIG_FILE: os.devNull, PIP_NO_INDEX: '1', PIP_FIND_LINKS: served, PIP_CONSTRAINT: '' };
    const attempt = async (hash: string) => {
      const shipped = fs.mkdtempSync(path.join(dir, 'vsix-backend-'));
      const wheel = path.join(shipped, path.basename(BUNDLED()));
      fs.copyFileSync(BUNDLED(), wheel);
      fs.writeFileSync(path.join(shipped, LOCK), `symposium-lock-probe==1.0 \\\n    --hash=sha256:${hash}\n`);
      const storage = fs.mkdtempSync(path.join(dir, 'storage-'));
      const log = new MemoryLog();
      const error = await ensureBackendVenv({ storage, wheel, extensionVersion: '0.1.0', pythonSetting: '', env: local, log }).then(() => undefined, (e: unknown) => e);
      return { error, storage, log };
    };

    const refused = await attempt(tampered);
    assert.ok(refused.error instanceof SetupError, String(refused.error));
    assert.match(refused.error.message, /Could not install the Symposium backend: a package downloaded for it is not one this version of Symposium was built and tested with \(its sha256 differs/);
    assert.match(refused.error.fix, /PyPI's own files/);
    assert.match(refused.log.lines.join('\n'), /--require-hashes --only-binary :all: -r .*requirements\.txt/);
    assert.deepEqual(fs.readdirSync(refused.storage), [], 'nothing half-installed is left');

    // With the right hash the lock installs, then the wheel without its own ranges (no index here to
    // fetch trio from): the backend then cannot start, which says both steps ran.
    const accepted = await attempt(sha);
    assert.ok(accepted.error instanceof SetupError, String(accepted.error));
    assert.match(accepted.error.message, /installed but does not run/);
    assert.match(accepted.error.detail, /No module named 'trio'|No module named trio/);
    assert.match(accepted.log.lines.join('\n'), /--no-deps .*symposium-.*\.whl/);
  });

  it('installs the lock from the wheels a platform\'s package carries, with no index; refuses where one has none', async () => {
    const shipped = fs.mkdtempSync(path.join(dir, 'vsix-platform-'));
    const wheels = path.join(shipped, 'wheels');
    fs.mkdirSync(wheels);
    const probe = await makeWheel(wheels, 'symposium_lock_probe', '1.0');
    const sha = crypto.createHash('sha256').update(fs.readFileSync(probe)).digest('hex');
    const wheel = path.join(shipped, path.basename(BUNDLED()));
    fs.copyFileSync(BUNDLED(), wheel);
    fs.writeFileSync(path.join(shipped, LOCK), `symposium-lock-probe==1.0 \\\n    --hash=sha256:${sha}\n`);
    // An index nobody serves: only the carried wheels can satisfy the lock.
    const offline = { ...process.env, PIP_CONFIG_FILE: os.devNull, PIP_INDEX_URL: 'http://127.0.0.1:9/simple', PIP_FIND_LINKS: '', PIP_NO_INDEX: '' };
    const log = new MemoryLog();
    const error = await ensureBackendVenv({ storage: fs.mkdtempSync(path.join(dir, 'storage-')), wheel, extensionVersion: '0.1.0', pythonSetting: '', env: offline, log }).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof SetupError, String(error));
    assert.match(error.message, /installed but does not run/); // both steps ran (no trio: the probe stands for the lock)
    assert.match(log.lines.join('\n'), new RegExp(`--no-index --find-links ${wheels.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} -r`));

    fs.writeFileSync(path.join(wheels, 'MISSING'), 'cryptography\n');
    await assert.rejects(ensureBackendVenv({ storage: fs.mkdtempSync(path.join(dir, 'storage-')), wheel, extensionVersion: '0.1.0', pythonSetting: '', env: offline, log }), (refused: SetupError) => {
      assert.match(refused.message, /cannot be installed on this platform: PyPI has no wheel of cryptography for it/);
      return true;
    });
  });

  it('provisions a Python when none is found, and only when the user named none', async () => {
    const shipped = fs.mkdtempSync(path.join(dir, 'vsix-noPython-'));
    const wheel = path.join(shipped, path.basename(BUNDLED()));
    fs.copyFileSync(BUNDLED(), wheel);
    fs.writeFileSync(path.join(shipped, LOCK), '');
    const bare = { ...process.env, PATH: fs.mkdtempSync(path.join(dir, 'empty-')) };
    const asked: string[] = [];
    const provision = async (request: string) => {
      asked.push(request);
      throw new SetupError('uv stands in here', 'nothing');
    };
    const storage = fs.mkdtempSync(path.join(dir, 'storage-'));
    await assert.rejects(ensureBackendVenv({ storage, wheel, extensionVersion: '0.1.0', pythonSetting: '', env: bare, log: new MemoryLog(), provision }), /uv stands in here/);
    assert.deepEqual(asked, ['>=3.11']);
    await assert.rejects(ensureBackendVenv({ storage, wheel, extensionVersion: '0.1.0', pythonSetting: '/nonexistent/python3', env: bare, log: new MemoryLog(), provision }), /symposium\.python setting names/);
    assert.deepEqual(asked, ['>=3.11']); // a Python the user named is theirs to change, never replaced
  });

  it('hands uv the index a user chose with pip\'s variables (uv reads only its own)', () => {
    const env = uvEnv({ PIP_INDEX_URL: 'https://mirror/simple', PIP_FIND_LINKS: '/a /b', PIP_NO_INDEX: '1', UV_EXTRA_INDEX_URL: 'https://mine', PIP_EXTRA_INDEX_URL: 'https://theirs' }, dir);
    assert.equal(env.UV_INDEX_URL, 'https://mirror/simple');
    assert.equal(env.UV_FIND_LINKS, '/a,/b');
    assert.equal(env.UV_NO_INDEX, 'true');
    assert.equal(env.UV_EXTRA_INDEX_URL, 'https://mine'); // the user's own uv setting wins
    assert.equal(uvEnv({ PIP_NO_INDEX: '' }, dir).UV_NO_INDEX, undefined);
  });

  it('refuses a package with no lock beside its wheel, and says to reinstall it', async () => {
    const shipped = fs.mkdtempSync(path.join(dir, 'vsix-backend-'));
    const wheel = path.join(shipped, 'symposium-0.1.0-py3-none-any.whl');
    fs.writeFileSync(wheel, 'not really a wheel');
    const storage = fs.mkdtempSync(path.join(dir, 'storage-'));
    await assert.rejects(ensureBackendVenv({ storage, wheel, extensionVersion: '0.1.0', pythonSetting: '', env: process.env, log: new MemoryLog() }), (error: SetupError) => {
      assert.match(error.message, /incomplete: it has no requirements\.txt beside symposium-0\.1\.0-py3-none-any\.whl/);
      assert.match(error.fix, /Reinstall/);
      return true;
    });
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

/** A wheel of an empty package `name` (no dependencies), written into `folder` with the Python on PATH. */
async function makeWheel(folder: string, name: string, version: string): Promise<string> {
  const script = [
    'import base64, hashlib, sys, zipfile',
    'folder, name, version = sys.argv[1:4]',
    'info = f"{name}-{version}.dist-info"',
    'files = {f"{name}/__init__.py": b"", f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n".encode(),',
    '         f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: symposium-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}',
    'digest = lambda data: "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()',
    'record = "".join(f"{n},{digest(d)},{len(d)}\\n" for n, d in files.items()) + f"{info}/RECORD,,\\n"',
    'path = f"{folder}/{name}-{version}-py3-none-any.whl"',
    'with zipfile.ZipFile(path, "w") as z:',
    '    [z.writestr(n, d) for n, d in files.items()]',
    '    z.writestr(f"{info}/RECORD", record)',
    'print(path)',
  ].join('\n');
  const python = await findPython('');
  const done = await run(python.path, ['-c', script, folder, name, version]);
  assert.equal(done.code, 0, done.stderr);
  return done.stdout.trim();
}

/**
 * A project as `code .` would open it: the extension host's working folder, with a `.venv` whose
 * Pythons (and a `venv` package, a `sitecustomize.py`) record that they ran. Nothing of it may run
 * before the user trusts it (docs/reliability.md, "What the workspace cannot do").
 */
function plantedProject(): { folder: string; ran: () => string[] } {
  const folder = fs.mkdtempSync(path.join(dir, 'project-'));
  const record = path.join(folder, 'ran.log');
  const bin = path.join(folder, '.venv', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const name of ['python', 'python3', 'python3.14', 'python3.13', 'python3.12', 'python3.11']) {
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "$0" >> ${record}\nexit 1\n`, { mode: 0o755 });
  }
  fs.writeFileSync(path.join(folder, '.venv', 'pyvenv.cfg'), `home = ${bin}\nversion = 3.14.0\n`);
  fs.mkdirSync(path.join(folder, 'venv'));
  fs.writeFileSync(path.join(folder, 'venv', '__init__.py'), '');
  fs.writeFileSync(path.join(folder, 'venv', '__main__.py'), `open(${JSON.stringify(record)}, "a").write("venv/__main__.py\\n")\n`);
  fs.writeFileSync(path.join(folder, 'sitecustomize.py'), `open(${JSON.stringify(record)}, "a").write("sitecustomize.py\\n")\n`);
  fs.writeFileSync(path.join(folder, 'uv.toml'), 'python-preference = "only-system"\n');
  return { folder, ran: () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : []) };
}

/** Runs `body` with the process's working folder in `folder`, as the extension host's is after `code .`. */
async function inFolder<T>(folder: string, body: () => Promise<T>): Promise<T> {
  const before = process.cwd();
  process.chdir(folder);
  try {
    return await body();
  } finally {
    process.chdir(before);
  }
}

/** A uv that records how it was run (argv, working folder, environment), one JSON line per run; `python find` names `found`. */
function recordingUv(found: string): { uv: string; runs: () => { argv: string[]; cwd: string; env: Record<string, string> }[] } {
  const folder = fs.mkdtempSync(path.join(dir, 'uv-'));
  const log = path.join(folder, 'runs.jsonl');
  const uv = path.join(folder, 'uv');
  fs.writeFileSync(uv, `#!${process.execPath}
const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), env: process.env }) + '\\n');
if (process.argv[2] === 'python' && process.argv[3] === 'find') console.log(${JSON.stringify(found)});
`, { mode: 0o755 });
  return { uv, runs: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) };
}

describe('uv and Python, confined to the extension\'s storage', () => {
  it('runs uv in the storage, with no configuration, only its own Pythons and nothing of the host\'s that would steer it', async () => {
    const python = await findPython('');
    const { uv, runs } = recordingUv(python.path);
    const project = plantedProject();
    const storage = path.join(dir, 'confined-storage');
    const env = {
      PATH: process.env.PATH ?? '', HOME: dir, VIRTUAL_ENV: path.join(project.folder, '.venv'), CONDA_PREFIX: path.join(project.folder, '.venv'),
      UV_PYTHON: path.join(project.folder, '.venv', 'bin', 'python'), UV_CONFIG_FILE: path.join(project.folder, 'uv.toml'), UV_PROJECT_ENVIRONMENT: '.venv',
      UV_CACHE_DIR: path.join(project.folder, 'cache'), UV_PYTHON_INSTALL_DIR: path.join(project.folder, 'pythons'), PYTHONPATH: project.folder,
      UV_PYTHON_INSTALL_MIRROR: 'https://mirror.example/pbs', PIP_INDEX_URL: 'https://index.example/simple', HTTPS_PROXY: 'http://proxy:3128',
    };
    await inFolder(project.folder, async () => {
      const provisioned = await provisionPython(uv, storage, '>=3.11', env, new MemoryLog());
      assert.equal(provisioned.path, python.path);
      await createVenv(path.join(storage, 'venv.building'), python, env, new MemoryLog(), storage, uv);
      await pipInstall(path.join(storage, 'venv.building'), ['attrs'], 'attrs', env, new MemoryLog(), storage, uv);
    });
    const seen = runs();
    assert.deepEqual(seen.map((r) => r.argv.slice(0, 2)), [['python', 'install'], ['python', 'find'], ['venv', '--quiet'], ['pip', 'install']]);
    for (const { argv, cwd, env: given } of seen) {
      assert.equal(fs.realpathSync(cwd), fs.realpathSync(storage), `${argv.join(' ')} ran in ${cwd}`);
      assert.ok(argv.includes('--no-config'), argv.join(' '));
      assert.deepEqual(argv.slice(argv.indexOf('--python-preference'), argv.indexOf('--python-preference') + 2), ['--python-preference', 'only-managed']);
      assert.equal(given.UV_CACHE_DIR, path.join(storage, 'uv-cache'));
      assert.equal(given.UV_PYTHON_INSTALL_DIR, path.join(storage, 'python'));
      for (const name of ['VIRTUAL_ENV', 'CONDA_PREFIX', 'UV_PYTHON', 'UV_CONFIG_FILE', 'UV_PROJECT_ENVIRONMENT', 'PYTHONPATH']) {
        assert.equal(given[name], undefined, `${name} reached ${argv.join(' ')}`);
      }
      // Where to download from is the user's to say.
      assert.equal(given.UV_PYTHON_INSTALL_MIRROR, 'https://mirror.example/pbs');
      assert.equal(given.UV_INDEX_URL, 'https://index.example/simple');
      assert.equal(given.HTTPS_PROXY, 'http://proxy:3128');
    }
    // No virtual environment is looked for when finding the Python uv installed; a venv is made with no project.
    assert.ok(seen[1].argv.includes('--system') && seen[1].argv.includes('--no-project'), seen[1].argv.join(' '));
    assert.ok(seen[2].argv.includes('--no-project') && seen[2].argv.includes(python.path), seen[2].argv.join(' '));
    assert.deepEqual(project.ran(), []);
  });

  it('never runs a Python of the working folder: not through a relative PATH entry, not its venv package nor its sitecustomize', async () => {
    const project = plantedProject();
    const storage = path.join(dir, 'confined-storage-2');
    const real = await findPython('');
    // A PATH with relative entries first: `.venv/bin` and `.` name folders of the working folder.
    const env = { ...process.env, PATH: `.venv/bin:.:${path.dirname(real.path)}:${process.env.PATH ?? ''}` };
    const found = await inFolder(project.folder, () => findPython('', env));
    assert.ok(!found.path.startsWith(project.folder), found.path);
    // With no uv, the venv is made by `python -m venv`, which would import the working folder's `venv` package.
    const venv = path.join(storage, 'venv');
    const noUv = { ...env, PATH: path.dirname(real.path) };
    await inFolder(project.folder, () => createVenv(venv, real, noUv, new MemoryLog(), storage));
    assert.ok(fs.existsSync(venvPython(venv)), 'the venv was made by the venv module');
    assert.deepEqual(project.ran(), []);
  });
});

const realUv = bundledRuntimes(path.resolve(__dirname, '../../..')).uv ?? process.env.SYMPOSIUM_TEST_UV;

describe('the real uv, confined', { skip: realUv ? false : 'no uv: extension/bin/uv is in per-platform builds (or set SYMPOSIUM_TEST_UV)' }, () => {
  it('makes a venv and installs into it from a project\'s folder without running its Pythons or reading its configuration', async () => {
    const project = plantedProject();
    // The project's configuration would send uv elsewhere: an index that is not there, only the system's Pythons.
    fs.writeFileSync(path.join(project.folder, 'uv.toml'), 'index-url = "http://127.0.0.1:9/simple"\npython-preference = "only-system"\n');
    fs.writeFileSync(path.join(project.folder, 'pyproject.toml'), '[project]\nname = "planted"\nversion = "0"\nrequires-python = ">=3.14"\n');
    const python = await findPython('');
    const wheel = await buildEchoWheel(fs.mkdtempSync(path.join(dir, 'wheel-')), python.path);
    const storage = path.join(dir, 'real-uv-storage');
    const venv = path.join(storage, 'venv');
    const env = { ...process.env, VIRTUAL_ENV: path.join(project.folder, '.venv'), UV_PYTHON: path.join(project.folder, '.venv', 'bin', 'python') };
    await inFolder(project.folder, async () => {
      await createVenv(venv, python, env, new MemoryLog(), storage, realUv);
      await pipInstall(venv, ['--no-index', wheel], 'the echo agent', env, new MemoryLog(), storage, realUv);
    });
    assert.equal((await run(venvPython(venv), ['-I', '-c', 'import sys; print(sys.prefix)'])).stdout.trim(), venv);
    assert.ok(fs.readdirSync(path.join(storage, 'uv-cache')).length > 0, 'uv kept its cache in the storage');
    assert.deepEqual(project.ran(), []);
  });
});
