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
import { CatalogueAgent, platformKey } from '../../agents/registry';
import { wireAgent } from '../../config';
import { InstallRecord, installAgent, readRecords, recordOf, settingFor } from '../../agents/install';
import { LIMITS } from '../../agents/installers/common';
import { classifyNpmFailure, VersionMissing } from '../../agents/installers/npm';
import { choosePython, pipRequirement, pythonSatisfies, requiredPython } from '../../agents/installers/pypi';
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

    // Added from a window whose working folder is a project (`code .`): its `tarfile.py` is never imported by the unpacking.
    const project = fs.mkdtempSync(path.join(dir, 'project-'));
    const marker = path.join(project, 'ran');
    fs.writeFileSync(path.join(project, 'tarfile.py'), `open(${JSON.stringify(marker)}, "w").write("tarfile.py")\nraise SystemExit(0)\n`);
    const cwd = process.cwd();
    process.chdir(project);
    const record = await installAgent(entry('echo-bin', { binary: { [platformKey()]: target } }), options()).finally(() => process.chdir(cwd));
    assert.ok(!fs.existsSync(marker), 'the working folder\'s tarfile.py ran');
    assert.equal(record.sha256, sha256);
    assert.equal(record.verified, 'unverified'); // the entry gives no hash: installed, and said so
    assert.equal(record.command, path.join(root, 'echo-bin@1.0.0', 'dist', 'run'));
    assert.equal(fs.statSync(record.command).mode & 0o111, 0o111);
    assert.equal(await ask(record, 'Hello'), 'Bin: Hello');

    const tampered = entry('echo-bad', { binary: { [platformKey()]: { ...target, sha256: '0'.repeat(64) } } });
    await assert.rejects(installAgent(tampered, options()), (error: SetupError) => {
      assert.match(error.message, new RegExp(`does not match the catalogue: sha256 ${sha256}`));
      return true;
    });
    // The hash our catalogue build recorded is checked as the registry's is.
    const recorded = entry('echo-recorded', { binary: { [platformKey()]: { ...target, recordedSha256: '1'.repeat(64) } } });
    await assert.rejects(installAgent(recorded, options()), /does not match the catalogue: .* expected 1{64} \(recorded when Symposium's catalogue was built\)/);
    const good = await installAgent(entry('echo-recorded', { binary: { [platformKey()]: { ...target, recordedSha256: sha256 } } }), options());
    assert.equal(good.verified, 'recorded');
    fs.rmSync(good.folder, { recursive: true });
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

/** The echo agent's package with `changes` to its package.json, packed into a tarball of `dir`. */
async function variant(name: string, changes: object): Promise<string> {
  const source = fs.mkdtempSync(path.join(dir, `${name}-`));
  fs.cpSync(path.join(FIXTURES, 'echo-agent'), source, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(source, 'package.json'), JSON.stringify({ ...manifest, name: `@symposium-test/${name}`, ...changes }));
  const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: source });
  assert.equal(packed.code, 0, packed.stderr);
  return path.join(dir, packed.stdout.trim().split(/\r?\n/).pop()!);
}

