// Installing catalogue agents, for real: an npm tarball packed from the echo agent (npm install
// --prefix), a wheel of the Python echo agent (a venv of its own, pip), and an archive served on
// 127.0.0.1 (sha256 recorded and checked). Each installed agent then answers through the real backend.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { Backend } from '../../backend';
import { CatalogueAgent, platformKey } from '../../agents/catalogue';
import { wireAgent } from '../../config';
import { InstallRecord, installAgent, LIMITS, pipRequirement, readRecords, recordOf, settingFor } from '../../agents/install';
import { findPython, run, SetupError } from '../../setup';
import { ResponsePart } from '../../wire';
import { buildEchoWheel, FileServer, FIXTURES, packEchoAgent } from '../fixtures';
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

// A catalogue entry names a package; it must not be able to fill the disk, put the command outside
// its folder, or get an archive unpacked without Python's safety filter.
describe('installs that cannot surprise', () => {
  /** Serves `archive` (a file) as this platform's binary of a new catalogue entry. */
  const binaryEntry = (id: string, archive: string, cmd = './dist/run') => {
    const name = path.basename(archive);
    server.routes.set(`/${name}`, { body: fs.readFileSync(archive) });
    return entry(id, { binary: { [platformKey()]: { archive: server.url(`/${name}`), cmd } } });
  };
  /** A tar.gz (or a .zip) written by Python: `files` (name → text) and, streamed, `zeros` bytes of zeros. */
  const tarball = async (name: string, files: Record<string, string>, zeros = 0): Promise<string> => {
    const archive = path.join(dir, name);
    const script = `
import io, json, sys, tarfile, zipfile
class Zeros(io.RawIOBase):
    def __init__(self, n): self.n = n
    def readable(self): return True
    def readinto(self, b):
        k = min(len(b), self.n); b[:k] = bytes(k); self.n -= k; return k
files, zeros = json.loads(sys.argv[2]), int(sys.argv[3])
if sys.argv[1].endswith(".zip"):
    with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, text in files.items():
            z.writestr(name, text)
        if zeros:
            with z.open("dist/data", "w", force_zip64=True) as out:
                source = Zeros(zeros)
                while chunk := source.read(1 << 20):
                    out.write(chunk)
else:
    with tarfile.open(sys.argv[1], "w:gz", compresslevel=9) as t:
        for name, text in files.items():
            data = text.encode(); info = tarfile.TarInfo(name); info.size = len(data); info.mode = 0o755
            t.addfile(info, io.BytesIO(data))
        if zeros:
            info = tarfile.TarInfo("dist/data"); info.size = zeros; t.addfile(info, Zeros(info.size))
`;
    const done = await run((await findPython('')).path, ['-c', script, archive, JSON.stringify(files), String(zeros)]);
    assert.equal(done.code, 0, done.stderr);
    return archive;
  };
  const leftovers = () => fs.readdirSync(root).filter((name) => !['echo-bin@1.0.0', 'echo-py@1.0.0', 'echo@1.0.0'].includes(name));

  for (const kind of ['tar.gz', 'zip']) {
    it(`refuses a small archive (${kind}) that unpacks to a huge one, before writing any of it`, async () => {
      const bomb = await tarball(`bomb.${kind}`, { 'dist/run': '#!/bin/sh\n' }, 512 * 1024 * 1024);
      assert.ok(fs.statSync(bomb).size < 1024 * 1024, `${fs.statSync(bomb).size} bytes`); // under 1 MB for 512 MiB
      await assert.rejects(installAgent(binaryEntry(`bomb-${kind.replace('.', '-')}`, bomb), options()), (error: SetupError) => {
        assert.match(error.message, new RegExp(`archive bomb\\.${kind.replace('.', '\\.')} was not unpacked: it unpacks to more than 74\\.0 MiB, more than Symposium allows for a 0\\.5 MiB download$`));
        return true;
      });
      assert.deepEqual(leftovers(), []);
    });
  }

  it('refuses a download larger than allowed, and keeps nothing of it', async () => {
    const big = path.join(dir, 'big-run'); // not an archive: the executable itself, 1 MiB
    fs.writeFileSync(big, Buffer.concat([Buffer.from('#!/bin/sh\nexit 0\n'), crypto.randomBytes(1024 * 1024)]));
    const limits = { ...LIMITS, downloadBytes: 512 * 1024 };
    await assert.rejects(installAgent(binaryEntry('big', big, './run'), { ...options(), limits }), /The download of Test big .* is larger than 0\.5 MiB; it was not installed/);
    assert.deepEqual(leftovers(), []);
    // The same archive within the limits installs.
    const record = await installAgent(binaryEntry('big', big, './run'), options());
    assert.ok(fs.existsSync(record.command));
    fs.rmSync(record.folder, { recursive: true });
  });

  it('never unpacks without the tar safety filter: a Python without it is refused, not worked around', async () => {
    // Python before 3.11.4, as far as unpacking goes: no tarfile.data_filter, and no filter argument.
    const old = fs.mkdtempSync(path.join(dir, 'old-python-'));
    fs.writeFileSync(path.join(old, 'sitecustomize.py'), [
      'import tarfile',
      'del tarfile.data_filter',
      '_extractall = tarfile.TarFile.extractall',
      'def extractall(self, path=".", members=None, *, numeric_owner=False):',
      '    return _extractall(self, path, members, numeric_owner=numeric_owner)',
      'tarfile.TarFile.extractall = extractall',
      '',
    ].join('\n'));
    const archive = await tarball('plain.tar.gz', { 'dist/run': '#!/bin/sh\n' });
    const env = { ...options().env, PYTHONPATH: old };
    await assert.rejects(installAgent(binaryEntry('nofilter', archive), { ...options(), env }), (error: SetupError) => {
      assert.match(error.message, /Could not unpack plain\.tar\.gz: Python [\d.]+ has no tar extraction filter, and Symposium never unpacks without it/);
      assert.match(error.fix, /symposium\.python to Python 3\.11\.4 or later/);
      return true;
    });
    assert.deepEqual(leftovers(), []);
  });

  it("refuses an npm package whose executable is outside the package", async () => {
    const source = fs.mkdtempSync(path.join(dir, 'evil-'));
    fs.cpSync(path.join(FIXTURES, 'echo-agent'), source, { recursive: true });
    const manifest = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8'));
    fs.writeFileSync(path.join(source, 'package.json'), JSON.stringify({ ...manifest, name: '@symposium-test/outside-bin', bin: { 'outside-bin': '../../outside.js' } }));
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: source });
    assert.equal(packed.code, 0, packed.stderr);
    const tarball = path.join(dir, packed.stdout.trim().split(/\r?\n/).pop()!);
    await assert.rejects(installAgent(entry('outside', { npx: { package: tarball } }), options()), (error: SetupError) => {
      assert.match(error.message, /@symposium-test\/outside-bin's executable "\.\.\/\.\.\/outside\.js" is not (in the package|a file inside the package); it was not installed/);
      return true;
    });
    assert.deepEqual(leftovers(), []);
  });

  it('cleans up what an interrupted install left, and only that', async () => {
    const gone = spawnSync('true').pid!; // a process that has ended: its half-done install is abandoned
    const abandoned = path.join(root, `.x@1.0.0.building-${gone}-abc123`);
    const running = path.join(root, `.y@1.0.0.building-${process.pid}-abc123`); // another window, still at it
    fs.mkdirSync(abandoned);
    fs.mkdirSync(running);
    const record = await installAgent(binaryEntry('after', await tarball('after.tar.gz', { 'dist/run': '#!/bin/sh\n' })), options());
    assert.ok(!fs.existsSync(abandoned));
    assert.ok(fs.existsSync(running));
    fs.rmSync(running, { recursive: true });
    fs.rmSync(record.folder, { recursive: true });
    assert.deepEqual(leftovers(), []);
  });
});
