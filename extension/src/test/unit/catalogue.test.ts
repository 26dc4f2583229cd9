// The agent catalogue: the shipped copy, the registry's format, and refreshing from a registry on
// 127.0.0.1 that answers, fails, or does not answer.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCatalogue, MAX_AGE_MS, REFRESH_MS } from '../../agents/catalogue';
import {
  applyOverrides, checkSha256, compareVersions, installMethod, locationVersion, neverOlder, npmName, parseRegistry, pinnedVersion, platformKey, shown, updateFor,
} from '../../agents/registry';
import { FileServer } from '../fixtures';

const SHIPPED = path.resolve(__dirname, '../../../catalogue/registry.json');
const OVERRIDES = path.resolve(__dirname, '../../../catalogue/overrides.json');
const agent = (id: string, distribution: object, extra: object = {}) => ({ id, name: id.toUpperCase(), version: '1.0.0', description: `the ${id} agent`, distribution, ...extra });
const TEST_REGISTRY = { version: '1.0.0', agents: [agent('only-here', { npx: { package: 'only-here@1.0.0' } })], extensions: [] };

describe('the catalogue shipped with the extension', () => {
  it('is a registry.json with the well-known agents, each installable here', () => {
    const { agents, problems } = parseRegistry(JSON.parse(fs.readFileSync(SHIPPED, 'utf8')));
    assert.deepEqual(problems, []);
    const ids = agents.map((a) => a.id);
    for (const id of ['claude-acp', 'codex-acp', 'gemini', 'fast-agent', 'opencode', 'goose', 'github-copilot-cli', 'cline', 'cursor', 'junie', 'kilo', 'amp-acp', 'devin', 'pi-acp']) {
      assert.ok(ids.includes(id), `${id} is missing`);
    }
    const byId = Object.fromEntries(agents.map((a) => [a.id, a]));
    assert.equal(byId['claude-acp'].distribution.npx?.package, '@agentclientprotocol/claude-agent-acp@0.100.0');
    assert.equal(installMethod(byId['claude-acp'], 'linux-x86_64'), 'npx');
    assert.equal(byId['codex-acp'].distribution.npx?.package.split('@')[1], 'agentclientprotocol/codex-acp');
    assert.equal(installMethod(byId['codex-acp'], 'linux-x86_64'), 'npx');
    assert.equal(installMethod(byId['goose'], 'linux-x86_64'), 'binary');
    assert.equal(installMethod(byId['kilo'], 'linux-x86_64'), 'npx'); // a package before a binary: npm checks its integrity
    assert.deepEqual(byId['gemini'].distribution.npx?.args, ['--acp']);
    assert.equal(installMethod(byId['fast-agent'], 'linux-x86_64'), 'uvx');
    assert.equal(installMethod(byId['kimi'], 'darwin-x86_64'), undefined); // no build for it
  });

  it('names this platform as the registry does', () => {
    assert.equal(platformKey('linux', 'x64'), 'linux-x86_64');
    assert.equal(platformKey('darwin', 'arm64'), 'darwin-aarch64');
    assert.equal(platformKey('win32', 'x64'), 'windows-x86_64');
  });
});

describe('the registry format', () => {
  it('keeps what it can install, says why it drops the rest, ignores fields it does not know', () => {
    const { agents, problems } = parseRegistry({
      agents: [
        agent('ok', { uvx: { package: 'ok==1.0.0', args: ['acp'] } }, { some_future_field: { nested: true } }),
        agent('../escape', { npx: { package: 'x@1.0.0' } }),
        { id: 'no-version', name: 'x', distribution: { npx: { package: 'x' } } },
        agent('nothing', { docker: { image: 'x' } }),
        agent('bad-binary', { binary: { 'linux-x86_64': { archive: 'https://x/y.tar.gz' } } }),
      ],
    });
    assert.deepEqual(agents.map((a) => a.id), ['ok']);
    assert.deepEqual(agents[0].distribution.uvx, { package: 'ok==1.0.0', args: ['acp'], env: {} });
    assert.equal(problems.length, 4);
    assert.deepEqual(parseRegistry({ nope: 1 }).agents, []);
  });
});

