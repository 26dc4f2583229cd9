// The agent catalogue: the shipped copy, the registry's format, and refreshing from a registry on
// 127.0.0.1 that answers, fails, or does not answer.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installMethod, loadCatalogue, parseRegistry, platformKey, shown } from '../../agents/catalogue';
import { FileServer } from '../fixtures';

const SHIPPED = path.resolve(__dirname, '../../../catalogue/registry.json');
const agent = (id: string, distribution: object, extra: object = {}) => ({ id, name: id.toUpperCase(), version: '1.0.0', description: `the ${id} agent`, distribution, ...extra });
const TEST_REGISTRY = { version: '1.0.0', agents: [agent('only-here', { npx: { package: 'only-here@1.0.0' } })], extensions: [] };

describe('the catalogue shipped with the extension', () => {
  it('is a registry.json with the well-known agents, each installable here', () => {
    const { agents, problems } = parseRegistry(JSON.parse(fs.readFileSync(SHIPPED, 'utf8')));
    assert.deepEqual(problems, []);
    const ids = agents.map((a) => a.id);
    for (const id of ['claude-acp', 'codex-acp', 'gemini', 'fast-agent', 'opencode', 'goose']) {
      assert.ok(ids.includes(id), `${id} is missing`);
    }
    const byId = Object.fromEntries(agents.map((a) => [a.id, a]));
    assert.equal(byId['claude-acp'].distribution.npx?.package, '@agentclientprotocol/claude-agent-acp@0.100.0');
    assert.equal(installMethod(byId['claude-acp'], 'linux-x86_64'), 'npx');
    assert.equal(installMethod(byId['codex-acp'], 'linux-x86_64'), 'binary');
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

  it('falls back to the saved answer when the registry fails, saying why', async () => {
    server.routes.set('/registry.json', { status: 503, body: 'down' });
    const catalogue = await load(server.url('/registry.json'));
    assert.equal(catalogue.source, 'saved');
    assert.deepEqual(catalogue.agents.map((a) => a.id), ['only-here']);
    assert.match(catalogue.note ?? '', /503/);
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
