// The version an install actually put on disk, read back from it: what Add Agent and Update Agent
// record, whatever the catalogue said (docs/usage.md, "The catalogue"). The catalogue already refuses
// an entry whose pin names another version (registry.ts); this holds when a package registry serves
// another version than asked, or a tarball or wheel holds one its name does not say. No `vscode`
// import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { InstallRecord } from './install';

/** What npm or pip installed (its package.json, its dist-info); undefined for a download, or when it cannot be read. */
export function installedVersion(record: Pick<InstallRecord, 'method' | 'folder' | 'command' | 'args'>): string | undefined {
  try {
    return record.method === 'npx' ? npmVersion(record) : record.method === 'uvx' ? pypiVersion(record) : undefined;
  } catch {
    return undefined;
  }
}

/** The version in the package.json of the package whose bin the record runs (`<folder>/node_modules/[@scope/]name/...`). */
function npmVersion(record: Pick<InstallRecord, 'folder' | 'args'>): string | undefined {
  const [modules, first, second] = path.relative(record.folder, record.args[0] ?? '').split(path.sep);
  if (modules !== 'node_modules' || !first) {
    return undefined;
  }
  const name = first.startsWith('@') ? path.join(first, second) : first;
  const manifest = JSON.parse(fs.readFileSync(path.join(record.folder, 'node_modules', name, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : undefined;
}

/** The version of the distribution whose console script the record runs, from its `*.dist-info/METADATA` in the venv. */
function pypiVersion(record: Pick<InstallRecord, 'folder' | 'command'>): string | undefined {
  const venv = path.join(record.folder, 'venv');
  const script = path.basename(record.command).replace(/\.exe$/i, '');
  const sites = fs.existsSync(path.join(venv, 'Lib', 'site-packages'))
    ? [path.join(venv, 'Lib', 'site-packages')]
    : fs.readdirSync(path.join(venv, 'lib')).map((python) => path.join(venv, 'lib', python, 'site-packages'));
  for (const site of sites) {
    for (const info of fs.readdirSync(site).filter((name) => name.endsWith('.dist-info'))) {
      const entryPoints = path.join(site, info, 'entry_points.txt');
      const scripts = fs.existsSync(entryPoints) ? fs.readFileSync(entryPoints, 'utf8').split(/\[console_scripts\]/)[1]?.split(/^\[/m)[0] ?? '' : '';
      if (!scripts.split(/\r?\n/).some((line) => line.split('=')[0].trim() === script)) {
        continue;
      }
      return /^Version:\s*(\S+)\s*$/m.exec(fs.readFileSync(path.join(site, info, 'METADATA'), 'utf8'))?.[1];
    }
  }
  return undefined;
}
