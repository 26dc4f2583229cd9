// What the vsix carries so that the user installs nothing first (runtimes.ts): npm agents installed with
// the vsix's npm and run on this Node where PATH has none, the engines.node check, npm's tarball
// unpacked, and uv's Python download failing with what was tried and which setting points elsewhere.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CatalogueAgent } from '../../agents/registry';
import { installAgent } from '../../agents/install';
import { bundledRuntimes, hostNode, nodeSatisfies, provisionPython, unpackNpm } from '../../runtimes';
import { findPython, SetupError } from '../../setup';
import { FileServer, packEchoAgent } from '../fixtures';
import { MemoryLog } from './log';

const EXTENSION = path.resolve(__dirname, '../../..');
let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-runtimes-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('engines.node', () => {
  it('reads the ranges packages declare', () => {
    const cases: [string, string, boolean][] = [
      ['>=22', '24.1.0', true], ['>=22', '20.19.0', false], ['>=22.9.0', '22.8.9', false],
      ['^20.17.0 || >=22.9.0', '20.18.1', true], ['^20.17.0 || >=22.9.0', '21.0.0', false], ['^20.17.0 || >=22.9.0', 'v22.12.0', true],
      ['18.x', '18.2.0', true], ['18.x', '19.0.0', false], ['~22.1', '22.1.9', true], ['~22.1', '22.2.0', false],
      ['20 - 22', '22.5.0', true], ['20 - 22', '23.0.0', false], ['>18 <21', '20.1.0', true], ['>18 <21', '18.9.0', false],
      ['*', '12.0.0', true], ['something odd', '1.0.0', true],
    ];
    for (const [range, version, expected] of cases) {
      assert.equal(nodeSatisfies(range, version), expected, `${version} in ${range}`);
    }
  });

  it('runs under Electron as Node only with ELECTRON_RUN_AS_NODE', () => {
    const electron = hostNode(undefined, { execPath: '/opt/code/code', versions: { ...process.versions, electron: '37.2.0', node: '22.17.0' } });
    assert.deepEqual([electron.node, electron.version, electron.env], ['/opt/code/code', '22.17.0', { ELECTRON_RUN_AS_NODE: '1' }]);
    assert.deepEqual(hostNode(undefined).env, {}); // plain Node (code-server's extension host, these tests)
  });
});

const tarball = bundledRuntimes(EXTENSION).npmTarball;

describe('the npm the vsix carries', { skip: tarball ? false : 'no extension/npm/npm-*.tgz (bundle_npm in scripts/tools.sh makes it)' }, () => {
  it('unpacks once into the storage, and runs on this Node', async () => {
    const cli = unpackNpm(tarball!, path.join(dir, 'storage'));
    assert.ok(fs.statSync(cli).isFile());
    assert.equal(unpackNpm(tarball!, path.join(dir, 'storage')), cli); // already there
    const { execFileSync } = await import('node:child_process');
    assert.match(execFileSync(process.execPath, [cli, '--version']).toString(), /^\d+\.\d+\.\d+/);
  });

  it('installs an npm agent where PATH has no Node, to run on VS Code\'s own Node', async () => {
    const packed = await packEchoAgent(dir);
    const storage = path.join(dir, 'storage');
    const env = { HOME: dir, PATH: path.join(dir, 'empty'), npm_config_cache: path.join(dir, 'npm-cache') };
    const agent: CatalogueAgent = { id: 'echo', name: 'Echo', version: '1.0.0', description: '', distribution: { npx: { package: packed } } };
    const node = { ...hostNode(() => unpackNpm(tarball!, storage)), env: { ELECTRON_RUN_AS_NODE: '1' } }; // as under Electron
    const record = await installAgent(agent, { root: path.join(storage, 'agents'), python: () => findPython(''), log: new MemoryLog(), env, node });
    assert.equal(record.command, process.execPath);
    assert.deepEqual(record.env, { ELECTRON_RUN_AS_NODE: '1' });
  });

  it('says which Node an agent needs when neither PATH\'s nor VS Code\'s will do', async () => {
    const packed = await packEchoAgent(path.join(dir, 'future'), { engines: { node: '>=99' } });
    const storage = path.join(dir, 'storage');
    const env = { HOME: dir, PATH: path.join(dir, 'empty'), npm_config_cache: path.join(dir, 'npm-cache') };
    const agent: CatalogueAgent = { id: 'future', name: 'Future', version: '1.0.0', description: '', distribution: { npx: { package: packed } } };
    await assert.rejects(
      installAgent(agent, { root: path.join(storage, 'agents'), python: () => findPython(''), log: new MemoryLog(), env, node: hostNode(() => unpackNpm(tarball!, storage)) }),
      (error: SetupError) => {
        assert.match(error.message, new RegExp(`^Future 1\\.0\\.0 needs Node\\.js >=99; VS Code's own is ${process.versions.node.replace(/\./g, '\\.')}, and there is none on PATH`));
        assert.match(error.fix, /Install Node\.js >=99/);
        return true;
      },
    );
  });
});

const uv = bundledRuntimes(EXTENSION).uv ?? process.env.SYMPOSIUM_TEST_UV;

describe('a Python from uv', { skip: uv ? false : 'no uv: extension/bin/uv is in per-platform builds (or set SYMPOSIUM_TEST_UV)' }, () => {
  const server = new FileServer();
  before(() => server.start());
  after(() => server.close());

  it('names what it tried and the settings that point elsewhere when the download fails', async () => {
    server.routes.set('/downloads.json', {
      type: 'application/json',
      body: JSON.stringify({ 'cpython-3.99.0-linux-x86_64-gnu': { name: 'cpython', arch: { family: 'x86_64', variant: null }, os: 'linux', libc: 'gnu', major: 3, minor: 99, patch: 0, prerelease: '', url: server.url('/missing.tar.gz'), sha256: '0'.repeat(64), variant: null } }),
    });
    const url = server.url('/downloads.json');
    const env = { HOME: dir, PATH: '', UV_PYTHON_DOWNLOADS_JSON_URL: url, UV_CACHE_DIR: path.join(dir, 'uv-cache') };
    await assert.rejects(provisionPython(uv!, path.join(dir, 'storage'), '>=3.99', env, new MemoryLog()), (error: SetupError) => {
      assert.match(error.message, new RegExp(`^No Python >=3\\.99 was found, and uv could not download one from the downloads listed at ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(UV_PYTHON_DOWNLOADS_JSON_URL\\)`));
      assert.match(error.fix, /UV_PYTHON_INSTALL_MIRROR/);
      assert.match(error.fix, /HTTPS_PROXY/);
      assert.match(error.fix, /symposium\.python/);
      return true;
    });
  });
});

