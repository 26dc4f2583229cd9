// What the install tests install and serve: the echo agent as a real npm tarball (`npm pack`), as a
// real wheel, and a small HTTP server on 127.0.0.1 for catalogues and archives.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { run } from '../setup';

export const FIXTURES = path.resolve(__dirname, '../../src/test/fixtures');

/** `npm pack` of the echo agent into `dest` (its package.json with `manifest` merged in); returns the tarball's path. */
export async function packEchoAgent(dest: string, manifest?: object): Promise<string> {
  let source = path.join(FIXTURES, 'echo-agent');
  if (manifest) {
    const copy = path.join(dest, 'echo-agent-source');
    fs.cpSync(source, copy, { recursive: true });
    const file = path.join(copy, 'package.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), ...manifest }, null, 2));
    source = copy;
  }
  fs.mkdirSync(dest, { recursive: true });
  const done = await run('npm', ['pack', '--silent', '--pack-destination', dest], { cwd: source });
  const file = done.stdout.trim().split(/\r?\n/).pop() ?? '';
  if (done.code !== 0 || !file || !fs.existsSync(path.join(dest, file))) {
    throw new Error(`npm pack failed: ${done.stderr}`);
  }
  return path.join(dest, file);
}

const b64 = (data: Buffer) => crypto.createHash('sha256').update(data).digest('base64url');

/** A wheel of the Python echo agent (console script `echo-py-agent`), written into `dest`. */
export async function buildEchoWheel(dest: string, python: string): Promise<string> {
  const info = 'echo_py_agent-1.0.0.dist-info';
  const files: Record<string, Buffer> = {
    'echo_py_agent.py': fs.readFileSync(path.join(FIXTURES, 'echo_py_agent.py')),
    [`${info}/METADATA`]: Buffer.from('Metadata-Version: 2.1\nName: echo-py-agent\nVersion: 1.0.0\nSummary: An ACP echo agent for tests\n'),
    [`${info}/WHEEL`]: Buffer.from('Wheel-Version: 1.0\nGenerator: symposium-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n'),
    [`${info}/entry_points.txt`]: Buffer.from('[console_scripts]\necho-py-agent = echo_py_agent:main\n'),
  };
  const record = [...Object.entries(files).map(([name, data]) => `${name},sha256=${b64(data)},${data.length}`), `${info}/RECORD,,`].join('\n') + '\n';
  files[`${info}/RECORD`] = Buffer.from(record);
  const staging = fs.mkdtempSync(path.join(dest, 'wheel-'));
  for (const [name, data] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(staging, name)), { recursive: true });
    fs.writeFileSync(path.join(staging, name), data);
  }
  const wheel = path.join(dest, 'echo_py_agent-1.0.0-py3-none-any.whl');
  const zip = 'import os, sys, zipfile\nwith zipfile.ZipFile(sys.argv[2], "w") as z:\n    for name in sys.argv[3:]:\n        z.write(os.path.join(sys.argv[1], name), name)\n';
  const done = await run(python, ['-c', zip, staging, wheel, ...Object.keys(files)]);
  if (done.code !== 0) {
    throw new Error(`could not zip the wheel: ${done.stderr}`);
  }
  return wheel;
}

export type Route = { status?: number; body?: Buffer | string; type?: string } | 'hang';

/** An HTTP server on 127.0.0.1 answering from `routes` (changeable while it runs); 404 otherwise. */
export class FileServer {
  readonly routes = new Map<string, Route>();
  readonly hits: string[] = [];
  private readonly server = http.createServer((req, res) => this.answer(req, res));
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async start(): Promise<this> {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  url(route: string): string {
    return `http://127.0.0.1:${this.port}${route}`;
  }

  async close(): Promise<void> {
    this.sockets.forEach((s) => s.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const route = (req.url ?? '/').split('?')[0];
    this.hits.push(route);
    const found = this.routes.get(route);
    if (found === 'hang') {
      return; // never answers; the client's timeout ends it
    }
    if (!found) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(found.status ?? 200, { 'content-type': found.type ?? 'application/octet-stream' }).end(found.body ?? '');
  }
}