describe('an entry\'s version and what it installs', () => {
  it('must agree: a package pinned to another version, or to none, and a download of another version are refused, each said', () => {
    const { agents, problems } = parseRegistry({
      agents: [
        agent('liar', { npx: { package: 'liar@0.0.1' } }, { version: '9.9.9' }),
        agent('range', { npx: { package: 'range@^1.0.0' } }),
        agent('tagged', { npx: { package: '@scope/tagged@latest' } }),
        agent('bare', { uvx: { package: 'bare' } }),
        agent('py-liar', { uvx: { package: 'py-liar[acp]==0.5.0' } }),
        agent('mixed', {
          npx: { package: '@kilocode/cli@7.5.6' },
          binary: {
            'linux-x86_64': { archive: 'https://github.com/x/releases/download/v7.5.5/kilo-linux-x64.zip', cmd: './kilo' },
            'darwin-aarch64': { archive: 'https://github.com/x/releases/download/v7.5.6/kilo-darwin-arm64.zip', cmd: './kilo' },
          },
        }, { version: '7.5.6' }),
      ],
    });
    assert.deepEqual(problems, [
      'liar: it says version 9.9.9, but its npm package liar@0.0.1 installs 0.0.1: refused',
      'liar: no distribution we can install',
      'range: its npm package range@^1.0.0 is not pinned to one version: refused',
      'range: no distribution we can install',
      'tagged: its npm package @scope/tagged@latest is not pinned to one version: refused',
      'tagged: no distribution we can install',
      'bare: its PyPI package bare is not pinned to one version: refused',
      'bare: no distribution we can install',
      'py-liar: it says version 1.0.0, but its PyPI package py-liar[acp]==0.5.0 installs 0.5.0: refused',
      'py-liar: no distribution we can install',
      'mixed: it says version 7.5.6, but its linux-x86_64 download https://github.com/x/releases/download/v7.5.5/kilo-linux-x64.zip installs 7.5.5: refused',
    ]);
    assert.deepEqual(agents.map((a) => a.id), ['mixed']);
    assert.deepEqual(Object.keys(agents[0].distribution.binary ?? {}), ['darwin-aarch64']); // the one of its version stays
    assert.equal(agents[0].distribution.npx?.package, '@kilocode/cli@7.5.6');
  });

  it('is read from npm and PyPI pins, and from what a download\'s path names', () => {
    assert.equal(pinnedVersion('npx', '@agentclientprotocol/claude-agent-acp@0.100.0'), '0.100.0');
    assert.equal(pinnedVersion('npx', 'droid@0.215.0-beta.1'), '0.215.0-beta.1');
    assert.equal(pinnedVersion('npx', 'droid'), undefined);
    assert.equal(pinnedVersion('npx', 'droid@1.x'), undefined);
    assert.equal(pinnedVersion('npx', 'droid@>=1.0.0'), undefined);
    assert.equal(pinnedVersion('uvx', 'fast-agent-acp==0.10.1'), '0.10.1');
    assert.equal(pinnedVersion('uvx', 'fast-agent-acp@0.10.1'), '0.10.1');
    assert.equal(pinnedVersion('uvx', 'fast-agent-acp==1.0.0rc1'), '1.0.0rc1');
    assert.equal(pinnedVersion('uvx', 'fast-agent-acp>=0.10'), undefined);
    assert.equal(pinnedVersion('uvx', 'fast-agent-acp==0.10.*'), undefined);
    assert.equal(pinnedVersion('npx', 'http://127.0.0.1:4000/echo-agent-1.0.0.tgz', '1.0.0'), '1.0.0'); // the host's numbers are not a version
    assert.equal(pinnedVersion('npx', 'http://127.0.0.1:4000/echo-agent-2.0.0.tgz', '1.0.0'), '2.0.0');
    assert.equal(pinnedVersion('uvx', '/tmp/wheels/echo_py-1.0.0-py3-none-any.whl', '1.0.0'), '1.0.0');
    assert.equal(locationVersion('https://github.com/JetBrains/junie-acp-release/releases/download/2698.3/junie-release-2698.3-macos-aarch64.zip', '2698.3.0'), '2698.3.0');
    assert.equal(locationVersion('https://downloads.cursor.com/lab/2026.10.01-e373342/linux/x64/agent-cli-package.tar.gz', '2026.10.01'), '2026.10.01');
    assert.equal(locationVersion('https://x.example/v2.0.0-beta.1/tool-x86_64.tar.gz', '2.0.0-beta.1'), '2.0.0-beta.1');
    assert.equal(locationVersion('https://x.example/latest/tool-x86_64.tar.gz', '1.0.0'), ''); // names none: its sha256 checks it
  });

  it('agrees in every entry of the shipped catalogue', () => {
    const shipped = JSON.parse(fs.readFileSync(SHIPPED, 'utf8'));
    const { problems } = parseRegistry(shipped);
    assert.deepEqual(problems.filter((p) => / installs | not pinned /.test(p)), []);
  });
});