describe('npm installs as npm does them', () => {
  it('accepts a bin npm accepts: "../bin/x.js" is read as npm reads it, inside the package', async () => {
    // As @github/copilot-language-server's "../dist/language-server.js".
    const tarball = await variant('dotdot-bin', { bin: { 'dotdot-bin': '../bin/echo-agent.js' } });
    const record = await installAgent(entry('dotdot', { npx: { package: tarball, args: ['--prefix', 'Dots'] } }), options());
    assert.equal(record.args[0], path.join(root, 'dotdot@1.0.0', 'node_modules', '@symposium-test', 'dotdot-bin', 'bin', 'echo-agent.js'));
    assert.equal(await ask(record, 'Hello'), 'Dots: Hello');
    fs.rmSync(record.folder, { recursive: true });
  });

  it('runs install scripts only for a package the catalogue says needs them', async () => {
    const mark = path.join(dir, 'postinstall-ran');
    const tarball = await variant('with-script', { scripts: { postinstall: 'node -e "require(\'fs\').writeFileSync(process.env.SYMPOSIUM_TEST_MARK, \'ran\')"' } });
    const env = { ...options().env, SYMPOSIUM_TEST_MARK: mark };
    const quiet = await installAgent(entry('scripted', { npx: { package: tarball } }), { ...options(), env });
    assert.ok(!fs.existsSync(mark), 'the install script ran without being allowed');
    assert.equal(quiet.installScripts, false);
    const allowed = await installAgent({ ...entry('scripted', { npx: { package: tarball } }), installScripts: 'it fetches its binary' }, { ...options(), env });
    assert.equal(fs.readFileSync(mark, 'utf8'), 'ran');
    assert.equal(allowed.installScripts, true);
    fs.rmSync(allowed.folder, { recursive: true });
  });

  it('reports a failing install script as that, not as a network failure', async () => {
    const tarball = await variant('bad-script', { scripts: { postinstall: 'node -e "console.error(\'getaddrinfo ENOTFOUND download.example\'); process.exit(1)"' } });
    await assert.rejects(installAgent({ ...entry('bad-script', { npx: { package: tarball } }), installScripts: 'test' }, options()), (error: SetupError) => {
      assert.match(error.message, /^the install script of bad-script failed \(sh -c node -e /);
      assert.doesNotMatch(error.message, /offline/);
      assert.match(error.detail, /ENOTFOUND download\.example/);
      return true;
    });
  });

  it('reads npm\'s own failure texts', () => {
    // npm 11's words, as it printed them on this machine.
    const etarget = 'npm error code ETARGET\nnpm error notarget No matching version found for droid@0.218.0.\nnpm error notarget In most cases you or one of your dependencies are requesting a package version that doesn\'t exist.\nnpm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log\n';
    assert.deepEqual(classifyNpmFailure(etarget), { kind: 'missing-version', spec: 'droid@0.218.0' });
    const script = 'npm error code 1\nnpm error path /tmp/npmt/b/node_modules/failing-script\nnpm error command failed\nnpm error command sh -c node scripts/install.js\nnpm error getaddrinfo ENOTFOUND download.qoder.example\nnpm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log\n';
    assert.deepEqual(classifyNpmFailure(script), { kind: 'install-script', path: '/tmp/npmt/b/node_modules/failing-script', command: 'sh -c node scripts/install.js' });
    const e404 = "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/no-such-package-symposium-xyz\nnpm error 404\nnpm error 404  The requested resource 'no-such-package-symposium-xyz@1.0.0' could not be found or you do not have permission to access it.\n";
    assert.deepEqual(classifyNpmFailure(e404), { kind: 'missing-package', spec: 'no-such-package-symposium-xyz@1.0.0' });
    assert.deepEqual(classifyNpmFailure('npm error code ENOTFOUND\nnpm error syscall getaddrinfo\nnpm error errno ENOTFOUND\nnpm error network request to https://registry.npmjs.org/x failed'), { kind: 'offline' });
    assert.deepEqual(classifyNpmFailure('npm error code EACCES'), { kind: 'other' });
  });

  it('says a version the npm registry lacks is missing, and names the newest it has', async () => {
    // An npm registry on 127.0.0.1 (npm's own `npm_config_registry`) that has the package at 1.4.2 only.
    const name = 'symposium-test-versions';
    const packument = { name, 'dist-tags': { latest: '1.4.2' }, versions: { '1.4.2': { name, version: '1.4.2', dist: { tarball: server.url(`/${name}/-/${name}-1.4.2.tgz`) } } } };
    server.routes.set(`/${name}`, { body: JSON.stringify(packument), type: 'application/json' });
    const env = { ...options().env, npm_config_registry: server.url('/'), npm_config_cache: path.join(dir, 'npm-cache-versions'), npm_config_fetch_retries: '0' };
    await assert.rejects(installAgent(entry('versions-missing', { npx: { package: `${name}@0.0.0-symposium-missing` } }), { ...options(), env }), (error: unknown) => {
      assert.ok(error instanceof VersionMissing, String(error));
      assert.equal(error.message, `the npm registry has no version 0.0.0-symposium-missing of ${name}; the newest it has is 1.4.2`);
      assert.match(error.fix, /^Install 1\.4\.2 instead/);
      assert.equal(error.newest, '1.4.2');
      return true;
    });
    assert.ok(server.hits.includes(`/${name}`), 'npm asked the registry on 127.0.0.1');
    assert.ok(!fs.existsSync(path.join(root, 'versions-missing@1.0.0')));
  });
});

describe('a Python for a PyPI agent', () => {
  it('reads requires-python as pip does', () => {
    assert.ok(pythonSatisfies('>=3.12,<3.16', '3.12.0'));
    assert.ok(!pythonSatisfies('>=3.12,<3.16', '3.11.7'));
    assert.ok(!pythonSatisfies('>=3.12,<3.16', '3.16.0'));
    assert.ok(pythonSatisfies('~=3.11', '3.13.1'));
    assert.ok(!pythonSatisfies('~=3.11.2', '3.12.0'));
    assert.ok(pythonSatisfies('==3.12.*', '3.12.9'));
    assert.ok(!pythonSatisfies('!=3.12.*', '3.12.9'));
    assert.ok(pythonSatisfies('>=3.9, !=3.10.0', '3.10.1'));
    assert.ok(pythonSatisfies('', '3.8.0'));
  });

  it("reads the version a package needs from pip's and uv's refusals", () => {
    // pip 23.2's words, from this machine's Python 3.11 asked for fast-agent-acp 0.10.1.
    const pip = 'ERROR: Ignored the following versions that require a different python version: 0.10.0 Requires-Python <3.15,>=3.12; 0.10.1 Requires-Python <3.15,>=3.12; 0.10.10 Requires-Python <3.15,>=3.12; 0.3.28 Requires-Python <3.14,>=3.13.5\nERROR: Could not find a version that satisfies the requirement fast-agent-acp==0.10.1 (from versions: none)\nERROR: No matching distribution found for fast-agent-acp==0.10.1';
    assert.equal(requiredPython(pip, '0.10.1'), '<3.15,>=3.12');
    assert.equal(requiredPython(pip, '0.3.28'), '<3.14,>=3.13.5');
    assert.equal(requiredPython("ERROR: Package 'fast-agent-acp' requires a different Python: 3.11.7 not in '<3.16,>=3.12'", '0.10.48'), '<3.16,>=3.12');
    assert.equal(requiredPython('  × No solution found when resolving dependencies:\n  ╰─▶ Because the current Python version (3.11.7) does not satisfy Python>=3.12,<3.15 and fast-agent-acp==0.10.1 depends on Python>=3.12,<3.15, we can conclude', '0.10.1'), '>=3.12,<3.15');
    assert.equal(requiredPython('ERROR: No matching distribution found for x==1.0', '1.0'), undefined);
  });

  it('chooses the newest Python the package accepts, or none', () => {
    const pythons = [{ path: '/usr/bin/python3.11', version: '3.11.7' }, { path: '/usr/bin/python3.9', version: '3.9.18' }, { path: '/opt/python3.13', version: '3.13.2' }, { path: '/usr/bin/python3.12', version: '3.12.4' }];
    assert.equal(choosePython('>=3.12,<3.16', pythons)?.path, '/opt/python3.13');
    assert.equal(choosePython('<3.12', pythons)?.path, '/usr/bin/python3.11');
    assert.equal(choosePython('>=3.14', pythons), undefined);
  });

  it('names the version a package needs when this machine has none', async () => {
    const python = await findPython('');
    const wheel = await buildEchoWheel(dir, python.path);
    const env = { ...options().env, PATH: path.dirname(process.execPath) }; // no uv, no other Python
    await assert.rejects(
      installAgent(entry('picky', { uvx: { package: 'echo-py-agent==1.0.0' } }), { ...options(), env, requiresPython: async () => '>=3.99' }),
      (error: SetupError) => {
        assert.match(error.message, new RegExp(`^Test picky 1\\.0\\.0 needs Python >=3\\.99; this machine has ${python.version.replace(/\./g, '\\.')}`));
        assert.match(error.fix, /uv/);
        return true;
      },
    );
    // A Python it accepts: installed as before.
    const record = await installAgent(entry('easy', { uvx: { package: wheel } }), { ...options(), requiresPython: async () => `>=${python.version}` });
    assert.equal(await ask(record, 'Hi'), 'Echo: Hi');
    fs.rmSync(record.folder, { recursive: true });
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
    // The unpacker runs isolated (-I: no PYTHONPATH, no sitecustomize), so the old Python is a program
    // of its own: the real one, its tarfile made old, running the code it is given with -c.
    const real = await findPython('');
    const old = path.join(fs.mkdtempSync(path.join(dir, 'old-python-')), 'python');
    fs.writeFileSync(old, [
      `#!${real.path}`,
      'import sys, tarfile',
      'del tarfile.data_filter',
      '_extractall = tarfile.TarFile.extractall',
      'def extractall(self, path=".", members=None, *, numeric_owner=False):',
      '    return _extractall(self, path, members, numeric_owner=numeric_owner)',
      'tarfile.TarFile.extractall = extractall',
      'args = sys.argv[1:]',
      'while args and args[0] != "-c":',
      '    args.pop(0)',
      'sys.argv = ["-c", *args[2:]]',
      'exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})',
      '',
    ].join('\n'), { mode: 0o755 });
    const archive = await tarball('plain.tar.gz', { 'dist/run': '#!/bin/sh\n' });
    await assert.rejects(installAgent(binaryEntry('nofilter', archive), { ...options(), python: async () => ({ ...real, path: old }) }), (error: SetupError) => {
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
