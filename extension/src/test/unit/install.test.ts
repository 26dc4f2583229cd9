// Installing catalogue agents, for real: an npm tarball packed from the echo agent (npm install
// --prefix), a wheel of the Python echo agent (a venv of its own, pip), and an archive served on
// 127.0.0.1 (sha256 recorded and checked). Each installed agent then answers through the real backend.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as crypto from 'node:crypto';
import { Backend } from '../../backend';
import { CatalogueAgent, platformKey } from '../../catalogue';
import { wireAgent } from '../../config';
import { InstallRecord, installAgent, pipRequirement, readRecords, recordOf, settingFor } from '../../install';
import { findPython, run, SetupError } from '../../setup';
import { ResponsePart } from '../../wire';
import { buildEchoWheel, FileServer, packEchoAgent } from '../fixtures';
import { MemoryLog } from './log';

const SYMPOSIUM = process.env.SYMPOSIUM_BACKEND ?? path.resolve(__dirname, '../../../../.venv/bin/symposium');

let dir: string;
let root: string;
const server = new FileServer();
const backend = new Backend(() => ({ command: SYMPOSIUM, args: ['vscodelm'] }), new MemoryLog());
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-install-'));
  root = path.join(dir, 'storage', 'agents');
  await server.start();
});
after(async () => {
  await backend.stop();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const options = () => ({ root, python: () => findPython(''), log: new MemoryLog(), env: { ...process.env, PIP_NO_INDEX: '1' } });
const entry = (id: string, distribution: CatalogueAgent['distribution']): CatalogueAgent => ({ id, name: `Test ${id}`, version: '1.0.0', description: id, distribution });

/** What the installed agent answers to `text`, through the real backend. */
async function ask(record: InstallRecord, text: string): Promise<string> {
  const parts: ResponsePart[] = [];
  await backend.chat(
    { modelId: record.id, messages: [{ role: 'user', content: [{ type: 'text', value: text }] }], agent: wireAgent(settingFor(record)), options: { tools: [], toolMode: 'auto' } },
    (part) => parts.push(part),
  );
  return parts.flatMap((p) => (p.type === 'text' ? [p.value] : [])).join('');
}

describe('installing a catalogue agent', () => {
  it('npm: installed with npm install --prefix, run with node on its bin script', async () => {
    const tarball = await packEchoAgent(dir);
    const record = await installAgent(entry('echo', { npx: { package: tarball, args: ['--prefix', 'Pinned'] } }), options());
    const folder = path.join(root, 'echo@1.0.0');
    assert.equal(record.folder, folder);
    assert.equal(path.basename(record.command), 'node');
    assert.equal(record.args[0], path.join(folder, 'node_modules', '@symposium-test', 'echo-agent', 'bin', 'echo-agent.js'));
    assert.deepEqual(record.args.slice(1), ['--prefix', 'Pinned']);
    assert.equal(fs.statSync(path.join(folder, 'symposium-install.json')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(root).mode & 0o777, 0o700);
    assert.deepEqual(fs.readdirSync(root), ['echo@1.0.0']); // nothing half-done left beside it
    assert.equal(await ask(record, 'Hello'), 'Pinned: Hello');
    assert.deepEqual(readRecords(root).map((r) => r.id), ['echo']);
    assert.equal(recordOf(settingFor(record), readRecords(root))?.version, '1.0.0');
  });

  it('PyPI: a venv of its own, the package\'s console script as the command', async () => {
    const python = await findPython('');
    const wheel = await buildEchoWheel(dir, python.path);
    const record = await installAgent(entry('echo-py', { uvx: { package: wheel, args: ['--prefix', 'Py'] } }), options());
    assert.equal(record.command, path.join(root, 'echo-py@1.0.0', 'venv', 'bin', 'echo-py-agent'));
    assert.equal(await ask(record, 'Hello'), 'Py: Hello');
    assert.deepEqual(pipRequirement('fast-agent-acp@0.10.48'), { requirement: 'fast-agent-acp==0.10.48', name: 'fast-agent-acp' });
    assert.deepEqual(pipRequirement('fast-agent-acp==0.10.48'), { requirement: 'fast-agent-acp==0.10.48', name: 'fast-agent-acp' });
  });

  it('binary: this platform\'s archive, downloaded, its sha256 recorded and checked', async () => {
    // An archive whose `run` starts the npm-installed echo agent: a real tar.gz, served over HTTP.
    const staging = fs.mkdtempSync(path.join(dir, 'archive-'));
    const script = path.join(root, 'echo@1.0.0', 'node_modules', '@symposium-test', 'echo-agent', 'bin', 'echo-agent.js');
    fs.mkdirSync(path.join(staging, 'dist'));
    fs.writeFileSync(path.join(staging, 'dist', 'run'), `#!/bin/sh\nexec node ${script} "$@"\n`, { mode: 0o644 });
    const archive = path.join(dir, 'echo-linux.tar.gz');
    assert.equal((await run('tar', ['-czf', archive, '-C', staging, 'dist'])).code, 0);
    const bytes = fs.readFileSync(archive);
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    server.routes.set('/echo-linux.tar.gz', { body: bytes });
    const target = { archive: server.url('/echo-linux.tar.gz'), cmd: './dist/run', args: ['--prefix', 'Bin'] };

    const record = await installAgent(entry('echo-bin', { binary: { [platformKey()]: target } }), options());
    assert.equal(record.sha256, sha256);
    assert.equal(record.command, path.join(root, 'echo-bin@1.0.0', 'dist', 'run'));
    assert.equal(fs.statSync(record.command).mode & 0o111, 0o111);
    assert.equal(await ask(record, 'Hello'), 'Bin: Hello');

    const tampered = entry('echo-bad', { binary: { [platformKey()]: { ...target, sha256: '0'.repeat(64) } } });
    await assert.rejects(installAgent(tampered, options()), (error: SetupError) => {
      assert.match(error.message, new RegExp(`does not match the catalogue: sha256 ${sha256}`));
      return true;
    });
    const elsewhere = entry('echo-elsewhere', { binary: { 'plan9-mips': target } });
    await assert.rejects(installAgent(elsewhere, options()), /no build for/);
    assert.deepEqual(fs.readdirSync(root).sort(), ['echo-bin@1.0.0', 'echo-py@1.0.0', 'echo@1.0.0']);
  });

  it('says so when npm cannot get the package', async () => {
    const missing = entry('missing', { npx: { package: path.join(dir, 'no-such-package-1.0.0.tgz') } });
    await assert.rejects(installAgent(missing, options()), /npm could not install/);
    assert.ok(!fs.existsSync(path.join(root, 'missing@1.0.0')));
  });
});