describe('names from the catalogue', () => {
  it('are shown without controls, bidi overrides or invisible characters, and at most 200 characters long', () => {
    const hostile = '\u202eexe.txt\u202c \x1b[31mred\r\nnext\u2066\u200b \u{e0041}' + 'x'.repeat(10_000);
    const { agents, problems } = parseRegistry({
      agents: [
        agent('spoof', { npx: { package: 'spoof@1.0.0' } }, { name: hostile, description: hostile }),
        agent('blank', { npx: { package: 'blank@1.0.0' } }, { name: '\u202e\u200b' }),
      ],
    });
    assert.deepEqual(problems, ['blank: needs a name and a version']);
    const [spoof] = agents;
    assert.ok(spoof.name.startsWith('exe.txt [31mred next x'), spoof.name);
    assert.equal(spoof.name.length, 200);
    assert.ok(spoof.name.endsWith('…'));
    assert.equal(spoof.description, spoof.name);
    assert.equal(shown('  Claude Code  '), 'Claude Code');
    const cut = shown('x'.repeat(198) + '😀😀😀');
    assert.equal(cut, 'x'.repeat(198) + '😀…');
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(cut), 'no half of a surrogate pair');
    assert.equal(shown('👨\u200d👩\u200d👧 famille'), '👨\u200d👩\u200d👧 famille'); // joiners kept: emoji need them
  });
});

describe('refreshing from the registry', () => {
  const server = new FileServer();
  let dir: string;
  let saved: string;
  before(async () => {
    await server.start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-catalogue-'));
    saved = path.join(dir, 'storage', 'catalogue.json');
  });
  after(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const load = (url: string, timeoutMs?: number) => loadCatalogue({ url, shipped: SHIPPED, saved, timeoutMs });

  it('uses the registry when it answers, and keeps its answer (0600)', async () => {
    server.routes.set('/registry.json', { body: JSON.stringify(TEST_REGISTRY), type: 'application/json' });
    const catalogue = await load(server.url('/registry.json'));
    assert.equal(catalogue.source, 'registry');
    assert.deepEqual(catalogue.agents.map((a) => a.id), ['only-here']);
    assert.equal(fs.statSync(saved).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(saved)).mode & 0o777, 0o700);
  });

  it('uses a saved answer younger than the refresh interval without asking the registry', async () => {
    server.routes.set('/registry.json', { status: 503, body: 'down' });
    const catalogue = await load(server.url('/registry.json'));
    assert.equal(catalogue.source, 'saved');
    assert.match(catalogue.note ?? '', /saved 0 minutes ago/);
  });

  it('falls back to the saved answer when the registry fails, saying why', async () => {
    server.routes.set('/registry.json', { status: 503, body: 'down' });
    const catalogue = await loadCatalogue({ url: server.url('/registry.json'), shipped: SHIPPED, saved, now: Date.now() + REFRESH_MS + 1000 });
    assert.equal(catalogue.source, 'saved');
    assert.deepEqual(catalogue.agents.map((a) => a.id), ['only-here']);
    assert.match(catalogue.note ?? '', /503/);
  });

  it('does not use a saved answer older than its maximum age', async () => {
    server.routes.set('/registry.json', { status: 503, body: 'down' });
    const catalogue = await loadCatalogue({ url: server.url('/registry.json'), shipped: SHIPPED, saved, now: Date.now() + MAX_AGE_MS + 1000 });
    assert.equal(catalogue.source, 'shipped');
    assert.match(catalogue.note ?? '', /503.*older than 30 days/);
  });

  it('applies our overrides and recorded hashes to what the registry says', async () => {
    const shipped = path.join(dir, 'shipped.json');
    const overrides = path.join(dir, 'overrides.json');
    const archive = 'https://example.invalid/tool-1.0.0.tar.gz';
    fs.writeFileSync(shipped, JSON.stringify({ agents: [agent('tool', { binary: { 'linux-x86_64': { archive, cmd: './tool', recordedSha256: 'a'.repeat(64) } } })] }));
    fs.writeFileSync(overrides, JSON.stringify({ patch: { tool: { args: ['--acp'], env: { NO_UPDATE: '1' } } }, npmScripts: { 'needs-scripts': 'fetches its binary' } }));
    server.routes.set('/registry.json', { body: JSON.stringify({ agents: [
      agent('tool', { binary: { 'linux-x86_64': { archive, cmd: './tool', args: ['--experimental-acp'], env: { A: 'b' } } } }),
      agent('needs-scripts', { npx: { package: 'needs-scripts@1.0.0' } }),
    ] }) });
    const catalogue = await loadCatalogue({ url: server.url('/registry.json'), shipped, overrides, saved: path.join(dir, 'other', 'saved.json'), refresh: true });
    assert.equal(catalogue.source, 'registry');
    const [tool, scripts] = catalogue.agents;
    assert.deepEqual(tool.distribution.binary?.['linux-x86_64'], { archive, cmd: './tool', args: ['--acp'], env: { A: 'b', NO_UPDATE: '1' }, recordedSha256: 'a'.repeat(64) });
    assert.equal(scripts.installScripts, 'fetches its binary');
    assert.equal(tool.installScripts, undefined);
  });

  it('falls back to the shipped copy when nothing was saved: unreachable, no answer in time, not a registry', async () => {
    fs.rmSync(saved);
    const closed = new FileServer();
    await closed.start();
    const nobody = closed.url('/registry.json');
    await closed.close();
    server.routes.set('/hang.json', 'hang');
    server.routes.set('/other.json', { body: JSON.stringify({ hello: 'world' }) });
    for (const [url, why] of [[nobody, /ECONNREFUSED|refused|fetch failed/], [server.url('/hang.json'), /no answer in 0\.3 s/], [server.url('/other.json'), /no agent/]] as const) {
      const catalogue = await load(url, 300);
      assert.equal(catalogue.source, 'shipped', url);
      assert.match(catalogue.note ?? '', why);
      assert.ok(catalogue.agents.some((a) => a.id === 'claude-acp'));
    }
    assert.equal((await load('')).source, 'shipped');
    assert.ok(!fs.existsSync(saved));
  });
});

