// Binary agents: this platform's archive, downloaded with bounds (`LIMITS`), its sha256 checked against
// the registry's or the one our catalogue build recorded (`verified` says which, or that neither was
// there), unpacked only with Python's tar safety filter; the command must lie inside the install
// folder. No `vscode` import, so the unit tests run it in plain node.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BinaryTarget, CatalogueAgent, checkSha256, platformKey } from '../registry';
import { ISOLATED, run, SetupError } from '../../setup';
import { Installed, Installer, InstallOptions, LIMITS, inside, unpackedLimit } from './common';

const mebibytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const ARCHIVE = /\.(zip|tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz)$/i;

// Exit 3: this Python has no tar safety filter (before 3.11.4): we refuse rather than unpack without it.
// Exit 4: it is bigger than allowed (bytes or entries). Both are found before anything is written.
// Zip archives: zipfile itself drops `..` and absolute paths and makes no links.
const UNPACK = `
import sys, tarfile, zipfile
archive, target, max_bytes, max_entries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def refuse(code, why):
    sys.stderr.write(why + "\\n")
    sys.exit(code)
def check(sizes):
    total = count = 0
    for size in sizes:
        total, count = total + size, count + 1
        if count > max_entries:
            refuse(4, f"it has more than {max_entries:,} entries")
        if total > max_bytes:
            refuse(4, f"it unpacks to more than {max_bytes / 2**20:.1f} MiB")
if archive.lower().endswith(".zip"):
    with zipfile.ZipFile(archive) as z:
        check(i.file_size for i in z.infolist())
        z.extractall(target)
else:
    if not hasattr(tarfile, "data_filter"):
        refuse(3, f"Python {sys.version.split()[0]} has no tar extraction filter")
    with tarfile.open(archive) as t:
        check(m.size for m in t)
        t.extractall(target, filter="data")
`;

async function installArchive(agent: CatalogueAgent, target: BinaryTarget, building: string, folder: string, options: InstallOptions): Promise<Installed> {
  const file = path.basename(new URL(target.archive).pathname) || 'download';
  const download = path.join(building, `.download-${file}`);
  options.log.info(`downloading ${target.archive}`);
  let response: Response;
  try {
    response = await fetch(target.archive, { signal: AbortSignal.timeout(10 * 60_000) });
  } catch (error) {
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new SetupError(`Could not download ${agent.name} from ${target.archive}: ${reason}`, 'Connect to the network and add the agent again.');
  }
  if (!response.ok || !response.body) {
    throw new SetupError(`Could not download ${agent.name}: ${target.archive} answered ${response.status}`, 'Try again later, or report it to the catalogue\'s maintainers.');
  }
  const limits = options.limits ?? LIMITS;
  const tooBig = () => new SetupError(
    `The download of ${agent.name} (${target.archive}) is larger than ${mebibytes(limits.downloadBytes)}; it was not installed`,
    'Report this to the catalogue\'s maintainers.',
  );
  if (Number(response.headers.get('content-length') ?? 0) > limits.downloadBytes) {
    await response.body.cancel();
    throw tooBig();
  }
  // Counted as it arrives: a server may send more than it announced, or announce nothing.
  const hash = crypto.createHash('sha256');
  let downloaded = 0;
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  const counted = async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      downloaded += chunk.length;
      if (downloaded > limits.downloadBytes) {
        throw tooBig();
      }
      hash.update(chunk);
      yield chunk;
    }
  };
  await pipeline(body, counted, fs.createWriteStream(download, { mode: 0o600 }));
  const sha256 = hash.digest('hex');
  const checked = checkSha256(target, sha256);
  if (!checked.ok) {
    throw new SetupError(
      `The download of ${agent.name} does not match the catalogue: sha256 ${sha256}, expected ${checked.expected}${checked.against === 'recorded' ? ' (recorded when Symposium\'s catalogue was built)' : ''}`,
      'Do not use it; try again later, or report it to the catalogue\'s maintainers.',
    );
  }
  if (!checked.against) {
    options.log.warn(`${agent.name}: the catalogue gives no sha256 for ${target.archive}; installed unverified (sha256 ${sha256})`);
  }
  const cmd = path.join(building, target.cmd);
  if (!path.resolve(cmd).startsWith(path.resolve(building) + path.sep)) {
    throw new SetupError(`${agent.name}'s command ${target.cmd} is outside its folder`, 'Report this to the catalogue\'s maintainers.');
  }
  if (ARCHIVE.test(file)) {
    const python = await options.python();
    const most = unpackedLimit(downloaded, limits);
    // `-I`, in the storage: the working folder's `tarfile.py` or `shutil.py` is never what `-c` imports.
    const done = await run(python.path, [...ISOLATED, '-c', UNPACK, download, building, String(most), String(limits.entries)], { env: options.env, cwd: options.root });
    if (done.code === 3) {
      throw new SetupError(
        `Could not unpack ${file}: ${done.stderr.trim()}, and Symposium never unpacks without it`,
        `Set symposium.python to Python 3.11.4 or later (it has the filter), then add the agent again.`,
      );
    }
    if (done.code === 4) {
      throw new SetupError(
        `${agent.name}'s archive ${file} was not unpacked: ${done.stderr.trim()}, more than Symposium allows for a ${mebibytes(downloaded)} download`,
        'Report this to the catalogue\'s maintainers.',
      );
    }
    if (done.code !== 0) {
      throw new SetupError(`Could not unpack ${file}`, 'Try again; the download may be damaged.', done.stderr.trim());
    }
    fs.rmSync(download);
  } else {
    fs.mkdirSync(path.dirname(cmd), { recursive: true, mode: 0o700 });
    fs.renameSync(download, cmd); // the archive is the executable itself
  }
  if (!fs.existsSync(cmd)) {
    throw new SetupError(`${file} has no ${target.cmd}`, 'Report this to the catalogue\'s maintainers.');
  }
  if (!inside(fs.realpathSync(cmd), fs.realpathSync(building))) {
    throw new SetupError(`${agent.name}'s command ${target.cmd} leads outside its folder`, 'Report this to the catalogue\'s maintainers.');
  }
  fs.chmodSync(cmd, 0o755);
  return {
    source: target.archive,
    sha256,
    verified: checked.against ?? 'unverified',
    command: path.join(folder, path.relative(building, cmd)),
    args: target.args ?? [],
    env: target.env ?? {},
  };
}

export const binaryInstaller: Installer = {
  install: (agent, building, folder, options) => installArchive(agent, agent.distribution.binary![options.platform ?? platformKey()], building, folder, options),
  inPlace: false,
};