describe('a refresh that lists an older version', () => {
  let dir: string;
  const server = new FileServer();
  before(async () => {
    await server.start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-catalogue-'));
  });
  after(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const tool = (version: string, extra: object = {}) => agent('tool', { npx: { package: `tool@${version}` } }, { version, ...extra });
  const lines: string[] = [];
  const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
  const refresh = async (registry: object[], shipped: string, saved: string) => {
    server.routes.set('/registry.json', { body: JSON.stringify({ agents: registry }), type: 'application/json' });
    lines.length = 0;
    const catalogue = await loadCatalogue({ url: server.url('/registry.json'), shipped, saved, refresh: true, log });
    assert.equal(catalogue.source, 'registry');
    return Object.fromEntries(catalogue.agents.map((a) => [a.id, a.version]));
  };

  it('keeps the newer version it had (shipped, or saved from an earlier refresh), and says so', async () => {
    const shipped = path.join(dir, 'shipped.json');
    const saved = path.join(dir, 'keeps', 'catalogue.json');
    fs.writeFileSync(shipped, JSON.stringify({ agents: [tool('2.0.0'), agent('other', { npx: { package: 'other@1.0.0' } })] }));
    assert.deepEqual(await refresh([tool('1.0.0'), agent('other', { npx: { package: 'other@1.1.0' } }, { version: '1.1.0' })], shipped, saved), { tool: '2.0.0', other: '1.1.0' });
    assert.deepEqual(lines, ['catalogue: tool: the registry lists 1.0.0, older than 2.0.0 (the catalogue shipped with Symposium): 2.0.0 kept']);
    assert.deepEqual(await refresh([tool('3.0.0')], shipped, saved), { tool: '3.0.0' });
    assert.deepEqual(await refresh([tool('2.5.0')], shipped, saved), { tool: '3.0.0' }); // the saved 3.0.0 is the floor now
    assert.match(lines.join('\n'), /tool: the registry lists 2\.5\.0, older than 3\.0\.0 \(the copy saved when the registry last answered\): 3\.0\.0 kept/);
    // The saved copy, read without the registry, is what was offered.
    const later = await loadCatalogue({ url: '', shipped, saved });
    assert.equal(later.source, 'saved');
    assert.equal(later.agents.find((a) => a.id === 'tool')?.version, '3.0.0');
  });

  it('goes back only where the registry marks the entry a downgrade', async () => {
    const shipped = path.join(dir, 'shipped-marked.json');
    fs.writeFileSync(shipped, JSON.stringify({ agents: [tool('2.0.0')] }));
    assert.deepEqual(await refresh([tool('1.0.0', { downgrade: true })], shipped, path.join(dir, 'marked', 'catalogue.json')), { tool: '1.0.0' });
    assert.deepEqual(lines, ['catalogue: tool: the registry marks 1.0.0 as a downgrade from 2.0.0 (the catalogue shipped with Symposium): 1.0.0 offered']);
  });

  it('is a pure rule the build applies too', () => {
    const { json, kept } = neverOlder({ agents: [tool('1.0.0'), { id: 'broken' }] }, [{ json: { agents: [tool('1.5.0'), { id: 'tool', version: '9.0.0' }] }, label: 'before' }]);
    assert.deepEqual((json as { agents: { version?: string }[] }).agents.map((a) => a.version), ['1.5.0', undefined]); // an unusable floor entry is no floor
    assert.equal(kept.length, 1);
  });
});

describe('a registry that answers too much', () => {
  /** A server that streams `total` bytes of a JSON-looking answer, as fast as it is read, and
   * tells how many it wrote before the client hung up. */
  function flood(total: number, announce: boolean) {
    let written = 0;
    let closed!: () => void;
    const hungUp = new Promise<void>((resolve) => (closed = resolve));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...(announce ? { 'content-length': String(total) } : {}) });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            return void res.once('drain', more);
          }
        }
        res.end();
      };
      res.on('close', closed);
      more();
    });
    return { server, hungUp, written: () => written };
  }

  for (const announce of [false, true]) {
    it(`stops reading at 8 MiB (${announce ? 'as announced' : 'chunked, no length given'}), and falls back`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-catalogue-'));
      const total = 256 * 1024 * 1024;
      const { server, hungUp, written } = flood(total, announce);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/registry.json`;
        const catalogue = await loadCatalogue({ url, shipped: SHIPPED, saved: path.join(dir, 'catalogue.json'), timeoutMs: 60_000 });
        assert.equal(catalogue.source, 'shipped');
        assert.match(catalogue.note ?? '', /the answer is larger than 8 MiB/);
        await hungUp;
        assert.ok(written() < 64 * 1024 * 1024, `the server wrote ${written()} bytes before the client hung up`);
      } finally {
        server.closeAllConnections();
        server.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('versions', () => {
  it('compares as semver does, and calendar versions part by part', () => {
    const ordered = ['0.9.2', '0.10.0', '0.10.48', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.6.2', '2026.8.11', '2026.10.01'];
    for (let i = 0; i < ordered.length - 1; i++) {
      assert.equal(compareVersions(ordered[i], ordered[i + 1]), -1, `${ordered[i]} < ${ordered[i + 1]}`);
      assert.equal(compareVersions(ordered[i + 1], ordered[i]), 1, `${ordered[i + 1]} > ${ordered[i]}`);
    }
    assert.equal(compareVersions('1.2.3', '1.2.3+build.5'), 0);
    assert.equal(compareVersions('v1.2.3', '1.2.3'), 0);
    assert.equal(compareVersions('2698.3', '2698.3.0'), 0);
  });

  it('offers an update only when the catalogue\'s version is newer', () => {
    const agents = parseRegistry({ agents: [agent('claude-acp', { npx: { package: 'x@0.85.1' } }, { version: '0.85.1' }), agent('gemini', { npx: { package: 'g@0.56.0' } }, { version: '0.56.0' })] }).agents;
    assert.equal(updateFor({ id: 'claude-acp', version: '0.100.0' }, agents), undefined); // ours is ahead of the registry
    assert.equal(updateFor({ id: 'gemini', version: '0.27.3' }, agents)?.version, '0.56.0');
    assert.equal(updateFor({ id: 'gemini', version: '0.56.0' }, agents), undefined);
    assert.equal(updateFor({ id: 'gone', version: '1.0.0' }, agents), undefined);
    // An entry that says 9.9.9 but installs 0.0.1 is never offered: it would record 9.9.9 over 0.0.1.
    const lying = parseRegistry({ agents: [agent('gemini', { npx: { package: 'g@0.0.1' } }, { version: '9.9.9' })] }).agents;
    assert.equal(updateFor({ id: 'gemini', version: '0.56.0' }, lying), undefined);
  });
});

describe('our overrides', () => {
  it('replace the registry\'s entry while its version is not newer, remove, and patch args and env', () => {
    const registry = { version: '1.0.0', agents: [
      agent('claude-acp', { npx: { package: 'c@0.85.1' } }, { version: '0.85.1' }),
      agent('codex-acp', { npx: { package: 'x@2.0.0' } }, { version: '2.0.0' }),
      agent('old', { npx: { package: 'o@1.0.0' } }),
      agent('gemini', { npx: { package: 'g@1.0.0', args: ['--experimental-acp'] } }),
    ] };
    const overrides = {
      remove: ['old'],
      agents: [agent('claude-acp', { npx: { package: 'c@0.100.0' } }, { version: '0.100.0' }), agent('codex-acp', { npx: { package: 'x@1.0.0' } }, { version: '1.0.0' }), agent('new', { uvx: { package: 'n==1.0.0' } })],
      patch: { gemini: { args: ['--acp'], env: { GEMINI_CLI_NO_RELAUNCH: 'true' } } },
    };
    const { agents } = parseRegistry(applyOverrides(registry, overrides, true));
    const byId = Object.fromEntries(agents.map((a) => [a.id, a]));
    assert.deepEqual(Object.keys(byId).sort(), ['claude-acp', 'codex-acp', 'gemini', 'new']); // the build adds ours
    assert.ok(!parseRegistry(applyOverrides(registry, overrides)).agents.some((a) => a.id === 'new')); // at run time, the registry's list stands
    assert.equal(byId['claude-acp'].version, '0.100.0'); // ours, while the registry's is older
    assert.equal(byId['codex-acp'].version, '2.0.0'); // the registry's, once it is newer
    assert.deepEqual(byId.gemini.distribution.npx, { package: 'g@1.0.0', args: ['--acp'], env: { GEMINI_CLI_NO_RELAUNCH: 'true' } });
    assert.equal((registry.agents[3].distribution as { npx: { args: string[] } }).npx.args[0], '--experimental-acp'); // the input is left as it was
  });

  it('are the shipped file, and the shipped catalogue is built with them', () => {
    const overrides = JSON.parse(fs.readFileSync(OVERRIDES, 'utf8'));
    const shipped = JSON.parse(fs.readFileSync(SHIPPED, 'utf8'));
    assert.deepEqual(parseRegistry(applyOverrides(shipped, overrides)).agents, parseRegistry(shipped).agents);
    for (const name of Object.keys(overrides.npmScripts ?? {})) {
      assert.ok(overrides.npmScripts[name].length > 20, `${name}: say why its install scripts run`);
    }
    assert.equal(npmName('@agentclientprotocol/codex-acp@1.6.2'), '@agentclientprotocol/codex-acp');
    assert.equal(npmName('droid@0.215.0'), 'droid');
    assert.equal(npmName('droid'), 'droid');
  });
});

describe('sha256 of a download', () => {
  it('is checked against the registry\'s, else the recorded one, else unverified', () => {
    const hash = 'ab'.repeat(32);
    assert.deepEqual(checkSha256({ sha256: hash.toUpperCase() }, hash), { ok: true, against: 'registry', expected: hash });
    assert.deepEqual(checkSha256({ sha256: hash, recordedSha256: 'cd'.repeat(32) }, 'cd'.repeat(32)), { ok: false, against: 'registry', expected: hash });
    assert.deepEqual(checkSha256({ recordedSha256: hash }, hash), { ok: true, against: 'recorded', expected: hash });
    assert.deepEqual(checkSha256({ recordedSha256: hash }, 'ef'.repeat(32)), { ok: false, against: 'recorded', expected: hash });
    assert.deepEqual(checkSha256({}, hash), { ok: true });
  });
});
